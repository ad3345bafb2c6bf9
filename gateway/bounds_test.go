package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A session with MaxCallsPerSession calls in flight has the next one
// refused at once with a JSON-RPC error naming the limit; once one ends,
// calls are admitted again.
func TestCallsPerSessionBounded(t *testing.T) {
	reg, release, started := blockingTools(t)
	c := connectRaw(t, newGateway(t, reg, Options{MaxCallsPerSession: 2}))
	for id := 101; id <= 102; id++ {
		c.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"block"}}`)
		waitSignal(t, started, "a blocking call to start")
	}
	refused := c.request("tools/call", `{"name":"quick"}`)
	if refused.Error == nil || !strings.Contains(refused.Error.Message, "too many tool calls in flight on this session (the gateway's limit is 2)") {
		t.Fatalf("third call: %+v, want a JSON-RPC error naming the limit", refused)
	}
	close(release)
	for answered := map[string]bool{}; len(answered) < 2; {
		var m wireMessage
		if err := json.Unmarshal(waitSignal(t, c.lines, "the blocked calls' answers"), &m); err != nil {
			t.Fatal(err)
		}
		if id := string(m.ID); id == "101" || id == "102" {
			answered[id] = true
			if m.Error != nil {
				t.Errorf("blocked call %s: %+v", id, m.Error)
			}
		}
	}
	if m := c.request("tools/call", `{"name":"quick"}`); m.Error != nil {
		t.Errorf("a call after the others ended: %+v", m.Error)
	}
}

// Past MaxCalls calls in flight on the whole gateway, whatever their
// sessions, a call is refused at once with a JSON-RPC error naming the
// limit, never queued; the slots come back as calls end.
func TestCallsBoundedOverall(t *testing.T) {
	reg, release, started := blockingTools(t)
	g := newGateway(t, reg, Options{MaxCalls: 3, MaxCallsPerSession: 2})
	a, b := connectRaw(t, g), connectRaw(t, g)
	for _, send := range []struct {
		c  *rawClient
		id string
	}{{a, "101"}, {a, "102"}, {b, "201"}} {
		send.c.send(`{"jsonrpc":"2.0","id":` + send.id + `,"method":"tools/call","params":{"name":"block"}}`)
		waitSignal(t, started, "a blocking call to start")
	}
	refused := b.request("tools/call", `{"name":"quick"}`)
	if refused.Error == nil || !strings.Contains(refused.Error.Message, "too many tool calls in flight on the gateway (the gateway's limit is 3)") {
		t.Fatalf("fourth call: %+v, want a JSON-RPC error naming the gateway's limit", refused)
	}
	close(release)
	b.response("201")
	if m := b.request("tools/call", `{"name":"quick"}`); m.Error != nil {
		t.Errorf("a call after one ended: %+v", m.Error)
	}
	for answered := map[string]bool{}; len(answered) < 2; {
		var m wireMessage
		if err := json.Unmarshal(waitSignal(t, a.lines, "the blocked calls' answers"), &m); err != nil {
			t.Fatal(err)
		}
		if id := string(m.ID); id == "101" || id == "102" {
			answered[id] = true
		}
	}
	g.mu.Lock()
	left := g.inFlight
	g.mu.Unlock()
	if left != 0 {
		t.Errorf("%d call slots held after every call ended", left)
	}
}

// Abusive connections are all closed within 20 s while an authorized
// client is served: 300 that never finish their headers (closed at
// HeaderTimeout) and 200 keep-alive ones that got 401 (closed at once,
// Connection: close), so a flood holds no file descriptors.
func TestAbusiveConnectionsClosed(t *testing.T) {
	reg := tool.NewRegistry()
	opts := Options{BearerToken: "s3cret", HeaderTimeout: 2 * time.Second}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	addr := strings.TrimPrefix(base, "http://")
	start := time.Now()
	var conns []net.Conn
	dial := func() net.Conn {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(start.Add(20 * time.Second))
		conns = append(conns, conn)
		return conn
	}
	for range 300 {
		io.WriteString(dial(), "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n") // never ends its headers
	}
	for i := range 200 {
		conn := dial()
		io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\nConnection: keep-alive\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Fatalf("connection %d: status %d, close %v; want 401 and Connection: close", i, resp.StatusCode, resp.Close)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/healthz", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("authorized client during the flood: status %d", resp.StatusCode)
	}
	for i, conn := range conns {
		// The server closes its end: a read ends (EOF, or a reset after an
		// unread 401 body), not at the 20 s deadline.
		_, err := io.Copy(io.Discard, conn)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("connection %d still open 20 s after the flood began", i)
		}
		conn.Close()
	}
	t.Logf("all %d connections closed %v after the flood began", len(conns), time.Since(start).Round(time.Millisecond))
}

// Past MaxSessions, a new session closes the one idle longest: sessions
// stay bounded however many clients come and never leave.
func TestSessionsBounded(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("quick", textBody("ok"))); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, reg, Options{MaxSessions: 3})
	var clients []*client
	for range 6 {
		c := connectWithoutListen(t, g)
		c.names(t) // some activity, in connection order
		clients = append(clients, c)
	}
	count := func() int {
		n := 0
		for range g.server.Sessions() {
			n++
		}
		return n
	}
	waitFor(t, "sessions to be evicted down to the limit", func() bool { return count() <= 3 })
	for i, c := range clients[:3] {
		done := make(chan error, 1)
		go func() { done <- c.session.Wait() }()
		waitSignal(t, done, "evicted session "+strconv.Itoa(i)+" to end")
	}
	for i, c := range clients[3:] {
		if got := texts(c.call(t, "quick", `{}`)); len(got) != 1 || got[0] != "ok" {
			t.Errorf("recent session %d: %v", i+3, got)
		}
	}
}

// A tools/call is activity: past MaxSessions, a session whose last
// request was a call is kept over one idle since before it (a client
// that only calls tools must not be evicted as if idle).
func TestCallKeepsSessionFromEviction(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("quick", textBody("ok"))); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, reg, Options{MaxSessions: 2})
	caller := connectWithoutListen(t, g)
	caller.names(t)
	idle := connectWithoutListen(t, g)
	idle.names(t)
	caller.call(t, "quick", `{}`) // its only activity since idle's
	connectWithoutListen(t, g).names(t)
	done := make(chan error, 1)
	go func() { done <- idle.session.Wait() }()
	waitSignal(t, done, "the session idle longest to be evicted")
	if got := texts(caller.call(t, "quick", `{}`)); len(got) != 1 || got[0] != "ok" {
		t.Errorf("the session that called last: %v", got)
	}
}

// A POST without a session that does not initialize one (a 2026-07-28
// client's server/discover probe, a ping) gets a session of the SDK's
// that lives for that request only. At MaxSessions, such a request
// evicted the client session idle longest, though it leaves no session
// behind: a stranger's probe closed a client's session, and each new
// go-sdk client at the limit (which probes before it initializes)
// evicted two.
func TestSessionlessProbesEvictNothing(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("quick", textBody("ok"))); err != nil {
		t.Fatal(err)
	}
	opts := Options{MaxSessions: 3}
	g := newGateway(t, reg, opts)
	base := serveHTTP(t, g, opts)
	var clients []*client
	for range 3 {
		c := connectHTTP(t, base, nil)
		c.names(t)
		clients = append(clients, c)
	}
	stranger := &rawHTTP{t: t, endpoint: base + "/mcp"}
	for range 3 {
		stranger.request("server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
		stranger.request("ping", `{}`)
	}
	g.evicting.Wait() // the sessions evicted, if any, are closed
	for i, c := range clients {
		res, err := c.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "quick", Arguments: map[string]any{}})
		if err != nil || len(texts(res)) != 1 {
			t.Errorf("client %d after the probes: %v, %v", i, res, err)
		}
	}
}

// Thousands of sessions that never leave: memory stays that of
// MaxSessions sessions, and nothing is logged above debug level per
// session.
func TestManySessionsBounded(t *testing.T) {
	reg := tool.NewRegistry()
	log := mcptest.NewLog()
	g := newGateway(t, reg, Options{MaxSessions: 100, Logger: log.Logger()})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	base := serveHTTP(t, g, Options{})
	for i := range 2000 {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	count := func() int {
		n := 0
		for range g.server.Sessions() {
			n++
		}
		return n
	}
	waitFor(t, "sessions evicted down to 100", func() bool { return count() <= 100 })
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("2000 sessions opened, %d open; heap %+d KiB", count(), (int64(after.HeapAlloc)-int64(before.HeapAlloc))>>10)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 64<<20 {
		t.Errorf("heap grew %d MiB for 100 open sessions", grown>>20)
	}
	if text := log.Text(); strings.Count(text, "INFO") > 10 {
		t.Errorf("%d info lines for 2000 sessions:\n%s", strings.Count(text, "INFO"), text[:2000])
	}
}

// batchOf is a JSON-RPC batch of n tools/call requests of name, ids from
// first.
func batchOf(name string, first, n int) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(first+i) + `,"method":"tools/call","params":{"name":"` + name + `"}}`
	}
	return "[" + strings.Join(calls, ",") + "]"
}

// On a protocol that still has batches (2025-03-26), a batch with an
// invalid member has its valid members answered, in one array, and the
// invalid one refused on its own; a batch over sdkwire.MaxBatch is refused
// whole.
func TestBatches(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("quick", textBody("ok"))); err != nil {
		t.Fatal(err)
	}
	c := connectRawAt(t, newGateway(t, reg, Options{}), "2025-03-26")
	c.send(`[{"jsonrpc":"2.0","id":1001,"method":"tools/call","params":{"name":"quick"}},{"id":"bad"},{"jsonrpc":"2.0","id":1002,"method":"tools/call","params":{"name":"quick"}}]`)
	var refused wireMessage
	if err := json.Unmarshal(waitSignal(t, c.lines, "the invalid member's error"), &refused); err != nil || string(refused.ID) != `"bad"` || refused.Error == nil || refused.Error.Code != -32600 {
		t.Errorf("first line: %+v, %v; want -32600 for id \"bad\"", refused, err)
	}
	var answers []wireMessage
	if err := json.Unmarshal(waitSignal(t, c.lines, "the batch's answers"), &answers); err != nil || len(answers) != 2 {
		t.Fatalf("batch answer: %+v, %v; want an array of 2", answers, err)
	}
	for _, a := range answers {
		if a.Error != nil || !strings.Contains(string(a.Result), `"text":"ok"`) {
			t.Errorf("batched call %s: %+v", a.ID, a)
		}
	}
	c.send(batchOf("quick", 2000, 1001))
	if err := json.Unmarshal(waitSignal(t, c.lines, "the long batch's refusal"), &refused); err != nil || refused.Error == nil || !strings.Contains(refused.Error.Message, "a batch of 1001 messages is over the limit of 1000") {
		t.Errorf("long batch: %+v, %v", refused, err)
	}
}

// 20,000 calls in batches to a tool that never answers: the calls over
// MaxCallsPerSession are refused at once, the rest park, and the gateway's
// heap stays far under 300 MB; closing the session ends the parked calls.
func TestCallFloodBounded(t *testing.T) {
	reg := tool.NewRegistry()
	parked := make(chan struct{}, 20000)
	if _, err := reg.Register(goTool("never", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		parked <- struct{}{}
		<-ctx.Done()
		return tool.Output{}, ctx.Err()
	})); err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := connectRawAt(t, newGateway(t, reg, Options{}), "2025-03-26")
	for b := range 20 {
		c.send(batchOf("never", 1000*(b+1), 1000))
	}
	for range DefaultMaxCallsPerSession {
		waitSignal(t, parked, "a call to park")
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew %d KiB for 20,000 calls (%d parked)", grown>>10, DefaultMaxCallsPerSession)
	if grown > 300<<20 {
		t.Errorf("heap grew %d MiB, want under 300", grown>>20)
	}
	select {
	case <-parked:
		t.Error("more calls parked than MaxCallsPerSession")
	case <-time.After(100 * time.Millisecond):
	}
}

// blockingTools is a registry of "quick", which answers at once, and
// "block", which signals started and answers once release is closed (or
// its call is cancelled).
func blockingTools(t *testing.T) (reg *tool.Registry, release chan struct{}, started chan struct{}) {
	t.Helper()
	reg = tool.NewRegistry()
	release, started = make(chan struct{}), make(chan struct{}, 10)
	if _, err := reg.Register(goTool("block", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return tool.Output{Content: []tool.Content{tool.Text("released")}}, nil
	}), goTool("quick", textBody("ok"))); err != nil {
		t.Fatal(err)
	}
	return reg, release, started
}

// An identity that opens sessions in a loop past MaxSessions closes its
// own, idle longest first, not another identity's: alice's sessions,
// idle longer than any of bob's, stay open while bob opens ten.
func TestSessionEvictionTakesFromTheLargestHolder(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("quick", textBody("ok"))); err != nil {
		t.Fatal(err)
	}
	opts := Options{MaxSessions: 4, Authenticate: aliceOrBob}
	g := newGateway(t, reg, opts)
	base := serveHTTP(t, g, opts)
	var alice []*rawHTTP
	for range 2 {
		alice = append(alice, openRawHTTP(t, base, "alice-secret"))
	}
	for range 10 {
		openRawHTTP(t, base, "bob-secret").request("tools/list", `{}`)
	}
	g.evicting.Wait()
	for i, c := range alice {
		if m := c.request("tools/call", `{"name":"quick","arguments":{}}`); m.Error != nil || !strings.Contains(string(m.Result), "ok") {
			t.Errorf("alice's session %d after bob opened ten: %s %+v", i, m.Result, m.Error)
		}
	}
}

// One identity holds at most three quarters of the gateway's calls in
// flight, however many sessions it opens: with alice holding her share
// of slow calls, her next is refused naming her share, and bob's calls
// are still served.
func TestCallsShareOfOneIdentity(t *testing.T) {
	reg, release, started := blockingTools(t)
	opts := Options{MaxCalls: 8, Authenticate: aliceOrBob}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	done := make(chan struct{}, 6)
	for range 6 {
		c := openRawHTTP(t, base, "alice-secret")
		go func() {
			c.request("tools/call", `{"name":"block","arguments":{}}`)
			done <- struct{}{}
		}()
		waitSignal(t, started, "alice's slow call to start")
	}
	m := openRawHTTP(t, base, "alice-secret").request("tools/call", `{"name":"quick","arguments":{}}`)
	if m.Error == nil || !strings.Contains(m.Error.Message, "too many tool calls in flight for this identity (the gateway's limit is 6)") {
		t.Errorf("alice's call past her share: %s %+v, want it refused naming her share", m.Result, m.Error)
	}
	if m := openRawHTTP(t, base, "bob-secret").request("tools/call", `{"name":"quick","arguments":{}}`); m.Error != nil {
		t.Errorf("bob's call while alice holds her share: %+v", m.Error)
	}
	close(release)
	for range 6 {
		waitSignal(t, done, "alice's slow calls to end")
	}
}

// One identity holds at most three quarters of the event streams: alice,
// holding her share, is refused another (503, naming her share), while
// bob still opens his.
func TestStreamsShareOfOneIdentity(t *testing.T) {
	opts := Options{MaxStreams: 4, Authenticate: aliceOrBob}
	base := serveHTTP(t, newGateway(t, tool.NewRegistry(), opts), opts)
	get := func(token string) *http.Response {
		resp := openRawHTTP(t, base, token).do(http.MethodGet)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	refusal := func(resp *http.Response) string { // a stream's body never ends
		if resp.StatusCode == http.StatusOK {
			return ""
		}
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	for i := range 3 {
		if resp := get("alice-secret"); resp.StatusCode != http.StatusOK {
			t.Fatalf("alice's stream %d: %s", i, resp.Status)
		}
	}
	resp := get("alice-secret")
	body := refusal(resp)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "3 event streams of yours are open") {
		t.Errorf("alice's stream past her share: %s %q, want 503 naming her share", resp.Status, body)
	}
	if resp := get("bob-secret"); resp.StatusCode != http.StatusOK {
		t.Errorf("bob's stream while alice holds her share: %s", resp.Status)
	}
	resp = get("bob-secret")
	body = refusal(resp)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "4 event streams are open, the gateway's limit") {
		t.Errorf("a stream past the budget: %s %q, want 503 naming the budget", resp.Status, body)
	}
}
