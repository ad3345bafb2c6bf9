// Package sampling is the sampling entry kind (`name: sampling`): its
// config (package sampling's Config) starts an entry of a
// sampling.Provider, which answers servers' sampling requests. The model
// entry (internal/kinds/model) is the same kind under another name. Like
// every entry kind (internal/kinds), it is the adapter between the host
// and its library, so internal/sampling stands without the host.
package sampling

import (
	"context"
	"errors"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
)

// Name is the entry name of the sampling kind.
const Name = sampling.KindName

// KindOptions configure the kind.
type KindOptions struct {
	// Provider is where started entries go; required.
	Provider *sampling.Provider
	// Options are how the entries reach their endpoints.
	sampling.Options
}

// Kind is the sampling or the model entry kind for a host.Catalog.
type Kind struct {
	opts KindOptions
	name string
}

// NewKind returns the sampling kind (`name: sampling`).
func NewKind(opts KindOptions) *Kind { return Named(sampling.KindName, opts) }

// Named returns the kind under name, sampling.KindName or
// sampling.ModelKind (the model kind: the same config plus strict).
func Named(name string, opts KindOptions) *Kind { return &Kind{opts: opts, name: name} }

// Name returns the entry name the kind selects.
func (k *Kind) Name() string { return k.name }

// Decode reads an entry's config. The entry claims its kind's name, so a
// file holds one of each.
func (k *Kind) Decode(n *yaml.Node, lookup func(string) (string, bool)) (host.Spec, error) {
	cfg, err := sampling.Decode(n, lookup, k.name)
	if err != nil {
		return host.Spec{}, err
	}
	return Spec(k.name, cfg), nil
}

// CredentialVars are the variables an entry's config as written names as
// holding a credential (sampling.CredentialRefs): host.CredentialNamer.
func (k *Kind) CredentialVars(n *yaml.Node) []string { return sampling.CredentialRefs(n) }

// Spec is the spec of an entry of kind name with cfg, as Decode makes it.
func Spec(name string, cfg sampling.Config) host.Spec {
	return host.Spec{
		Config:  cfg,
		Name:    name,
		Summary: "chat-completions " + cfg.Model,
		Claims:  []host.Claim{{Key: "name", Value: name}},
	}
}

// Start makes the entry the provider's; it is ready at once (nothing is
// contacted until a server asks).
func (k *Kind) Start(_ context.Context, spec host.Spec, env host.Env) (host.Instance, error) {
	cfg, ok := spec.Config.(sampling.Config)
	if !ok {
		return nil, errors.New("sampling: the spec was not decoded by this kind")
	}
	ready := make(chan struct{})
	close(ready)
	return &instance{entry: k.opts.Provider.Start(k.name, cfg, k.opts.Options, env.Logger), ready: ready}, nil
}

// instance is one running entry.
type instance struct {
	entry *sampling.Entry
	ready chan struct{}
}

func (in *instance) Ready() <-chan struct{} { return in.ready }
func (in *instance) StartErr() error        { return nil }

// Status shows the model that answers.
func (in *instance) Status() host.Status {
	st := host.Status{State: host.StateReady, Name: in.entry.Kind(), Transport: "chat-completions", PeerName: in.entry.Model()}
	if in.entry.Closed() {
		st.State = host.StateClosed
	}
	return st
}

func (in *instance) Close() error {
	in.entry.Close()
	return nil
}

var _ host.Kind = (*Kind)(nil)
