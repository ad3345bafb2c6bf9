package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// serveHTTP serves g on a loopback port until the end of the test and
// returns the base URL (http://127.0.0.1:PORT).
func serveHTTP(t *testing.T, g *Gateway, opts Options) string {
	t.Helper()
	base, stop := startHTTP(t, g, opts)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("ServeListener: %v", err)
		}
	})
	return base
}

// startHTTP serves g on a loopback listener until stop, which returns
// what ServeListener returned.
func startHTTP(t *testing.T, g *Gateway, opts Options) (base string, stop func() error) {
	t.Helper()
	ln, err := Listen("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.ServeListener(ctx, ln) }()
	return "http://" + ln.Addr().String(), func() error {
		cancel()
		return <-served
	}
}

// connectHTTP connects a go-sdk client to url+"/mcp" over Streamable HTTP.
func connectHTTP(t *testing.T, base string, hc *http.Client) *client {
	t.Helper()
	c := &client{}
	// 2025-11-25: the protocol with sessions (a newer client is served
	// per request, see TestDefaultEndpointServesBothProtocols).
	cs, err := newSDKClient(c).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting over HTTP: %v", err)
	}
	c.session = cs
	t.Cleanup(func() { cs.Close() })
	return c
}

func TestHTTPEndToEnd(t *testing.T) {
	_, g, bs := twoBackends(t, Options{})
	base := serveHTTP(t, g, Options{})
	c := connectHTTP(t, base, nil)

	if diff := cmp.Diff(publicNames([]string{"a", "b"}, mcppeer.FixtureTools()), c.names(t)); diff != "" {
		t.Fatalf("tools over HTTP (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Hello, HTTP!"}, texts(c.call(t, "mcp__b__greet", `{"name":"HTTP"}`))); diff != "" {
		t.Errorf("greet (-want +got):\n%s", diff)
	}
	if res := c.call(t, "mcp__a__fail", `{}`); !res.IsError {
		t.Error("isError lost over HTTP")
	}

	// Progress and cancellation over HTTP.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := &mcp.CallToolParams{Name: "mcp__a__slow", Arguments: json.RawMessage(`{"ms":600000}`)}
	params.SetProgressToken("http-tok")
	errc := make(chan error, 1)
	go func() {
		_, err := c.session.CallTool(ctx, params)
		errc <- err
	}()
	if p := waitSignal(t, c.progress, "progress over HTTP"); p.ProgressToken != "http-tok" || p.Message != "started" {
		t.Errorf("progress = %+v", p)
	}
	cancel()
	waitSignal(t, bs["a"].cancelled, "the backend seeing the cancellation over HTTP")
	if err := waitSignal(t, errc, "the cancelled call"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call error = %v", err)
	}

	// Garbage is refused with a JSON-RPC error; the gateway keeps serving.
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader("this is not JSON"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "malformed payload") {
		t.Errorf("garbage POST: status %d, body %s; want 400 naming the malformed payload", resp.StatusCode, body)
	}
	if diff := cmp.Diff([]string{"Hello, again!"}, texts(c.call(t, "mcp__a__greet", `{"name":"again"}`))); diff != "" {
		t.Errorf("call after garbage (-want +got):\n%s", diff)
	}

	// list_changed reaches an HTTP client (on its GET stream).
	c.call(t, "mcp__b__add_tool", `{"name":"over_http"}`)
	waitSignal(t, c.changed, "list_changed over HTTP")
	waitFor(t, "mcp__b__over_http listed", func() bool { return slices.Contains(c.names(t), "mcp__b__over_http") })
}

