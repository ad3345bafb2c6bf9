package gatewayrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	webconsole "github.com/mcpbridge/mcpbridge/internal/console"
)

// ConsoleTokenVar holds the console's token (Config.ConsoleToken), used
// when the gateway entry configures no identities; without it the run
// makes one and prints it. It is never a child's business.
const ConsoleTokenVar = "MCPBRIDGE_CONSOLE_TOKEN"

// serveConsole is the console's part of a run: the console, the
// Tracker in front of the Gate that lists the calls in flight, the Rates
// in front of the metrics' Observer that the traffic page charts, and the
// address tried tools are called through once serve listens.
type serveConsole struct {
	con     *webconsole.Console
	tracker *webconsole.Tracker
	token   string // printed when made here; "" when from Config.ConsoleToken
	address atomic.Pointer[string]
}

// withConsole adds the console to opts when it is on. Its
// viewers sign in with a gateway identity's token that the gateway
// entry's console grants, or, when it configures none, the console token.
func (r *serveRun) withConsole(opts gateway.Options, cat *host.Catalog) (gateway.Options, error) {
	if !r.cfg.Console {
		return opts, nil
	}
	sc := &serveConsole{}
	token := r.cfg.ConsoleToken
	switch {
	case r.cfg.identitiesSignIn:
		// The console token would not sign in: none, rather than one
		// printed that does not work.
		token = ""
	case token == "":
		b := make([]byte, 24)
		rand.Read(b)
		token = hex.EncodeToString(b)
		sc.token = token
	}
	tracker := webconsole.NewTracker(opts.Gate, nil)
	rates := webconsole.NewRates(opts.Observer, nil)
	con, err := webconsole.New(webconsole.Options{
		Status: r.h.Status, Registry: r.reg, Access: r.keeper, Token: token, BearerToken: opts.BearerToken,
		Sessions: func() int { return r.gw.Sessions() }, Health: func() gateway.Health { return r.gw.Health() },
		Traffic: tracker, Rates: rates, Logger: r.log,
		Manage: func(ctx context.Context, id, action string) error { return r.manage(ctx, cat, id, action) },
		Parked: func(key any) []gateway.ParkedCall { return r.gw.ParkedCalls(key) },
		MCPURL: func() string {
			if a := sc.address.Load(); a != nil {
				return "http://" + *a + "/mcp"
			}
			return ""
		},
	})
	if err != nil {
		return opts, err
	}
	sc.con, sc.tracker = con, tracker
	r.console = sc
	opts.Gate, opts.Console, opts.Observer = tracker, con, rates
	return opts, nil
}

// consoleCalls lets the console's Tracker see which calls run as tasks
// (their running context names the task), before opts' own CallContext.
func (r *serveRun) consoleCalls(opts gateway.Options) gateway.Options {
	if r.console != nil {
		opts.CallContext = r.console.tracker.CallContext(opts.CallContext)
	}
	return opts
}

// planHasConsole reports whether plan's gateway entry has a console
// block, which turns the console on as Config.Console does (over HTTP).
func planHasConsole(plan *host.Plan) bool {
	cfg := planGateway(plan)
	return cfg != nil && cfg.Console != nil
}

// dialable is addr as this host reaches it: a listener on every address
// (0.0.0.0, or [::], which Go listens on for both families) is reached on
// 127.0.0.1, a name the gateway's Host check accepts, where the
// unspecified address is none it would.
func dialable(addr net.Addr) string {
	if t, ok := addr.(*net.TCPAddr); ok && t.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(t.Port))
	}
	return addr.String()
}

// announceConsole says where the console is, and the console token when
// serve made it (the operator has no other way to learn it), or, while
// identities sign in, that they do.
func (r *serveRun) announceConsole(addr net.Addr) {
	if r.console == nil {
		return
	}
	a := dialable(addr)
	r.console.address.Store(&a)
	url := fmt.Sprintf("http://%s%s", a, gateway.ConsolePath)
	switch {
	case r.cfg.identitiesSignIn:
		r.log.Info("serving the console: sign in with the token of an identity the gateway entry's console grants", "url", url)
		return
	case r.console.token == "":
		r.log.Info("serving the console", "url", url)
		return
	}
	fmt.Fprintf(r.cfg.Stderr, "mcpbridge: console on %s (sign in with a granted identity's token, or, while the config names no identities, the console token %s; set %s to choose it)\n", url, r.console.token, ConsoleTokenVar)
}

// manage is the console's restart or reload of the entry of id: a restart
// starts it again as it runs; a reload re-reads the config files, as a
// change of one does (reread: a gateway entry they name is required
// before anything of them applies), and applies that entry's config from
// them alone.
func (r *serveRun) manage(ctx context.Context, cat *host.Catalog, id, action string) error {
	if action == webconsole.ActionRestart {
		return r.h.Restart(ctx, id)
	}
	if len(r.cfg.Files()) == 0 {
		return errors.New("serve runs the embedded default config: there is no file to reload (restart the entry instead)")
	}
	plan, err := reread(r.cfg, cat, r.keeper)
	if err != nil {
		return fmt.Errorf("reading the config: %w", err)
	}
	return r.h.ApplyEntry(ctx, plan, id)
}
