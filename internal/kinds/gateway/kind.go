// Package gateway is the gateway entry kind: serve's identity, policy,
// rate limits, store and audit (package gatewayauth) read from a config
// file's `name: gateway` entry and applied to serve's gatewayauth.Keeper
// on every reload. Like every entry kind (internal/kinds), it is the
// adapter between the host and its library, so gatewayauth stands
// without the host.
package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
)

// Name is the entry name of the gateway kind.
const Name = "gateway"

// Kind is the gateway entry kind: one per file (it claims the name
// gateway), validated with the file like every entry, hot-reloaded. Its
// instance applies the config to the Keeper of a serve run; for other
// commands (nil Keeper) it does nothing.
type Kind struct {
	keeper *gatewayauth.Keeper
	key    []byte // keys the tokens' fingerprint, per process
}

// NewKind returns the kind; keeper is nil for commands that do not serve.
func NewKind(keeper *gatewayauth.Keeper) *Kind {
	k := &Kind{keeper: keeper, key: make([]byte, 32)}
	rand.Read(k.key)
	return k
}

// Name implements host.Kind.
func (k *Kind) Name() string { return Name }

// CredentialVars implements host.CredentialNamer
// (gatewayauth.CredentialRefs).
func (k *Kind) CredentialVars(n *yaml.Node) []string { return gatewayauth.CredentialRefs(n) }

// Decode implements host.Kind.
func (k *Kind) Decode(n *yaml.Node, lookup func(string) (string, bool)) (host.Spec, error) {
	cfg, err := gatewayauth.Decode(n, lookup)
	var unset []string
	if err != nil && k.keeper == nil {
		cfg, unset, err = decodeUnset(n, lookup, err)
	}
	if err != nil {
		return host.Spec{}, err
	}
	cfg.Auth.Fingerprint = k.fingerprint(cfg.Auth.TokenValues)
	if cfg.Store != nil {
		cfg.Store.Fingerprint = k.fingerprint(storeSecrets(*cfg.Store))
	}
	summary := "no auth"
	switch {
	case cfg.Auth.JWT():
		summary = "oauth " + cfg.Auth.Issuer
	case len(cfg.Auth.Tokens) > 0:
		summary = "static tokens"
	}
	if len(unset) > 0 {
		summary += "; variables unset here, which serve needs: " + strings.Join(unset, ", ")
	}
	return host.Spec{Config: cfg, Name: Name, Summary: summary, Claims: []host.Claim{{Key: "name", Value: Name}}}, nil
}

// decodeUnset decodes n again, for a command other than serve, with each
// unset or empty variable standing in as set: only serve uses their
// values, which the serve host alone may hold. It returns the config and
// those variables' names when that decodes, and first (the error with the
// variables as they are) when it does not.
func decodeUnset(n *yaml.Node, lookup func(string) (string, bool), first error) (gatewayauth.Config, []string, error) {
	var unset []string
	cfg, err := gatewayauth.Decode(n, func(name string) (string, bool) {
		if lookup != nil {
			if v, ok := lookup(name); ok && v != "" {
				return v, true
			}
		}
		if !slices.Contains(unset, name) {
			unset = append(unset, name)
		}
		return "unset", true
	})
	if err != nil {
		return gatewayauth.Config{}, nil, first
	}
	slices.Sort(unset)
	return cfg, unset, nil
}

// Start implements host.Kind: the config is applied before Start returns,
// so a config that cannot be (an issuer that cannot be discovered, an
// audit file that cannot be opened) fails the entry and the old config
// keeps serving.
func (k *Kind) Start(lifetime context.Context, spec host.Spec, env host.Env) (host.Instance, error) {
	in := &instance{keeper: k.keeper, ready: make(chan struct{})}
	close(in.ready)
	if k.keeper == nil {
		return in, nil
	}
	if err := k.keeper.Apply(lifetime, spec.Config.(gatewayauth.Config), env.Registry); err != nil {
		if k.keeper.Current() != nil {
			env.Logger.Error("gateway entry not applied; the previous one stays", "error", err)
		}
		return nil, err
	}
	in.cfg = k.keeper.Current()
	return in, nil
}

type instance struct {
	keeper *gatewayauth.Keeper
	cfg    *gatewayauth.Config
	ready  chan struct{}
}

func (in *instance) Ready() <-chan struct{} { return in.ready }
func (in *instance) StartErr() error        { return nil }

// Status is ready while the instance's config is in force. Once none is
// (cleared under it), the Keeper refuses every call: the instance says so
// as failed, so health is not OK and a reload starts it again.
func (in *instance) Status() host.Status {
	st := host.Status{State: host.StateReady, Name: Name, Transport: "builtin"}
	if in.cfg != nil && in.keeper.Current() == nil {
		st.State, st.Err = host.StateFailed, errNotInForce
	}
	return st
}

// errNotInForce is why an instance whose config was cleared fails.
const errNotInForce = "the gateway entry's config is no longer in force, so every call is refused: reload the config or restart the entry to apply it again"

// Close removes the config unless a successor replaced it.
func (in *instance) Close() error {
	if in.keeper != nil && in.cfg != nil {
		in.keeper.Clear(in.cfg)
	}
	return nil
}

// fingerprint is an HMAC of named secrets (the static tokens, the
// store's URL), "" without any.
func (k *Kind) fingerprint(tokens map[string]string) string {
	if len(tokens) == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(tokens))
	mac := hmac.New(sha256.New, k.key)
	for _, n := range names {
		mac.Write([]byte(n + "\x00" + tokens[n] + "\x00"))
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// storeSecrets is what a store's fingerprint covers that its encoding
// does not show: the URL (its password) and the CA's bytes.
func storeSecrets(s gatewayauth.Store) map[string]string {
	m := map[string]string{"url": s.URL}
	if s.TLS != nil {
		m["ca"] = string(s.TLS.CA)
	}
	return m
}
