package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Attacks on the HTTP edge, made the way a hostile client would: many real
// sockets on 127.0.0.1 against a real ServeListener. Each checks that an
// authorized client still gets in at once.

const attackToken = "s3cret-token"

// authorizedBound is how long an authorized client may take, under attack,
// to reach /livez, connect and call a tool: tens of milliseconds here,
// with room for a loaded machine and the race detector. Before the edge
// was hardened, each attack kept it out for at least the header timeout
// (a minute in these tests) or for good.
const authorizedBound = 10 * time.Second

// attackGateway serves a gateway with the tool "hello" and a bearer token,
// and returns its host:port.
func attackGateway(t *testing.T, opts Options) string {
	t.Helper()
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("hello", textBody("hi"))); err != nil {
		t.Fatal(err)
	}
	opts.BearerToken = attackToken
	g := newGateway(t, reg, opts)
	return strings.TrimPrefix(serveHTTP(t, g, opts), "http://")
}

// checkAuthorized checks that a client with the token reaches /livez, then
// connects and calls hello, all within authorizedBound, on connections of
// its own.
func checkAuthorized(t *testing.T, addr string) { checkAuthorizedAs(t, addr, attackToken) }

// checkAuthorizedAs is checkAuthorized with token.
func checkAuthorizedAs(t *testing.T, addr, token string) {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), authorizedBound)
	defer cancel()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: bearerTransportOver{tr: tr, token: token}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/livez", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("an authorized client could not reach /livez under attack within %v: %v", authorizedBound, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/livez under attack: status %d", resp.StatusCode)
	}
	cs, err := newSDKClient(&client{}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("an authorized client could not connect under attack within %v: %v", authorizedBound, err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hello"})
	if err != nil {
		t.Fatalf("an authorized client could not call a tool under attack within %v: %v", authorizedBound, err)
	}
	if diff := cmp.Diff([]string{"hi"}, texts(res)); diff != "" {
		t.Errorf("call under attack (-want +got):\n%s", diff)
	}
	t.Logf("authorized client served in %v", time.Since(start).Round(time.Millisecond))
}

// bearerTransportOver adds the token to every request sent over tr.
// bearerTransportOver sends token with every request over tr, attackToken
// when token is "".
type bearerTransportOver struct {
	tr    http.RoundTripper
	token string
}

func (b bearerTransportOver) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	token := b.token
	if token == "" {
		token = attackToken
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return b.tr.RoundTrip(req)
}

// dialMany opens n connections to addr, each sending prefix; they are
// closed at the end of the test.
func dialMany(t *testing.T, addr string, n int, prefix string) []net.Conn {
	t.Helper()
	needFDs(t, uint64(2*n))
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dialing attacker connection %d: %v", len(conns), err)
		}
		conns = append(conns, c)
		if prefix != "" {
			if _, err := io.WriteString(c, prefix); err != nil {
				t.Fatalf("attacker connection %d: %v", len(conns), err)
			}
		}
	}
	return conns
}

// closedWithin reads c until the server closes it, and reports what it
// sent; ok is false when c is still open after d.
func closedWithin(c net.Conn, d time.Duration) (sent string, ok bool) {
	c.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(c)
	var ne net.Error
	return string(b), !(errors.As(err, &ne) && ne.Timeout())
}

// unauthorizedBody is what the lock-out attacker sends: a POST's headers
// declaring a body it never sends.
const unauthorizedBody = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200000\r\n\r\n"

// 1,100 unauthenticated sockets that declare a body and send none get
// their 401 and are closed at once, and an authorized client is served
// meanwhile (it used to be locked out while net/http drained the bodies).
func TestEdgeRefusedBodiesClose(t *testing.T) {
	addr := attackGateway(t, Options{})
	conns := dialMany(t, addr, 1100, unauthorizedBody)
	checkAuthorized(t, addr)
	for i, c := range conns {
		sent, ok := closedWithin(c, 5*time.Second)
		if !ok {
			t.Fatalf("attacker connection %d is still open 5 s after its 401 (sent %q)", i, sent)
		}
		if !strings.HasPrefix(sent, "HTTP/1.1 401 ") && !strings.HasPrefix(sent, "HTTP/1.1 503 ") {
			t.Fatalf("attacker connection %d got %q, want a 401 (or a 503 at accept)", i, sent)
		}
	}
}