func TestHTTPSafety(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("hello", textBody("hi"))); err != nil {
		t.Fatal(err)
	}
	opts := Options{BearerToken: "s3cret-token", AllowedOrigins: []string{"https://app.example.com/"}}
	g := newGateway(t, reg, opts)
	base := serveHTTP(t, g, opts)

	tests := []struct {
		name    string
		path    string
		host    string
		headers map[string]string
		want    int
	}{
		{name: "no token", path: "/healthz", want: 401},
		{name: "wrong token", path: "/healthz", headers: map[string]string{"Authorization": "Bearer s3cret-tokeN"}, want: 401},
		{name: "token prefix", path: "/healthz", headers: map[string]string{"Authorization": "Bearer s3cret"}, want: 401},
		{name: "other scheme", path: "/healthz", headers: map[string]string{"Authorization": "Basic s3cret-token"}, want: 401},
		{name: "empty bearer", path: "/healthz", headers: map[string]string{"Authorization": "Bearer "}, want: 401},
		{name: "no token on /mcp", path: "/mcp", want: 401},
		{name: "token", path: "/healthz", headers: map[string]string{"Authorization": "bearer s3cret-token"}, want: 200},
		{name: "forged origin", path: "/healthz", headers: map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "http://evil.example"}, want: 403},
		{name: "forged origin, no token", path: "/mcp", headers: map[string]string{"Origin": "http://evil.example"}, want: 403},
		{name: "null origin", path: "/healthz", headers: map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "null"}, want: 403},
		{name: "loopback origin", path: "/healthz", headers: map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "http://localhost:3000"}, want: 200},
		{name: "loopback ip origin", path: "/healthz", headers: map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "http://[::1]:3000"}, want: 200},
		{name: "allowed origin", path: "/healthz", headers: map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "https://app.example.com"}, want: 200},
		{name: "loopback host without port", path: "/healthz", host: "localhost", headers: map[string]string{"Authorization": "Bearer s3cret-token"}, want: 200},
		{name: "rebound host", path: "/healthz", host: "evil.example:80", headers: map[string]string{"Authorization": "Bearer s3cret-token"}, want: 403},
		{name: "unknown path", path: "/other", headers: map[string]string{"Authorization": "Bearer s3cret-token"}, want: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, base+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tt.want, body)
			}
			if tt.want == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}

	// A real client with the token works; without it, it cannot connect.
	c := connectHTTP(t, base, &http.Client{Transport: bearerTransport{"s3cret-token"}})
	if diff := cmp.Diff([]string{"hi"}, texts(c.call(t, "hello", `{}`))); diff != "" {
		t.Errorf("call with token (-want +got):\n%s", diff)
	}
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil); err == nil {
		t.Error("a client without the token connected")
	}
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}

// aliceOrBob is an Options.Authenticate with two identities: the bearer
// credential alice-secret is alice, bob-secret is bob, any other is
// refused.
func aliceOrBob(r *http.Request) (string, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer alice-secret":
		return "alice", nil
	case "Bearer bob-secret":
		return "bob", nil
	}
	return "", errors.New("unknown credential")
}

func TestListen(t *testing.T) {
	tests := []struct {
		addr    string
		opts    Options
		wantErr string
	}{
		{addr: "127.0.0.1:0"},
		{addr: "localhost:0"},
		{addr: "0.0.0.0:0", wantErr: `refusing to listen on "0.0.0.0:0": it is not a loopback address and no bearer token is configured`},
		{addr: ":0", wantErr: "not a loopback address"},
		{addr: "example.com:0", wantErr: "not a loopback address"},
		{addr: "0.0.0.0:0", opts: Options{BearerToken: "t"}},
		{addr: "0.0.0.0:0", opts: Options{InsecureAllowNonLoopback: true}},
		{addr: "127.0.0.1", wantErr: `listen address "127.0.0.1" is not host:port`},
		{addr: "127.0.0.1:http-nope", wantErr: `listening on "127.0.0.1:http-nope"`},
		{addr: "127.0.0.1:0", opts: Options{AllowedOrigins: []string{"https://app.example.com/", "*"}}, wantErr: `gateway: allowed origin "*": allowing every origin would let any web page`},
		{addr: "127.0.0.1:0", opts: Options{AllowedOrigins: []string{"app.example.com"}}, wantErr: `gateway: allowed origin "app.example.com": an origin takes the form scheme://host[:port]`},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			ln, err := Listen(tt.addr, tt.opts)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Listen: %v", err)
				}
				ln.Close()
				return
			}
			if err == nil {
				ln.Close()
				t.Fatalf("Listen(%q) succeeded, want error %q", tt.addr, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestHealth(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("one", textBody("1")), goTool("two", textBody("2"))); err != nil {
		t.Fatal(err)
	}
	states := make(chan []BackendState, 1)
	health := func() []BackendState {
		s := <-states
		states <- s
		return s
	}
	states <- nil
	g := newGateway(t, reg, Options{Health: health})
	base := serveHTTP(t, g, Options{})

	get := func(method string) (int, Health) {
		t.Helper()
		req, _ := http.NewRequest(method, base+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h Health
		if method == http.MethodGet {
			if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, h
	}
	code, h := get(http.MethodGet)
	if diff := cmp.Diff(Health{OK: true, Ready: true, Tools: 2, Backends: []BackendState{}}, h); diff != "" || code != 200 {
		t.Errorf("status %d, health (-want +got):\n%s", code, diff)
	}

	<-states
	states <- []BackendState{
		{Name: "a", State: "ready", OK: true, Tools: 2},
		{Name: "b", State: "reconnecting", Error: "server gone"},
	}
	code, h = get(http.MethodGet)
	if code != http.StatusServiceUnavailable || h.OK || len(h.Backends) != 2 || h.Backends[1].Error != "server gone" {
		t.Errorf("with a failed backend: status %d, %+v", code, h)
	}
	if code, _ := get(http.MethodPost); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz: status %d, want 405", code)
	}

	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if h := g.Health(); h.OK {
		t.Error("a closed gateway reports OK")
	}
}

// While the gateway refuses every call (Options.Refusing), /readyz and
// /healthz both answer 503 and the report says not ready, and why; once
// it serves calls again, both answer 200.
func TestProbesNotReadyWhileRefusing(t *testing.T) {
	var why atomic.Value
	why.Store("no policy is in force")
	g := newGateway(t, tool.NewRegistry(), Options{Refusing: func() string { return why.Load().(string) }})
	base := serveHTTP(t, g, Options{})
	probe := func(path string) (int, Health) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h Health
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, h
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, h := probe(path); code != http.StatusServiceUnavailable || h.Ready || h.OK || h.Refusing != "no policy is in force" {
			t.Errorf("refusing every call: %s %d %+v; want 503, not ready, saying why", path, code, h)
		}
	}
	why.Store("")
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, h := probe(path); code != http.StatusOK || !h.Ready || h.Refusing != "" {
			t.Errorf("serving calls: %s %d %+v; want 200, ready", path, code, h)
		}
	}
}

