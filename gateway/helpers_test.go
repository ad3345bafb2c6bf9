package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// testTimeout bounds every wait of a test: generous, so a loaded machine
// does not flake, and still a clear failure when something hangs.
const testTimeout = 30 * time.Second

// backend is one fixture MCP server behind an mcp-client server that
// registers its tools in a registry.
type backend struct {
	name      string
	fixture   *mcp.Server
	cancelled chan struct{} // one value per slow call ended by cancellation
	client    *mcpclient.Server
	kill      func() // closes the fixture's sessions: the server "dies"
}

// startBackend starts the mcptest fixture under serverName name, connected
// in memory, and waits until its tools are registered in reg.
func startBackend(t *testing.T, reg *tool.Registry, name string, opts mcppeer.FixtureOptions) *backend {
	t.Helper()
	b := &backend{name: name, cancelled: make(chan struct{}, 16)}
	opts.OnCancel = func() { b.cancelled <- struct{}{} }
	b.fixture = mcppeer.Fixture(opts)
	mem := &memoryServer{srv: b.fixture}
	b.kill = mem.kill
	t.Cleanup(mem.kill)
	cfg := mcpclient.Config{ServerName: name, Transport: mcpclient.TransportStdio, Command: "unused"}
	b.client = startClient(t, cfg, mcpclient.Options{Registry: reg, NewTransport: mem.connect})
	return b
}

// startMemBackend runs srv in memory as the backend cfg describes, and
// waits for its first start.
func startMemBackend(t *testing.T, reg *tool.Registry, cfg mcpclient.Config, srv *mcp.Server) *mcpclient.Server {
	t.Helper()
	return startMemBackendWith(t, cfg, mcpclient.Options{Registry: reg}, srv)
}

// startMemBackendWith is startMemBackend with opts (the registry in them;
// their NewTransport is the in-memory one).
func startMemBackendWith(t *testing.T, cfg mcpclient.Config, opts mcpclient.Options, srv *mcp.Server) *mcpclient.Server {
	t.Helper()
	mem := &memoryServer{srv: srv}
	// Registered before the client's: cleanups run last-in first-out, so
	// the client closes first, then its server's sessions.
	t.Cleanup(mem.kill)
	opts.NewTransport = mem.connect
	return startClient(t, cfg, opts)
}

// startClient starts the mcp-client server cfg describes, closes it when
// the test ends, and waits until it is ready: its tools are registered in
// opts.Registry.
func startClient(t testing.TB, cfg mcpclient.Config, opts mcpclient.Options) *mcpclient.Server {
	t.Helper()
	c, err := mcpclient.Start(cfg, opts)
	if err != nil {
		t.Fatalf("starting %q: %v", cfg.ServerName, err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("%q did not start: %v", cfg.ServerName, err)
	}
	return c
}

// memoryServer serves a go-sdk server in memory to an mcp-client server,
// a session for each connection it makes, and keeps the sessions and
// their connections so that a test can end them.
type memoryServer struct {
	srv      *mcp.Server
	mu       sync.Mutex
	sessions []*mcp.ServerSession
	conns    []mcp.Connection
}

// connect is an mcpclient.Options.NewTransport.
func (m *memoryServer) connect() (mcp.Transport, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := m.srv.Connect(context.Background(), keptConn{Transport: st, m: m}, nil)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions = append(m.sessions, ss)
	return ct, nil
}

// keptConn is a server transport whose connection m keeps.
type keptConn struct {
	mcp.Transport
	m *memoryServer
}

func (k keptConn) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := k.Transport.Connect(ctx)
	if err == nil {
		k.m.mu.Lock()
		k.m.conns = append(k.m.conns, conn)
		k.m.mu.Unlock()
	}
	return conn, err
}

// kill breaks the server's connections, as a process that dies does (its
// handlers end when their reads fail), then closes its sessions: a
// session's Close alone waits for a handler that nothing cancels yet.
func (m *memoryServer) kill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.conns {
		c.Close()
	}
	for _, ss := range m.sessions {
		ss.Close()
	}
}

// newGateway returns a gateway over reg that is closed (cleanly) at the end
// of the test.
func newGateway(t *testing.T, reg *tool.Registry, opts Options) *Gateway {
	t.Helper()
	g := New(reg, opts)
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return g
}

// client is a go-sdk client session with what the gateway sent it.
type client struct {
	session     *mcp.ClientSession
	listChanged atomic.Int64
	changed     chan struct{} // one value per list_changed, buffered
	progress    chan *mcp.ProgressNotificationParams
	// otherChanged receives "resources" or "prompts" on their list_changed.
	otherChanged chan string
}

func newSDKClient(c *client) *mcp.Client {
	c.changed = make(chan struct{}, 1000)
	c.progress = make(chan *mcp.ProgressNotificationParams, 100)
	c.otherChanged = make(chan string, 100)
	return mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { c.otherChanged <- "resources" },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { c.otherChanged <- "prompts" },
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.listChanged.Add(1)
			c.changed <- struct{}{}
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.progress <- req.Params
		},
	})
}

