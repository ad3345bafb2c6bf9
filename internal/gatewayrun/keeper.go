package gatewayrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	gatewaykind "github.com/mcpbridge/mcpbridge/internal/kinds/gateway"
	"github.com/mcpbridge/mcpbridge/internal/metrics"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// keeperLinks reach the run's gateway and metrics, made after the Keeper.
type keeperLinks struct {
	gw atomic.Pointer[gateway.Gateway]
	// refused counts refusals in /metrics once the run has metrics.
	refused atomic.Pointer[func(string)]
	// metrics counts the store's calls and fallbacks once the run has
	// metrics.
	metrics atomic.Pointer[metrics.Metrics]
}

// newKeeper makes the run's Keeper: who calls (the gateway entry's auth,
// plus the bearer token of cfg.Gateway as the identity "bearer"), may
// they, and the audit trail.
func newKeeper(cfg Config, links *keeperLinks) *gatewayauth.Keeper {
	stdout := cfg.Stdout
	if cfg.Stdio {
		// The protocol's: a trail there would put lines among the client's
		// messages. requireGateway refuses "-" at start; a reload to it
		// fails every line, and so every call (fail closed).
		stdout = protocolStdout{}
	}
	return gatewayauth.NewKeeper(gatewayauth.Options{
		Logger:      cfg.Logger,
		Stdout:      stdout,
		BearerToken: cfg.Gateway.BearerToken,
		Stdio:       cfg.Stdio,
		Builtin:     BuiltinTools(),
		Listed:      listedTools(cfg),
		Refused: func(reason string) {
			if f := links.refused.Load(); f != nil {
				(*f)(reason)
			}
		},
		StoreObserve: func(op string, err error) {
			if m := links.metrics.Load(); m != nil {
				m.StoreCall(op, err)
			}
		},
		StoreFallback: func() {
			if m := links.metrics.Load(); m != nil {
				m.StoreFallback()
			}
		},
		Changed: func() {
			if gw := links.gw.Load(); gw != nil {
				gw.Rescreen()
			}
		},
	})
}

// withKeeper makes the Keeper the gateway's Gate (the gateway is not
// ready while it refuses every call) and, over HTTP when a token is
// required (--token-env, or the config's gateway entry has auth), its
// Authenticate, and a reload that removes auth is refused
// (RequireRequestAuth). Without either the gateway stays open to loopback
// clients as before, Listen keeps refusing a network address, and a
// reload that adds auth is refused (NoRequestAuth): either needs a
// restart.
func withKeeper(opts gateway.Options, k *gatewayauth.Keeper, plan *host.Plan, stdio bool) gateway.Options {
	opts.Gate = k
	opts.Refusing = k.Refusing
	opts.WellKnown = k.WellKnown()
	switch {
	case opts.BearerToken != "" || planHasAuth(plan):
		opts.Authenticate = k.Authenticate
		if !stdio {
			k.RequireRequestAuth()
		}
	case !stdio:
		k.NoRequestAuth()
	}
	return opts
}

// BuiltinTools are the names of the gateway's own tools, which a policy
// names as they are (they have no mcp__ prefix): tool search's and code
// mode's.
func BuiltinTools() []string {
	return append([]string{toolview.SearchName}, codeToolNames...)
}

// requireGateway makes the run fail closed when plan has a gateway entry:
// a disabled or invalid one stops serve before anything starts, with its
// positioned error, and a valid one makes the Keeper refuse every call
// until it is applied (Keeper.Require).
func requireGateway(k *gatewayauth.Keeper, plan *host.Plan, stdio bool) error {
	for _, pe := range plan.Entries {
		if !meantAsGateway(pe) {
			continue
		}
		if pe.Entry.Disabled {
			return &GatewayEntryError{disabledGateway(pe)}
		}
		if pe.Err != nil {
			return &GatewayEntryError{pe.Err}
		}
		if cfg, ok := pe.Spec.Config.(gatewayauth.Config); ok && stdio && cfg.Audit != nil && cfg.Audit.File == "-" {
			// stdout is the protocol's: the trail's lines would reach the
			// client among its messages.
			return &GatewayEntryError{fmt.Errorf(`%s:%d: entry %q: config.audit.file: "-" writes the trail on stdout, which serve --stdio speaks MCP on: name a file (or serve --http)`,
				pe.Entry.File, pe.Entry.Line, pe.Entry.ID)}
		}
		k.Require()
	}
	return nil
}

// disabledGateway is why serve does not start with a gateway entry that
// has disabled: true: run as written, every call would go unguarded.
func disabledGateway(pe host.PlanEntry) error {
	return fmt.Errorf("%s:%d: entry %q is disabled (disabled: true), and serve does not run without its guards while the entry is in the config: "+
		"enable it (remove disabled: true), or remove the entry to serve without identity, policy or audit",
		pe.Entry.File, pe.Entry.Line, pe.Entry.ID)
}

// reread reads the config files again for a reload, and tells the Keeper
// whether they have a gateway entry before the host applies them
// (expectGateway).
func reread(cfg Config, cat *host.Catalog, k *gatewayauth.Keeper) (*host.Plan, error) {
	plan, err := cfg.Reload(cat)
	if err == nil {
		expectGateway(k, plan, cfg.Logger)
	}
	return plan, err
}