// 1,100 sockets that send nothing take every connection slot; a new
// authorized connection sheds the oldest of them instead of waiting for a
// header timeout (a minute here, so only shedding can let it in).
func TestEdgeSilentSocketsShed(t *testing.T) {
	addr := attackGateway(t, Options{HeaderTimeout: time.Minute})
	conns := dialMany(t, addr, 1100, "")
	checkAuthorized(t, addr)
	shed := 0
	for _, c := range conns[:200] {
		if _, ok := closedWithin(c, 10*time.Millisecond); ok {
			shed++
		}
	}
	if shed == 0 {
		t.Error("no silent connection was shed")
	}
}

// A connection that has not finished its headers is closed after 2 s even
// when no slot is needed: the wait for a request is short. (The bound
// leaves room for a loaded machine; the old header timeout was 10 s.)
func TestEdgeFirstByteTimeout(t *testing.T) {
	addr := attackGateway(t, Options{})
	c := dialMany(t, addr, 1, "GET /livez HTTP/1.1\r\n")[0]
	start := time.Now()
	if _, ok := closedWithin(c, 5*time.Second); !ok {
		t.Fatalf("a connection with unfinished headers is open after %v", time.Since(start).Round(time.Millisecond))
	}
}

// A body dribbled a byte at a time is cut off at BodyTimeout, authorized
// or not; the authorized one is told why (408).
func TestEdgeSlowBody(t *testing.T) {
	addr := attackGateway(t, Options{BodyTimeout: 300 * time.Millisecond})
	for _, auth := range []string{"", "Authorization: Bearer " + attackToken + "\r\n"} {
		head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200000\r\n\r\n"
		c := dialMany(t, addr, 1, head)[0]
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { dribble(c, stop) })
		sent, ok := closedWithin(c, 8*time.Second)
		close(stop)
		wg.Wait()
		if !ok {
			t.Fatalf("a slow body (authorized: %v) still holds its connection after 8 s", auth != "")
		}
		want := "HTTP/1.1 401 "
		if auth != "" {
			want = "HTTP/1.1 408 "
		}
		if !strings.HasPrefix(sent, want) {
			t.Errorf("slow body (authorized: %v) got %q, want %q…", auth != "", sent, want)
		}
	}
	checkAuthorized(t, addr)
}

// dribble writes one byte of body to c every 50 ms until stop or an error.
func dribble(c net.Conn, stop <-chan struct{}) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			if _, err := c.Write([]byte{' '}); err != nil {
				return
			}
		}
	}
}

// 1,000 sockets each sending 300 KB of headers they never finish cost the
// gateway no memory: headers are capped at 64 KiB (431) and the connection
// closed. They used to be held, up to 1 MB each, until the header timeout.
func TestEdgeBigHeadersBounded(t *testing.T) {
	addr := attackGateway(t, Options{HeaderTimeout: time.Minute})
	pad := "GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + strings.Repeat("a", 300<<10)
	before := liveHeap()
	conns := dialMany(t, addr, 1000, "")
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, pad)
		})
	}
	wg.Wait()
	grown := int64(liveHeap()) - int64(before)
	t.Logf("live heap grew by %d MiB with 1,000 unfinished 300 KB headers", grown>>20)
	// A busy machine may find every socket still mid-header: each then
	// holds its capped headers and its connection's buffers, 78 MiB for
	// 1,000, where uncapped ones held 300 KB each (290 MiB).
	const perConn = 64<<10 + 16<<10 // the headers serve allows, the connection
	if bound := int64(len(conns)) * perConn; grown > bound {
		t.Errorf("live heap grew by %d MiB with 1,000 unfinished 300 KB headers, want under %d MiB", grown>>20, bound>>20)
	}
	checkAuthorized(t, addr)
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// SSE GET streams have a budget of their own, and one client three
// quarters of it: with every stream slot it may hold taken, more are
// refused with 503 and a new client still connects and calls.
func TestEdgeStreamBudget(t *testing.T) {
	const maxConns = 16
	addr := attackGateway(t, Options{MaxConnections: maxConns})
	refused := 0
	for i := range maxConns {
		switch status := openStream(t, addr); status {
		case http.StatusOK:
		case http.StatusServiceUnavailable:
			refused++
		default:
			t.Fatalf("stream %d: status %d", i, status)
		}
	}
	if budget := maxConns / 2; refused != maxConns-(budget-budget/4) {
		t.Errorf("%d of %d streams refused, want %d (all but three quarters of half the connections)", refused, maxConns, maxConns-(budget-budget/4))
	}
	checkAuthorized(t, addr)
}