// ServeListener: a call in flight when ctx ends is answered, the listener
// is closed, and it returns nil; a closed gateway refuses requests with 503.
func TestServeListenerShutdown(t *testing.T) {
	_, g, bs := twoBackends(t, Options{})
	ln, err := Listen("127.0.0.1:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.ServeListener(ctx, ln) }()
	c := connectHTTP(t, base, nil)

	res := slowCallUntil(t, c, stop)
	if !res.IsError || cmp.Diff([]string{"Error: tool call cancelled: the gateway is shutting down"}, texts(res)) != "" {
		t.Errorf("call in flight at shutdown: isError %v, %q", res.IsError, texts(res))
	}
	waitSignal(t, bs["a"].cancelled, "the backend seeing the cancellation")
	if err := waitSignal(t, served, "ServeListener to return"); err != nil {
		t.Errorf("ServeListener = %v", err)
	}
	if conn, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		conn.Close()
		t.Error("the listener is still open")
	}
	// The Handler of a closed gateway (mounted elsewhere) answers 503.
	rec := &statusRecorder{header: http.Header{}}
	g.Handler().ServeHTTP(rec, mustRequest(t, base+"/healthz"))
	if rec.status != http.StatusServiceUnavailable {
		t.Errorf("closed gateway: status %d, want 503", rec.status)
	}
}

// ServeListener ends when the gateway is closed, and reports a listener
// that fails.
func TestServeListenerEnds(t *testing.T) {
	g := New(tool.NewRegistry(), Options{})
	ln, err := Listen("127.0.0.1:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- g.ServeListener(context.Background(), ln) }()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := waitSignal(t, served, "ServeListener to return after Close"); err != nil {
		t.Errorf("ServeListener = %v", err)
	}

	g = New(tool.NewRegistry(), Options{})
	ln, err = Listen("127.0.0.1:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	err = g.ServeListener(context.Background(), ln)
	if err == nil || !strings.Contains(err.Error(), "gateway: serving HTTP on") {
		t.Errorf("ServeListener on a closed listener = %v, want a serving error", err)
	}
}

type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(code int)        { r.status = code }

func mustRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// An initialize sent again on a session that has one is refused, and the
// gateway goes on serving (its failed result once took the process down).
func TestHTTPInitializeAgain(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("plain", textBody("plain"))); err != nil {
		t.Fatal(err)
	}
	s := openHTTPSession(t, serveHTTP(t, newGateway(t, reg, Options{}), Options{}))
	resp := s.post(context.Background(), `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"id":5,"error"`) {
		t.Errorf("a second initialize got %s, want an error", b)
	}
	resp = s.post(context.Background(), `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"plain"}}`)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"text":"plain"`) {
		t.Errorf("a call after it got %s", b)
	}
}