// connectInMemory connects a go-sdk client to g over an in-memory pipe,
// served by ServeTransport until the end of the test.
func connectInMemory(t *testing.T, g *Gateway) *client {
	t.Helper()
	return connectInMemoryAt(t, g, "")
}

// connectInMemoryAt is connectInMemory at the protocol version given (""
// negotiates the newest; before 2026-07-28 the gateway's take answers
// tools/call).
func connectInMemoryAt(t *testing.T, g *Gateway, version string) *client {
	t.Helper()
	c := &client{}
	c.session, _ = connectClient(t, g, newSDKClient(c), &mcp.ClientSessionOptions{ProtocolVersion: version})
	return c
}

// connectWithoutListen is connectInMemory with a client that has no
// list-changed handler, so it opens no subscriptions/listen stream. A
// 2026-07-28 client opens that stream after Connect returns, and its
// arrival is activity at a time the test does not choose: a test of
// which session is idle longest needs its clients' activity in the
// order it makes it.
func connectWithoutListen(t *testing.T, g *Gateway) *client {
	t.Helper()
	c := &client{}
	c.session, _ = connectClient(t, g, mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, nil), nil)
	return c
}

// connectClient connects sdk to g over an in-memory pipe with opts, served
// by ServeTransport until the end of the test. The test's cleanup closes
// the client's session first, then stops serving and checks
// ServeTransport's error; a test that wants the serving to end earlier
// has the returned served.
func connectClient(t testing.TB, g *Gateway, sdk *mcp.Client, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, *served) {
	t.Helper()
	ct, s := serveInMemory(t, g)
	return connectOver(t, sdk, ct, opts, "in memory"), s
}

// connectStdio is connectClient over pipes served by ServeStdio.
func connectStdio(t testing.TB, g *Gateway, sdk *mcp.Client, opts *mcp.ClientSessionOptions) (*mcp.ClientSession, *served) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := serveWith(t, func(ctx context.Context) error { return g.ServeStdio(ctx, inR, outW) })
	return connectOver(t, sdk, &mcp.IOTransport{Reader: outR, Writer: inW}, opts, "over stdio"), s
}

// connectOver connects sdk with opts over ct, the client's end of what
// the test serves (how names it), and closes the session when the test
// ends.
func connectOver(t testing.TB, sdk *mcp.Client, ct mcp.Transport, opts *mcp.ClientSessionOptions, how string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := sdk.Connect(ctx, ct, opts)
	if err != nil {
		t.Fatalf("connecting a client %s: %v", how, err)
	}
	// Registered after the serving's cleanup, so it runs before it.
	t.Cleanup(func() { cs.Close() })
	return cs
}

// serveInMemory serves g on one end of an in-memory pipe and returns the
// other. When the test ends it stops serving and fails the test if
// ServeTransport returned an error.
func serveInMemory(t testing.TB, g *Gateway) (mcp.Transport, *served) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	return ct, serveWith(t, func(ctx context.Context) error { return g.ServeTransport(ctx, st) })
}

// serveWith runs serve in the background until the test ends, then
// cancels its context and fails the test if it returned an error.
func serveWith(t testing.TB, serve func(context.Context) error) *served {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	s := &served{stop: stop, done: make(chan struct{})}
	go func() {
		s.err = serve(ctx)
		close(s.done)
	}()
	t.Cleanup(func() {
		checked := s.waited // the test has had the error: not reported twice
		stop()
		if err := s.wait(t); err != nil && !checked {
			t.Errorf("ServeTransport: %v", err)
		}
	})
	return s
}

// served is a ServeTransport running in the background.
type served struct {
	stop   func() // cancels ServeTransport's context
	done   chan struct{}
	err    error // ServeTransport's, once done is closed
	waited bool  // wait has returned err
}

// wait waits for ServeTransport to return and gives its error.
func (s *served) wait(t testing.TB) error {
	t.Helper()
	waitSignal(t, s.done, "ServeTransport to return")
	s.waited = true
	return s.err
}

// names lists the tools the client sees, in order, following pages.
func (c *client) names(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var out []string
	for tl, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("listing tools: %v", err)
		}
		out = append(out, tl.Name)
	}
	return out
}

// call calls a tool and fails the test on a protocol error.
func (c *client) call(t *testing.T, name, args string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	params := &mcp.CallToolParams{Name: name}
	if args != "" {
		params.Arguments = json.RawMessage(args)
	}
	res, err := c.session.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

// texts returns the texts of a result's text blocks.
func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

// waitFor polls cond until it holds or testTimeout passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	mcptest.Eventually(t, testTimeout, cond, "%s", what)
}

// waitSignal waits for one value on ch or fails after testTimeout.
func waitSignal[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// publicNames returns mcp__<server>__<raw> for each raw name, sorted.
func publicNames(servers []string, raws []string) []string {
	var out []string
	for _, s := range servers {
		for _, r := range raws {
			out = append(out, mcpclient.PublicToolName(s, r))
		}
	}
	slices.Sort(out)
	return out
}

// goTool is a registry tool with a Go body.
func goTool(name string, body tool.Func) tool.Tool {
	return tool.Tool{Name: name, Description: "Go tool " + name, InputSchema: json.RawMessage(`{"type":"object"}`), Execute: body}
}

// textBody returns a body that answers text.
func textBody(text string) tool.Func {
	return func(context.Context, json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text(text)}}, nil
	}
}