// openStream opens a session and its SSE GET stream, left open until the
// end of the test, and returns the GET's status.
func openStream(t *testing.T, addr string) int {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: bearerTransportOver{tr: tr}}
	session := initSession(t, hc, addr)
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	get, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { get.Body.Close() })
	if get.StatusCode != http.StatusOK {
		io.Copy(io.Discard, get.Body)
	}
	return get.StatusCode
}

// initSession opens a session of protocol 2025-03-26 (the last with
// batches) and returns its id.
func initSession(t *testing.T, hc *http.Client, addr string) string {
	t.Helper()
	resp, err := hc.Do(mcpPost(t, addr, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"s","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: status %d, session %q", resp.StatusCode, session)
	}
	resp, err = hc.Do(mcpPost(t, addr, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return session
}

// mcpPost is a POST of body to /mcp in session (none when "").
func mcpPost(t *testing.T, addr, session, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	}
	return req
}

// needFDs raises the soft open-file limit to hold n more descriptors (a
// socket count is two descriptors in this process: client and server end).
func needFDs(t *testing.T, n uint64) {
	t.Helper()
	mcptest.RaiseFDLimit(t, n+512)
}

// One client cannot take every slot with requests it keeps open. Without
// authentication a client is its address: past MaxConnsPerAddr busy
// connections, a new one from that address is refused at accept (its idle
// ones are shed first). With it, a connection counts against its identity
// once a request on it authenticates: past MaxConnsPerIdentity busy ones,
// the identity's next request is refused with 429 (the address alone is
// not held against it: every local client shares 127.0.0.1).
func TestEdgePerClientCap(t *testing.T) {
	const perClient = 4
	for _, tc := range []struct {
		name  string
		token string
		want  string
	}{
		{"no authentication: per address", "", "HTTP/1.1 503 "},
		{"authenticated: per identity", attackToken, "HTTP/1.1 429 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{MaxConnsPerAddr: perClient, MaxStreams: 100, BearerToken: tc.token}
			reg := tool.NewRegistry()
			addr := strings.TrimPrefix(serveHTTP(t, newGateway(t, reg, opts), opts), "http://")
			for i := range perClient {
				if status := openStream(t, addr); status != http.StatusOK {
					t.Fatalf("stream %d: status %d", i, status)
				}
			}
			c := dialMany(t, addr, 1, "GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+attackToken+"\r\n\r\n")[0]
			sent, ok := closedWithin(c, 2*time.Second)
			if !ok || !strings.HasPrefix(sent, tc.want) {
				t.Errorf("connection %d of one client: closed %v, got %q; want %q", perClient+1, ok, sent, tc.want)
			}
		})
	}
}

// A body that arrives slower than minBodyRate is cut after bodyGrace,
// whoever sends it, however long BodyTimeout is (a minute here).
func TestEdgeSlowBodyCutWhateverTimeout(t *testing.T) {
	addr := attackGateway(t, Options{BodyTimeout: time.Minute})
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + attackToken + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200000\r\n\r\n"
	c := dialMany(t, addr, 1, head)[0]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { dribble(c, stop) }) // 20 bytes a second
	sent, ok := closedWithin(c, 8*time.Second)
	close(stop)
	wg.Wait()
	if !ok || !strings.HasPrefix(sent, "HTTP/1.1 408 ") {
		t.Fatalf("an authorized body at 20 B/s: closed within 8 s %v, got %q; want a 408", ok, sent)
	}
}

// twoIdentities authenticates bob and alice by their tokens.
func twoIdentities(r *http.Request) (string, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer bob-token":
		return "bob", nil
	case "Bearer alice-token":
		return "alice", nil
	}
	return "", errNoToken
}

