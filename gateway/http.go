package gateway

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/net/idna"

	"github.com/mcpbridge/mcpbridge/internal/loopback"
	"github.com/mcpbridge/mcpbridge/internal/redact"
)

// DefaultHTTPAddr is the address to serve Streamable HTTP on when the user
// names none: loopback only, so nothing off the machine can reach it.
const DefaultHTTPAddr = "127.0.0.1:7410"

// BackendState is one backend server's health as /healthz reports it.
type BackendState struct {
	// Name identifies the backend (its serverName).
	Name string `json:"name"`
	// State is the backend's connection state ("ready", "reconnecting", …).
	State string `json:"state"`
	// OK reports whether the backend serves calls now.
	OK bool `json:"ok"`
	// Tools is the number of tools the backend has registered.
	Tools int `json:"tools"`
	// Error is the last failure, if any; it must hold no secrets.
	Error string `json:"error,omitempty"`
}

// NewBackendState builds a health entry; URLs in errText lose their
// credentials and query (where API keys travel).
func NewBackendState(name, state string, ok bool, tools int, errText string) BackendState {
	return BackendState{Name: name, State: state, OK: ok, Tools: tools, Error: redact.URLs(errText)}
}

// Health is the JSON body of /healthz.
type Health struct {
	// OK is true when the gateway is open and ready, and every backend is
	// OK.
	OK bool `json:"ok"`
	// Ready is true once the backends' first start has settled
	// (Options.Ready) or the ready timeout passed, while the gateway
	// serves calls (Options.Refusing): what a readiness probe asks.
	Ready bool `json:"ready"`
	// Refusing is why the gateway serves no call now, if it serves none.
	Refusing string `json:"refusing,omitempty"`
	// Tools is the number of tools the gateway serves.
	Tools int `json:"tools"`
	// Backends are the backends' states, as Options.Health reported them.
	Backends []BackendState `json:"backends"`
}

// Health returns the gateway's health, as /healthz serves it.
func (g *Gateway) Health() Health {
	h := Health{Ready: g.isReady(), Tools: g.reg.Len(), Backends: []BackendState{}}
	if g.opts.Refusing != nil {
		h.Refusing = g.opts.Refusing()
		h.Ready = h.Ready && h.Refusing == ""
	}
	h.OK = h.Ready && !g.isClosed()
	if g.opts.Health != nil {
		if b := g.opts.Health(); b != nil {
			h.Backends = b
		}
	}
	if b, ok := g.configDrift(); ok {
		h.Backends = append(h.Backends, b)
	}
	for _, b := range h.Backends {
		h.OK = h.OK && b.OK
	}
	return h
}

// Handler returns the gateway's HTTP handler: Streamable HTTP MCP at /mcp
// (stateful sessions, so list_changed reaches clients on their GET stream;
// a 2026-07-28 request, and with Options.Stateless every one, without a
// session), the health report at /healthz (200
// when OK, else 503) and its probes /readyz and /livez (see Probes), and
// Options.Metrics at /metrics when set. Every request
// first passes the safety checks, in this order: 503 once the gateway is
// closed; 403 for a non-loopback Host on a loopback connection, or an
// Origin that is neither loopback nor in Options.AllowedOrigins (DNS
// rebinding); 401 without the configured bearer token (or when
// Options.Authenticate refuses); 404 for a session opened by another
// identity. All Handler values share the gateway's sessions.
func (g *Gateway) Handler() http.Handler {
	endpoint := g.streamBudget(g.screen(g.routeRequest(g.forwardSessions(g.bindSessions(http.HandlerFunc(g.serveMCP))))))
	mux := http.NewServeMux()
	mux.Handle("/mcp", endpoint)
	probes := g.Probes()
	for _, path := range []string{"/healthz", "/readyz", "/livez"} {
		mux.Handle(path, probes)
	}
	if g.opts.Metrics != nil {
		mux.Handle("/metrics", g.opts.Metrics)
	}
	return g.bodyDeadline(g.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every call comes to /mcp: matched here, it skips the mux's
		// pattern search (the mux still answers every other path, and
		// redirects an unclean one to /mcp).
		if r.URL.Path == "/mcp" {
			endpoint.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})))
}

// Sessions returns the number of client sessions open now, counting each
// request being served without a session (a 2026-07-28 request, or with
// Options.Stateless every one): it has a session of its own for its
// length, whichever path answers it.
func (g *Gateway) Sessions() int {
	n := 0
	for range g.server.Sessions() {
		n++
	}
	return n
}