// startRawBackend starts a scripted raw MCP server (for results the SDK
// cannot produce) under serverName name, and waits for its tools.
func startRawBackend(t *testing.T, reg *tool.Registry, name string, script mcppeer.RawScript) *mcpclient.Server {
	t.Helper()
	raw := mcppeer.NewRawServer(script)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var closers []io.Closer
	// Registered before the client's, to run after it.
	t.Cleanup(func() {
		mu.Lock()
		for _, c := range closers {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	cfg := mcpclient.Config{ServerName: name, Transport: mcpclient.TransportStdio, Command: "unused"}
	return startClient(t, cfg, mcpclient.Options{Registry: reg, NewTransport: func() (mcp.Transport, error) {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		mu.Lock()
		closers = append(closers, cw, sr)
		mu.Unlock()
		wg.Go(func() {
			raw.Serve(context.Background(), sr, sw)
			sw.Close()
		})
		return &mcp.IOTransport{Reader: cr, Writer: cw}, nil
	}})
}

// rawClient speaks newline-delimited JSON-RPC to a gateway over ServeStdio,
// so tests see the exact bytes on the wire.
type rawClient struct {
	t      *testing.T
	w      io.WriteCloser
	lines  chan []byte
	nextID int
	asked  []wireMessage   // the gateway's requests read while waiting for a response
	init   json.RawMessage // the initialize result
}

// wireMessage is one JSON-RPC message as received.
type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// connectRaw serves a stdio session of g on pipes and initializes it
// (protocol 2025-11-25).
func connectRaw(t *testing.T, g *Gateway) *rawClient {
	return connectRawAt(t, g, "2025-11-25")
}

// connectRawAt is connectRaw at the protocol version given.
func connectRawAt(t *testing.T, g *Gateway, version string) *rawClient {
	return connectRawWith(t, version, g.ServeStdio)
}

// connectRawSDK is connectRaw with every request going through the SDK's
// session (no take), to compare the two.
func connectRawSDK(t *testing.T, g *Gateway) *rawClient {
	return connectRawWith(t, "2025-11-25", func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
		return g.serveTransport(ctx, stdioTransport(in, out), nil)
	})
}

// sdkCalls counts the tools/call requests that reach g's SDK sessions
// (those the take did not take).
func sdkCalls(g *Gateway) *atomic.Int64 {
	var n atomic.Int64
	g.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				n.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return &n
}

// connectRawWith serves a stdio session on pipes with serve and
// initializes it at version.
func connectRawWith(t *testing.T, version string, serve func(context.Context, io.ReadCloser, io.WriteCloser) error) *rawClient {
	t.Helper()
	return connectRawInit(t, `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`, serve)
}

// connectRawInit is connectRawWith with the initialize params given;
// with none, the client sends no initialize (a 2026-07-28 client opens
// with server/discover, or not at all).
func connectRawInit(t *testing.T, init string, serve func(context.Context, io.ReadCloser, io.WriteCloser) error) *rawClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, inR, outW) }()
	c := &rawClient{t: t, w: inW, lines: make(chan []byte, 100)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			c.lines <- slices.Clone(sc.Bytes())
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		stop()
		if err := <-served; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		outR.Close()
		<-read
	})
	if init != "" {
		c.init = c.request("initialize", init).Result
		c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	return c
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatalf("writing to the gateway: %v", err)
	}
}

// request sends a request and returns its response, skipping
// notifications.
func (c *rawClient) request(method, params string) wireMessage {
	c.t.Helper()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
	return c.response(id)
}

// response waits for the response with the given raw id.
func (c *rawClient) response(id string) wireMessage {
	c.t.Helper()
	for {
		line := waitSignal(c.t, c.lines, "a response to request "+id)
		var m wireMessage
		if err := json.Unmarshal(line, &m); err != nil {
			c.t.Fatalf("gateway sent invalid JSON %q: %v", line, err)
		}
		if string(m.ID) == id && m.Method == "" {
			return m
		}
		if m.Method != "" && len(m.ID) > 0 {
			c.asked = append(c.asked, m)
		}
	}
}

// serverRequest returns the gateway's next request of method, read now
// or while waiting for a response.
func (c *rawClient) serverRequest(method string) wireMessage {
	c.t.Helper()
	for i, m := range c.asked {
		if m.Method == method {
			c.asked = slices.Delete(c.asked, i, i+1)
			return m
		}
	}
	for {
		line := waitSignal(c.t, c.lines, "a "+method+" request")
		var m wireMessage
		if err := json.Unmarshal(line, &m); err != nil {
			c.t.Fatalf("gateway sent invalid JSON %q: %v", line, err)
		}
		if m.Method == method && len(m.ID) > 0 {
			return m
		}
	}
}