// 1,100 connections of one authorized identity that declare a body and
// dribble it leave another identity served at once, every time: the
// sender's connections count against its identity, not the address both
// share, and past the identity's cap its requests are refused (they used
// to take every slot of 127.0.0.1 until the body timeout).
func TestEdgeSlowAuthorizedSendersLeaveOthersServed(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("hello", textBody("hi"))); err != nil {
		t.Fatal(err)
	}
	opts := Options{Authenticate: twoIdentities, BodyTimeout: time.Minute, InsecureAllowNonLoopback: true}
	addr := strings.TrimPrefix(serveHTTP(t, newGateway(t, reg, opts), opts), "http://")
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer bob-token\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200000\r\n\r\n{"
	for range 3 {
		dialMany(t, addr, 1100, head)
		checkAuthorizedAs(t, addr, "alice-token")
	}
}

// Over HTTP as on stdio, a batch over 1,000 messages is refused whole and
// an id that would be answered under another is refused, each with -32600
// (a 1,001-message batch used to be served, and id 1.5 answered as 1).
func TestEdgeScreen(t *testing.T) {
	addr := attackGateway(t, Options{})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: bearerTransportOver{tr: tr}}
	session := initSession(t, hc, addr)
	pings := func(n int) string {
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"ping"}`
		}
		return "[" + strings.Join(msgs, ",") + "]"
	}
	tests := []struct {
		name, body string
		status     int
		want       string // a prefix of the response body
	}{
		{"batch of 1,001", pings(1001), 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a batch of 1001 messages is over the limit of 1000"}}`},
		{"batch of 40,000", pings(40000), 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a batch of 40000 messages`},
		{"id 1.5", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, 400, `{"jsonrpc":"2.0","id":1.5,"error":{"code":-32600,"message":"Invalid Request: id 1.5 cannot be answered exactly`},
		{"id 2^64+1", `{"jsonrpc":"2.0","id":18446744073709551617,"method":"ping"}`, 400, `{"jsonrpc":"2.0","id":18446744073709551617,"error":{"code":-32600,`},
		{"batch of 1,000", pings(1000), 200, ""},
		{"id 2^53", `{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := hc.Do(mcpPost(t, addr, session, tt.body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.HasPrefix(string(body), tt.want) {
				t.Errorf("status %d, body %.300q; want %d and %.300q…", resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
}

// The answer to one batch is bounded: 200 tools/list of a 20 KB catalog
// (4 MB) against a 256 KiB limit end at the limit, with the connection,
// and the gateway serves on.
func TestEdgeBatchAnswerBounded(t *testing.T) {
	const limit = 256 << 10
	reg := tool.NewRegistry()
	big := goTool("big", textBody("ok"))
	big.Description = strings.Repeat("d", 20<<10)
	if _, err := reg.Register(big, goTool("hello", textBody("hi"))); err != nil {
		t.Fatal(err)
	}
	opts := Options{BearerToken: attackToken, MaxBatchResponse: limit}
	addr := strings.TrimPrefix(serveHTTP(t, newGateway(t, reg, opts), opts), "http://")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: bearerTransportOver{tr: tr}}
	session := initSession(t, hc, addr)
	msgs := make([]string, 200)
	for i := range msgs {
		msgs[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/list"}`
	}
	resp, err := hc.Do(mcpPost(t, addr, session, "["+strings.Join(msgs, ",")+"]"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	answers := strings.Count(string(body), "\ndata: ")
	t.Logf("read %d KiB, %d answers, then %v", len(body)>>10, answers, err)
	if len(body) > limit || answers >= len(msgs) {
		t.Errorf("read %d bytes (%d answers of %d), want at most %d", len(body), answers, len(msgs), limit)
	}
	checkAuthorized(t, addr)
}

// Under a flood of silent sockets, an authorized client's idle keep-alive
// connection is kept: connections that never sent a request are shed
// first, so the client's next request reuses its connection.
func TestEdgeKeepAliveOutlivesFlood(t *testing.T) {
	addr := attackGateway(t, Options{HeaderTimeout: time.Minute})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: bearerTransportOver{tr: tr}}
	reused := func() bool {
		var got bool
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { got = i.Reused }})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/livez", nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return got
	}
	reused()
	silent := dialMany(t, addr, 1100, "")
	// Once the 75th silent one is shed, every one has been accepted: 76
	// had to go for 1,101 connections to fit in 1,024 slots.
	if _, ok := closedWithin(silent[74], 5*time.Second); !ok {
		t.Fatal("no silent connection was shed")
	}
	if !reused() {
		t.Error("the authorized client's idle connection was shed for silent ones")
	}
}

// On stdio, a request whose id would be answered under another (1.5 as 1,
// 2^64+1 as -2^63) is refused with -32600 under the id it sent, and the
// session goes on.
func TestStdioInexactIDs(t *testing.T) {
	c := connectRaw(t, newGateway(t, tool.NewRegistry(), Options{}))
	for _, id := range []string{"1.5", "18446744073709551617", "9007199254740993"} {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if m := c.response(id); m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "cannot be answered exactly") {
			t.Errorf("id %s: %+v %s, want -32600", id, m.Error, m.Result)
		}
	}
	if m := c.request("ping", `{}`); m.Error != nil {
		t.Errorf("ping after: %+v", m.Error)
	}
}