// Probes returns the health handler alone, without the checks of Handler
// (for a listener of its own that only an orchestrator reaches). It serves
// the Health report as JSON at every path, with the status a probe asks:
// at /healthz 200 when Health.OK, at /readyz 200 once Health.Ready (the
// first start has settled, whatever the backends' states: one broken
// backend must not take every replica out of a load balancer; but not
// while the gateway refuses every call), at /livez
// 200 while the gateway is open; else 503.
func (g *Gateway) Probes() http.Handler { return http.HandlerFunc(g.serveHealth) }

func (g *Gateway) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: "+r.URL.Path+" answers GET", http.StatusMethodNotAllowed)
		return
	}
	h := g.Health()
	ok := h.OK
	switch r.URL.Path {
	case "/readyz":
		ok = h.Ready && !g.isClosed()
	case "/livez":
		ok = !g.isClosed()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	w.Write(append(mustJSON(h), '\n'))
}

// guard applies the safety checks of Handler before next.
func (g *Gateway) guard(next http.Handler) http.Handler {
	var tokenSum [sha256.Size]byte
	if g.opts.BearerToken != "" {
		tokenSum = sha256.Sum256([]byte(g.opts.BearerToken))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A POST carries calls; Close waits for it to be answered (the
		// SDK's session Close would drop the reply). answering, not g.mu,
		// says the gateway is closing: every POST passes here.
		post := r.Method == http.MethodPost
		if !g.answering.enter(post) {
			refuse(w, http.StatusServiceUnavailable, "Service Unavailable: the gateway is shutting down")
			return
		}
		if post {
			defer g.answering.done()
		}
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopbackAddr(local) && !loopback.Host(hostOnly(r.Host)) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("Forbidden: Host %q is not a loopback name (DNS rebinding protection)", r.Host))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			if !g.originAllowed(origin) {
				refuse(w, http.StatusForbidden, fmt.Sprintf("Forbidden: Origin %q is not allowed (DNS rebinding protection); allowed are loopback origins and the configured ones", origin))
				return
			}
			if g.originListed(origin) && cors(w, r, origin) {
				return
			}
		}
		if g.wellKnown(r) {
			g.opts.WellKnown.ServeHTTP(w, r)
			return
		}
		if g.console(r) {
			g.opts.Console.ServeHTTP(w, r)
			return
		}
		identity, err := g.authenticate(r, tokenSum)
		if err != nil {
			challenge(w, err)
			return
		}
		if !claim(r, identity) {
			w.Header().Set("Retry-After", "1")
			refuse(w, http.StatusTooManyRequests, fmt.Sprintf("Too Many Requests: %q has %d connections serving requests, the most one identity may; retry when one ends", identity, g.maxConnsPerIdentity()))
			return
		}
		next.ServeHTTP(w, r.WithContext(withIdentity(r, identity)))
	})
}

// errNoToken is why a request without the configured bearer token is
// refused.
var errNoToken = errors.New(`a valid "Authorization: Bearer <token>" header is required`)

// authenticate returns who r is from: Options.Authenticate's answer, else
// "bearer" for the holders of Options.BearerToken, else "" (no
// authentication); an error means 401.
func (g *Gateway) authenticate(r *http.Request, tokenSum [sha256.Size]byte) (string, error) {
	switch {
	case g.opts.Authenticate != nil:
		return g.opts.Authenticate(r)
	case g.opts.BearerToken == "":
		return "", nil
	}
	given, ok := bearer(r.Header.Get("Authorization"))
	sum := sha256.Sum256([]byte(given))
	// Comparing fixed-size digests keeps the time independent of where
	// the token differs and of its length.
	if !ok || subtle.ConstantTimeCompare(sum[:], tokenSum[:]) != 1 {
		return "", errNoToken
	}
	return "bearer", nil
}

