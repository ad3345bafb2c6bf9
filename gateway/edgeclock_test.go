package gateway

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A keep-alive connection that starts its next request's headers and never
// finishes them is closed at HeaderTimeout from its first byte, as a new
// one is from accept; idle before that, it is not held to the header limit.
func TestEdgeKeepAliveHeadersTimed(t *testing.T) {
	addr := attackGateway(t, Options{HeaderTimeout: 300 * time.Millisecond})
	c := dialMany(t, addr, 1, "")[0]
	br := bufio.NewReader(c)
	io.WriteString(c, "GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+attackToken+"\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the first request: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	if resp.Close {
		t.Fatal("/livez closed the connection")
	}
	time.Sleep(900 * time.Millisecond) // idle for three header limits
	if _, err := io.WriteString(c, "GET /livez HTTP/1.1\r\n"); err != nil {
		t.Fatalf("a keep-alive connection idle for 900 ms was closed (held to the header limit while idle): %v", err)
	}
	start := time.Now()
	if _, ok := closedWithin(c, 5*time.Second); !ok {
		t.Fatalf("a keep-alive connection with unfinished headers is open after %v", time.Since(start).Round(time.Millisecond))
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("closed %v after its next request began, before the 300 ms header limit", took.Round(time.Millisecond))
	}
	checkAuthorized(t, addr)
}

// A body its handler left unread is drained by net/http after the handler
// returns; dribbled, the drain is cut at the body's limit, not held open
// for as long as the sender likes (it used to be bounded by the read
// deadline left set; the gate's clock now watches it until the connection
// is idle again).
func TestEdgeUnreadBodyDrainCut(t *testing.T) {
	addr := attackGateway(t, Options{BodyTimeout: 300 * time.Millisecond})
	head := "POST /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + attackToken + "\r\nContent-Length: 200000\r\n\r\n"
	c := dialMany(t, addr, 1, head)[0]
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); dribble(c, stop) }()
	sent, ok := closedWithin(c, 8*time.Second)
	close(stop)
	<-done
	if !ok {
		t.Fatalf("a dribbled body its handler did not read still holds its connection after 8 s (sent %q)", sent)
	}
	checkAuthorized(t, addr)
}

// sweep closes the connections past their header or idle limit and cuts
// the bodies past due, and leaves the rest alone.
func TestConnGateSweep(t *testing.T) {
	g := newConnGate(nil, 10, 10, 10, nil)
	g.times = edgeTimes{header: time.Second, body: 10 * time.Second, idle: time.Minute}
	now := time.Unix(10000, 0)
	type spec struct {
		name        string
		busy        bool
		served      bool
		headersFrom time.Duration // before now; 0 for none
		idleFor     time.Duration
		bodyAge     time.Duration // a body this old, with nothing received; 0 for none
		wantClosed  bool
		wantCut     bool
	}
	specs := []spec{
		{name: "new, silent past the header limit", headersFrom: 2 * time.Second, wantClosed: true},
		{name: "new, within the header limit", headersFrom: 500 * time.Millisecond},
		{name: "keep-alive, idle past the idle limit", served: true, idleFor: 2 * time.Minute, wantClosed: true},
		{name: "keep-alive, idle within it", served: true, idleFor: 30 * time.Second},
		{name: "keep-alive, long idle, headers begun just now", served: true, idleFor: 2 * time.Minute, headersFrom: 100 * time.Millisecond},
		{name: "keep-alive, headers begun past the limit", served: true, idleFor: 30 * time.Second, headersFrom: 3 * time.Second, wantClosed: true},
		{name: "serving, body past due", busy: true, served: true, bodyAge: 3 * time.Second, wantCut: true},
		{name: "serving, body within grace", busy: true, served: true, bodyAge: time.Second},
		{name: "serving long, no body", busy: true, served: true, idleFor: time.Hour},
	}
	type conn struct {
		spec
		gc   *gateConn
		peer net.Conn
		body *deadlineBody
	}
	var conns []*conn
	for _, s := range specs {
		ours, peer := net.Pipe()
		t.Cleanup(func() { ours.Close(); peer.Close() })
		gc := &gateConn{Conn: ours, gate: g, owner: s.name, busy: s.busy, served: s.served, since: now.Add(-s.idleFor)}
		if s.headersFrom != 0 {
			gc.headersFrom.Store(now.Add(-s.headersFrom).UnixNano())
		}
		c := &conn{spec: s, gc: gc, peer: peer}
		if s.bodyAge != 0 {
			c.body = &deadlineBody{start: now.Add(-s.bodyAge), timeout: 10 * time.Second, length: -1, gc: gc}
			gc.body.Store(c.body)
		}
		g.conns[gc] = struct{}{}
		g.byOwner[s.name]++
		conns = append(conns, c)
	}
	g.sweep(now)
	for _, c := range conns {
		_, kept := g.conns[c.gc]
		if kept == c.wantClosed {
			t.Errorf("%s: kept %v, want closed %v", c.name, kept, c.wantClosed)
		}
		c.peer.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err := c.peer.Read(make([]byte, 1))
		if closed := err == io.EOF; closed != c.wantClosed {
			t.Errorf("%s: connection closed %v (%v), want %v", c.name, closed, err, c.wantClosed)
		}
		if c.body != nil && c.body.late != c.wantCut {
			t.Errorf("%s: body cut %v, want %v", c.name, c.body.late, c.wantCut)
		}
	}
	if n := len(g.byOwner); n != len(specs)-3 {
		t.Errorf("%d owners still counted, want %d", n, len(specs)-3)
	}
}

// A body read to its end as the clock cuts it keeps its connection usable:
// the cut's read deadline is lifted, and the next request is served.
func TestDeadlineBodyEndAfterCut(t *testing.T) {
	ours, peer := net.Pipe()
	defer ours.Close()
	defer peer.Close()
	gc := &gateConn{Conn: ours}
	b := &deadlineBody{ReadCloser: io.NopCloser(strings.NewReader("{}")), start: time.Now(), timeout: time.Second, length: 2, gc: gc}
	gc.body.Store(b)
	b.cut()
	if _, err := io.ReadAll(b); err != nil {
		t.Fatal(err)
	}
	if gc.body.Load() != nil {
		t.Error("the clock still watches a body read to its end")
	}
	go peer.Write([]byte("x"))
	ours.SetReadDeadline(time.Time{}) // what end did; now prove reads work
	if _, err := ours.Read(make([]byte, 1)); err != nil {
		t.Errorf("the connection after a late body: %v", err)
	}
}

// A shutdown waits for the requests being served that are not MCP's (the
// gateway's Close ends those), up to the shutdown timeout: a slow
// /metrics scrape in progress when the server is told to stop gets its
// answer, and a shutdown with none running does not wait.
func TestShutdownWaitsForRunningRequest(t *testing.T) {
	entered := make(chan struct{})
	opts := Options{Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "scraped\n")
	})}
	g := newGateway(t, tool.NewRegistry(), opts)
	base, stop := startHTTP(t, g, opts)
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-entered
	if err := stop(); err != nil {
		t.Errorf("ServeListener: %v", err)
	}
	if body := <-got; body != "scraped\n" {
		t.Errorf("a scrape running when the server stopped got %q, want its answer", body)
	}
}
