package console

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	"github.com/mcpbridge/mcpbridge/tool"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Access checks a token a viewer signs in with; *gatewayauth.Keeper is
// one. ErrNoIdentities from it means the console's own token is checked
// instead.
type Access interface {
	ConsoleViewer(ctx context.Context, token string) (gatewayauth.Viewer, error)
	AuditFile() string
}

// Options are what a Console reads. Only Status and Registry are
// required; the zero value of every other field is useful.
type Options struct {
	// Status is the host's view of its entries.
	Status func() []host.Status
	// Registry holds the tools the gateway serves.
	Registry *tool.Registry
	// Access signs viewers in by the gateway entry's identities and
	// console grants; nil means the console token only.
	Access Access
	// Token is the console's own token, accepted (with both grants) only
	// while the gateway configures no identities; "" accepts none.
	Token string
	// MCPURL returns the gateway's MCP endpoint, which tried tools are
	// called through ("" while it is not listening); nil disables trying
	// tools.
	MCPURL func() string
	// BearerToken is sent on tried calls of a viewer signed in with the
	// console token (serve's --token-env token); viewers signed in with a
	// token of their own send that one.
	BearerToken string
	// Manage restarts (ActionRestart) or reloads (ActionReload) the
	// entry of an id, for viewers with the manage grant; nil offers
	// neither.
	Manage func(ctx context.Context, entry, action string) error
	// Health, when set, is the gateway's health as /healthz reports it
	// (gateway.Gateway.Health): the servers page lists what it holds
	// beyond the host's entries (the store, a config file a reload
	// refused, a gateway entry not in force) and why calls are refused.
	Health func() gateway.Health
	// Sessions reports the gateway's client sessions open now.
	Sessions func() int
	// Traffic, when set, lists the calls in flight (see Tracker).
	Traffic *Tracker
	// Parked, when set, lists the calls parked for their clients'
	// answers, each with its context's value for key
	// (gateway.Gateway.ParkedCalls); the traffic page asks for FlightKey.
	Parked func(key any) []gateway.ParkedCall
	// Rates, when set, are the per-tool rates the traffic page charts
	// (see Rates).
	Rates *Rates
	// Logger receives the console's log lines; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Poll is how often the servers' live view checks for changes; 0
	// means 250 ms.
	Poll time.Duration
}

// Console serves the web console. Create it with New; it is an
// http.Handler for gateway.Options.Console. Safe for concurrent use.
type Console struct {
	opts    Options
	log     *slog.Logger
	now     func() time.Time
	pages   map[string]*template.Template
	static  http.Handler
	signins *signins
	mux     *http.ServeMux
	// chain is the audit trail's verification so far.
	chain chainCache
	// done ends the live streams when the console is closed.
	done     chan struct{}
	doneOnce sync.Once
}

// New returns a Console reading what o names.
func New(o Options) (*Console, error) {
	if o.Status == nil || o.Registry == nil {
		return nil, errors.New("console: Status and Registry are required")
	}
	c := &Console{opts: o, log: o.Logger, now: o.Now, done: make(chan struct{})}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.opts.Poll == 0 {
		c.opts.Poll = 250 * time.Millisecond
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c.pages = pages
	sub, _ := fs.Sub(staticFS, "static")
	c.static = http.StripPrefix(gateway.ConsolePath+"/static/", http.FileServer(http.FS(sub)))
	c.signins = newSignins(c.now)
	c.mux = c.routes()
	return c, nil
}

// Close ends the live streams open; pages are still served.
func (c *Console) Close() { c.doneOnce.Do(func() { close(c.done) }) }

// routes maps the console's paths (docs/decisions §7.2) to their pages.
func (c *Console) routes() *http.ServeMux {
	p := gateway.ConsolePath
	mux := http.NewServeMux()
	mux.Handle("GET "+p+"/static/", c.static)
	mux.HandleFunc("GET "+p+"/login", c.loginPage)
	mux.HandleFunc("POST "+p+"/login", c.login)
	mux.HandleFunc("POST "+p+"/logout", c.viewer(c.logout))
	mux.HandleFunc("GET "+p+"", c.viewer(c.serversPage))
	mux.HandleFunc("GET "+p+"/{$}", c.viewer(c.serversPage))
	mux.HandleFunc("GET "+p+"/servers/{name}", c.viewer(c.serverPage))
	mux.HandleFunc("POST "+p+"/servers/{name}/{action}", c.viewer(c.manage))
	mux.HandleFunc("GET "+p+"/events", c.viewer(c.events))
	mux.HandleFunc("GET "+p+"/tools", c.viewer(c.toolsPage))
	mux.HandleFunc("GET "+p+"/tools/{name}", c.viewer(c.toolPage))
	mux.HandleFunc("POST "+p+"/tools/{name}", c.viewer(c.tryTool))
	mux.HandleFunc("GET "+p+"/traffic", c.viewer(c.trafficPage))
	mux.HandleFunc("GET "+p+"/audit", c.viewer(c.auditPage))
	mux.HandleFunc("GET "+p+"/audit/export", c.viewer(c.auditExport))
	return mux
}

// csp allows the console's own files only: no inline script or style, no
// frames, forms posting back to the console only.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP serves the console's pages with its security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	// no-referrer would make forms send "Origin: null", which the
	// same-origin check cannot tell from a sandboxed frame.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}