// bearer returns the token of an "Authorization: Bearer <token>" value.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// originAllowed reports whether a browser Origin may use the gateway: a
// configured origin, or one whose host is loopback.
func (g *Gateway) originAllowed(origin string) bool {
	if g.originListed(origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopback.Host(u.Hostname())
}

// originListed reports whether origin is one Options.AllowedOrigins lists.
func (g *Gateway) originListed(origin string) bool {
	return slices.ContainsFunc(g.opts.AllowedOrigins, func(o string) bool {
		return strings.EqualFold(strings.TrimSuffix(o, "/"), origin)
	})
}

// originForm is the form of an origin Options.AllowedOrigins can hold.
const originForm = "scheme://host[:port] (https://app.example.com, http://tools.example:8080), exactly as a browser sends it in Origin"

// CheckAllowedOrigin reports why origin, meant for
// Options.AllowedOrigins, can never allow a browser: a value no Origin
// header can equal (Origin is exactly scheme://host[:port], without a
// path, a user, or the scheme's default port, and with its name in
// ASCII), or one that would allow any web page ("*", "null"), which
// would undo the DNS rebinding protection the Origin check is for. nil
// for a value it can match; a trailing slash is ignored.
func CheckAllowedOrigin(origin string) error {
	o := strings.TrimSuffix(origin, "/")
	if what := anyPage(o); what != "" {
		return fmt.Errorf("allowing %s would let any web page open in the user's browser use the gateway, which the Origin check exists to stop (DNS rebinding); list each origin allowed, in the form %s", what, originForm)
	}
	if strings.Contains(o, "*") {
		return fmt.Errorf("origins are compared exactly, so a wildcard matches none; list each origin allowed, in the form %s", originForm)
	}
	u, err := url.Parse(o)
	if err != nil || !strings.Contains(o, "://") || u.Scheme == "" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return fmt.Errorf("an origin takes the form %s", originForm)
	}
	if u.Path != "" {
		return fmt.Errorf("an origin has no path (%s): it takes the form %s", u.Path, originForm)
	}
	return checkOriginHost(u)
}

// anyPage names what o would allow when that is any web page: every
// origin, or "null", which sandboxed pages and local files send and any
// page can take; "" otherwise.
func anyPage(o string) string {
	switch {
	case o == "*":
		return "every origin"
	case strings.EqualFold(o, "null"):
		return `the origin "null" (sent by sandboxed pages and local files, which any page can make)`
	}
	return ""
}

// checkOriginHost reports why u's host and port can never be those of
// an Origin header.
func checkOriginHost(u *url.URL) error {
	port := u.Port()
	switch n, err := strconv.Atoi(port); {
	case strings.HasSuffix(u.Host, ":"):
		return fmt.Errorf("the port is empty: an origin takes the form %s", originForm)
	case port != "" && (err != nil || n < 1 || n > 65535):
		return fmt.Errorf("port %s is not a TCP port (1-65535): an origin takes the form %s", port, originForm)
	case port != "" && map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)] == port:
		return fmt.Errorf("browsers leave the default port out of Origin: write %s://%s", u.Scheme, strings.TrimSuffix(u.Host, ":"+port))
	}
	if !strings.ContainsFunc(u.Hostname(), func(r rune) bool { return r > unicode.MaxASCII }) {
		return nil
	}
	ascii, err := idna.Lookup.ToASCII(u.Hostname())
	if err != nil {
		return fmt.Errorf("%s is not a host name a browser can send: %v", u.Hostname(), err)
	}
	if port != "" {
		ascii += ":" + port
	}
	return fmt.Errorf("browsers send a name in its ASCII form in Origin: write %s://%s", u.Scheme, ascii)
}

// checkAllowedOrigins is CheckAllowedOrigin for every origin of opts.
func checkAllowedOrigins(opts Options) error {
	for _, o := range opts.AllowedOrigins {
		if err := CheckAllowedOrigin(o); err != nil {
			return fmt.Errorf("gateway: allowed origin %q: %w", o, err)
		}
	}
	return nil
}

// hostOnly strips the port of a host:port (or [v6]:port) value.
func hostOnly(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return strings.Trim(hostport, "[]")
}

// isLoopbackAddr reports whether a listener's address is loopback, as
// loopback.Host reads its string, without formatting a TCP one.
func isLoopbackAddr(addr net.Addr) bool {
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.Zone == "" {
		return tcp.IP.IsLoopback()
	}
	return loopback.Host(hostOnly(addr.String()))
}

// ErrNotLoopback is why Listen refuses a network-reachable address without
// a token.
var ErrNotLoopback = errors.New("it is not a loopback address")