// With the default limits, local clients (all on 127.0.0.1, one client to
// the gateway) holding every stream slot they may (three quarters of the
// budget) still leave a new local client room for its POSTs: the
// per-address cap is above the stream budget.
func TestEdgeStreamsFromOneAddress(t *testing.T) {
	addr := attackGateway(t, Options{})
	needFDs(t, 4*DefaultMaxConnections)
	opened := 0
	for opened <= DefaultMaxConnections {
		if openStream(t, addr) != http.StatusOK {
			break
		}
		opened++
	}
	if budget := DefaultMaxConnections / 2; opened != budget-budget/4 {
		t.Errorf("%d streams opened, want one client's share of the budget, %d", opened, budget-budget/4)
	}
	checkAuthorized(t, addr)
}

// A body over the SDK's 4 MiB is refused, 413, however it comes: one
// that declares its size is refused before a byte of it is read (the
// socket sends only headers, and the answer comes all the same), a chunked
// one once the limit is passed; one shorter than it declared is a bad
// request. An authorized client is served meanwhile.
func TestEdgeBodyBounded(t *testing.T) {
	addr := attackGateway(t, Options{BodyTimeout: 5 * time.Second})
	auth := "Authorization: Bearer " + attackToken + "\r\n"
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	for _, tc := range []struct{ name, request, want string }{
		{"declared over the limit, unsent", head + "Content-Length: " + strconv.Itoa(maxBody+1) + "\r\n\r\n", "HTTP/1.1 413 "},
		{"shorter than declared", head + "Content-Length: 100\r\nConnection: close\r\n\r\n{\"jsonrpc\":", "HTTP/1.1 400 "},
	} {
		c := dialMany(t, addr, 1, tc.request)[0]
		if tc.want == "HTTP/1.1 400 " {
			c.(*net.TCPConn).CloseWrite() // the body ends early
		}
		if sent, ok := closedWithin(c, 8*time.Second); !ok || !strings.HasPrefix(sent, tc.want) {
			t.Errorf("%s: got %q (closed: %v), want %q… and the connection closed", tc.name, sent, ok, tc.want)
		}
	}

	// Chunked, with no size declared: read up to the limit, then refused.
	big := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`), strings.NewReader(strings.Repeat("x", maxBody)), strings.NewReader(`"}}`))
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", big)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+attackToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if req.ContentLength != 0 || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a chunked body over the limit (declared %d): %s, want 413", req.ContentLength, resp.Status)
	}
	checkAuthorized(t, addr)
}

// Clients that declare 4 MiB bodies and send them slowly hold no more
// memory than they sent: 50 of them, authorized, each one byte in, leave
// the live heap far below the 200 MiB their declared sizes add up to.
func TestEdgeSlowBigBodiesBounded(t *testing.T) {
	addr := attackGateway(t, Options{BodyTimeout: time.Minute})
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + attackToken + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: " + strconv.Itoa(maxBody) + "\r\n\r\n{"
	before := liveHeap()
	dialMany(t, addr, 50, head)
	checkAuthorized(t, addr) // served after the 50 were read up to their bodies
	grown := int64(liveHeap()) - int64(before)
	t.Logf("live heap grew by %d MiB with 50 slow declared 4 MiB bodies", grown>>20)
	if grown > 32<<20 {
		t.Errorf("live heap grew by %d MiB with 50 slow declared 4 MiB bodies, want under 32 MiB", grown>>20)
	}
}