// expectGateway makes a reload fail closed as serve's start does: a plan
// with a gateway entry, disabled or not, requires it before anything of
// the plan starts (a disabled one leaves the gateway serving no call),
// so an entry that does not load (a misspelt key, an audit file that
// cannot be opened) leaves the gateway serving no call rather than every
// call, until a reload brings one that loads. A plan without one lifts
// that while no entry was ever applied (serve runs as it started,
// unguarded); once one was, the gateway serves no call until one is back
// (Keeper.Clear). Either removal is warned of: it turns a guard off.
func expectGateway(k *gatewayauth.Keeper, plan *host.Plan, log *slog.Logger) {
	if i := slices.IndexFunc(plan.Entries, meantAsGateway); i >= 0 {
		requireEntry(k, plan.Entries[i], log)
		return
	}
	switch {
	case k.Current() != nil:
		k.RequireUnloaded(entryRemoved)
		log.Warn("gateway entry removed by the reload: until one is back the gateway serves no call; restart serve to run without one")
	case k.Unrequire():
		log.Warn("gateway entry removed by the reload before it ever loaded: serve runs without one, as it started, every call unguarded")
	case k.Required():
		k.RequireUnloaded(entryRemoved)
	}
}

// Why a gateway entry will not load as the config has it, for the
// refusals while none is in force.
const (
	entryDisabled = "it is disabled (disabled: true): enable it, or remove it and restart serve to run without one"
	entryInvalid  = "it is invalid: serve's log and /healthz say where"
	entryRemoved  = "a reload removed it: add it back, or restart serve to run without one"
)

// requireEntry makes the Keeper require the gateway entry pe of a
// reload, saying why when it will not load as written.
func requireEntry(k *gatewayauth.Keeper, pe host.PlanEntry, log *slog.Logger) {
	switch {
	case pe.Entry.Disabled:
		k.RequireUnloaded(entryDisabled)
		log.Warn("gateway entry disabled by the reload: the gateway serves no call until it is enabled again; remove the entry and restart serve to run without one",
			"entry", pe.Entry.ID, "at", fmt.Sprintf("%s:%d", pe.Entry.File, pe.Entry.Line))
	case pe.Err != nil:
		k.RequireUnloaded(entryInvalid)
	default:
		k.Require()
	}
}

// meantAsGateway reports whether pe is a gateway entry, or an invalid
// entry whose kind is a misspelling of it (name: gatway): failing alone as
// an unknown kind, as entries do, it would leave serve unguarded.
func meantAsGateway(pe host.PlanEntry) bool {
	return pe.Entry.Name == gatewaykind.Name ||
		pe.Err != nil && yamlconf.Suggest(pe.Entry.Name, []string{gatewaykind.Name}) == gatewaykind.Name
}

// gatewayNotApplied is why serve stops after its first apply: the gateway
// entry it requires did not start (an audit file that cannot be opened,
// an issuer that cannot be discovered). nil when it did, or when there is
// none.
func gatewayNotApplied(k *gatewayauth.Keeper, plan *host.Plan, statuses []host.Status) error {
	if k.Current() != nil {
		return nil
	}
	for _, pe := range plan.Enabled() {
		if pe.Entry.Name != gatewaykind.Name {
			continue
		}
		why := "it did not start"
		for _, st := range statuses {
			if st.ID == pe.Entry.ID && st.Err != "" {
				why = st.Err
			}
		}
		return fmt.Errorf("serve: %s:%d: gateway entry %q could not be applied, so serve stops rather than serve calls unguarded: %s",
			pe.Entry.File, pe.Entry.Line, pe.Entry.ID, why)
	}
	return nil
}

// planGateway is the config of plan's gateway entry, nil without one
// (or when it is invalid or disabled).
func planGateway(plan *host.Plan) *gatewayauth.Config {
	for _, pe := range plan.Enabled() {
		if cfg, ok := pe.Spec.Config.(gatewayauth.Config); ok {
			return &cfg
		}
	}
	return nil
}

// planHasAuth reports whether plan's gateway entry asks for tokens.
func planHasAuth(plan *host.Plan) bool {
	cfg := planGateway(plan)
	return cfg != nil && (cfg.Auth.JWT() || len(cfg.Auth.Tokens) > 0)
}

// link points the Keeper's hooks at the run's gateway, registry and
// metrics.
func (r *serveRun) link(links *keeperLinks) {
	links.gw.Store(r.gw)
	if r.metrics != nil {
		f := r.metrics.Refused
		links.refused.Store(&f)
		links.metrics.Store(r.metrics)
	}
}

// storeState is /healthz's entry for the gateway entry's store, nil
// without one: "ready" when it answers a ping now, "degraded" when not
// (calls are still served; see docs/operations.md).
func storeState(ctx context.Context, k *gatewayauth.Keeper) *gateway.BackendState {
	if k == nil {
		return nil
	}
	addr, err, ok := k.StoreHealth(ctx)
	if !ok {
		return nil
	}
	state, errText := "ready", ""
	if err != nil {
		state, errText = "degraded", err.Error()
	}
	b := gateway.NewBackendState("store (redis "+addr+")", state, err == nil, 0, errText)
	return &b
}

// protocolStdout stands for stdout over --stdio, where no audit line may go.
type protocolStdout struct{}

func (protocolStdout) Write([]byte) (int, error) {
	return 0, errors.New(`stdout carries MCP over serve --stdio: name an audit file, not "-"`)
}