// Listen opens a TCP listener on addr for Streamable HTTP. It refuses an
// address that is not loopback (including an empty host, which means every
// interface) unless opts.BearerToken or opts.Authenticate is set, or
// opts.InsecureAllowNonLoopback is true, so the gateway is never reachable
// from the network by accident, and an allowed origin that can never
// allow a browser (CheckAllowedOrigin).
func Listen(addr string, opts Options) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("gateway: listen address %q is not host:port: %w", addr, err)
	}
	if !loopback.Host(host) && opts.BearerToken == "" && opts.Authenticate == nil && !opts.InsecureAllowNonLoopback {
		return nil, fmt.Errorf("gateway: refusing to listen on %q: %w and no bearer token is configured; configure a token, or explicitly allow an unauthenticated network-reachable gateway (insecure)", addr, ErrNotLoopback)
	}
	if err := checkAllowedOrigins(opts); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("gateway: listening on %q: %w", addr, err)
	}
	return ln, nil
}

// ServeListener serves Handler on ln until ctx is done or the gateway is
// closed, then shuts down within Options.ShutdownTimeout: it closes the
// gateway (in-flight calls answered as cancelled, every session closed,
// which ends the SSE streams), waits for the HTTP requests still running,
// and drops the connections left (idle ones, and new ones that never sent a
// request, which http.Server.Shutdown would wait for). It closes ln and
// returns nil after a clean shutdown. Besides Handler's checks, it bounds
// connections as Options.MaxConnections and MaxConnsPerAddr say (accept
// never blocks), and headers to HeaderTimeout and 64 KiB: Handler alone,
// on a server of the caller's, has neither.
func (g *Gateway) ServeListener(ctx context.Context, ln net.Listener) error {
	srv, gate := g.edgeServer(ln, g.Handler())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(gate) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case <-g.done:
	case serveErr = <-served:
		served = nil
	}
	deadline := time.Now().Add(g.timeout)
	closeErr := g.Close()
	var dropErr error
	if left := gate.inRequest.wait(deadline); left > 0 { // untested: needs a non-MCP request that outlives the timeout (TestShutdownWaitsForRunningRequest has one that ends within it)
		dropErr = fmt.Errorf("gateway: %d HTTP request(s) still running after the shutdown timeout (%v), dropped", left, g.timeout)
	}
	srv.Close()
	if served != nil {
		serveErr = <-served
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	if serveErr != nil {
		serveErr = fmt.Errorf("gateway: serving HTTP on %s: %w", ln.Addr(), serveErr)
	}
	return errors.Join(serveErr, closeErr, dropErr)
}

// edgeServer is an http.Server for h with the edge's bounds, and the
// listener to serve it on: connections bounded without blocking accept (a
// flood of connections that send nothing is shed, see connGate), headers
// bounded in time and size.
func (g *Gateway) edgeServer(ln net.Listener, h http.Handler) (*http.Server, *connGate) {
	gate := newConnGate(ln, g.maxConns(), g.maxConnsPerAddr(), g.maxConnsPerIdentity(), g.log)
	// The headers' time limit (from accept or a keep-alive request's first
	// byte), the body's and the idle one are the gate's clock's, not
	// net/http's read deadlines (edgeclock.go says why).
	gate.startClock(newEdgeTimes(cmp.Or(g.opts.HeaderTimeout, DefaultHeaderTimeout), cmp.Or(g.opts.BodyTimeout, DefaultBodyTimeout)))
	srv := &http.Server{
		Handler:        gate.serving(h),
		ConnContext:    gate.connContext,
		MaxHeaderBytes: maxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(g.log.Handler(), slog.LevelWarn),
		ConnState:      gate.track,
	}
	return srv, gate
}

// ServeReadOnly serves h on ln, for GET and HEAD requests only, behind the
// same edge as ServeListener (connections bounded, shedding silent ones;
// headers bounded in time and size), until ctx is done, the gateway closed
// or not; then it closes ln and every connection and returns nil. Any
// other method is refused with 405 and its connection closed at once, so a
// body declared and never sent holds nothing. It is for listeners of their
// own next to the gateway's, such as serve's --metrics-addr (metrics and
// probes), which never read a body. It does not close the gateway.
func (g *Gateway) ServeReadOnly(ctx context.Context, ln net.Listener, h http.Handler) error {
	readOnly := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			refuse(w, http.StatusMethodNotAllowed, "Method Not Allowed: this listener serves GET and HEAD")
			return
		}
		h.ServeHTTP(w, r)
	})
	srv, gated := g.edgeServer(ln, readOnly)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(gated) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
		served = nil
	}
	srv.Close()
	if served != nil {
		err = <-served
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("gateway: serving HTTP on %s: %w", ln.Addr(), err)
}
