package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
	"github.com/mcpbridge/mcpbridge/tool"
)

// hungReplica listens as a replica whose process is stopped (SIGSTOP)
// does: its connections are accepted (by the kernel) and never answered.
// It returns its base URL and a channel that receives once for each
// connection the other side closed.
func hungReplica(t *testing.T) (string, <-chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	closed := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(io.Discard, c) // reads what comes, answers nothing
				closed <- struct{}{}
			}()
		}
	}()
	return "http://" + ln.Addr().String(), closed
}

// A request for a session whose replica hangs (stopped, not dead: it
// accepts connections and answers nothing) is answered 503 with
// Retry-After within seconds, saying the owning replica does not answer;
// the connections to the hung replica are closed and its record is kept
// (it may come back; its record lapses if it does not). The forward waited
// for as long as its client did.
func TestForwardToAHungOwner(t *testing.T) {
	_, ts := openTaskStore(t)
	opts := Options{Gate: sharedGate{ts: ts, lease: time.Minute}}
	b := serveHTTP(t, newGateway(t, tool.NewRegistry(), opts), opts)
	hung, closed := hungReplica(t)
	if err := ts.PutOwners(t.Context(), []string{"session:stopped"}, hung, time.Minute); err != nil {
		t.Fatal(err)
	}
	client := &rawHTTP{t: t, endpoint: b + "/mcp", session: "stopped", hc: &http.Client{Timeout: 20 * time.Second}}
	start := time.Now()
	m, resp := client.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	took := time.Since(start)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(m.Error.Message, "does not answer") {
		t.Fatalf("a session whose replica hangs: %s %q %+v, want 503 with Retry-After saying its replica does not answer", resp.Status, resp.Header.Get("Retry-After"), m.Error)
	}
	if limit := ownerCheckAfter + ownerCheckWait + 2*time.Second; took > limit {
		t.Errorf("answered after %v, want within %v", took, limit)
	}
	for range 2 { // the forward's connection and the check's
		waitSignal(t, closed, "a connection to the hung replica closed")
	}
	if owner, ok, err := ts.Owner(t.Context(), "session:stopped"); !ok || err != nil || owner != hung {
		t.Errorf("the hung replica's record: %q %v (%v), want it kept", owner, ok, err)
	}
}

// A live owner's long call, answered as one JSON body (headers only at
// its end), is not cut however long it runs before answering: the
// forward checks that the owner is alive, not how long it takes, and an
// owner that authenticates is alive when it refuses the check (401).
func TestForwardOfALongCallToALiveOwner(t *testing.T) {
	reg := tool.NewRegistry()
	long := ownerCheckAfter + time.Second // past the first check
	slow := goTool("slow", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		select {
		case <-time.After(long):
			return tool.Output{Content: []tool.Content{tool.Text("done")}}, nil
		case <-ctx.Done():
			return tool.Output{}, ctx.Err()
		}
	})
	if _, err := reg.Register(slow); err != nil {
		t.Fatal(err)
	}
	_, a, b, _ := replicaPair(t, reg, Options{Authenticate: aliceOrBob}, time.Minute)
	// 2025-06-18: no priming event, so the answer's headers come with it.
	post := func(base, session, frame string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(frame))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer alice-secret")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := (&http.Client{Timeout: 3 * long}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	init := post(a, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	init.Body.Close()
	session := init.Header.Get("Mcp-Session-Id")
	post(a, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	resp := post(b, session, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), `"text":"done"`) {
		t.Errorf("a %v call forwarded to its live owner: %s %q %s, want 200 and its result as one JSON body", long, resp.Status, resp.Header.Get("Content-Type"), body)
	}
}

// stoppableReplica is the network in front of the replica at base, which
// a test stops as SIGSTOP stops the replica's process: from then on the
// connections open carry nothing either way, and new ones reach a
// hungReplica. frozenClosed receives once for each connection open when
// it stopped that the other side closed since.
type stoppableReplica struct {
	url          string
	hung         string
	stopped      atomic.Bool
	frozenClosed chan struct{}
}

func stoppable(t *testing.T, base string) *stoppableReplica {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	hung, _ := hungReplica(t)
	s := &stoppableReplica{url: "http://" + ln.Addr().String(), hung: hung, frozenClosed: make(chan struct{}, 16)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.carry(c, strings.TrimPrefix(base, "http://"))
		}
	}()
	return s
}

func (s *stoppableReplica) stop() { s.stopped.Store(true) }

// carry relays c to the replica at addr, or to the hung one once
// stopped.
func (s *stoppableReplica) carry(c net.Conn, addr string) {
	defer c.Close()
	if s.stopped.Load() {
		addr = strings.TrimPrefix(s.hung, "http://")
	}
	u, err := net.Dial("tcp", addr)
	if err != nil {
		return // the test is over
	}
	defer u.Close()
	go s.pass(c, u)
	s.pass(u, c)
	if s.stopped.Load() && addr != strings.TrimPrefix(s.hung, "http://") {
		s.frozenClosed <- struct{}{}
	}
}

// pass copies src to dst until src ends, dropping what comes once
// stopped; dst is closed after.
func (s *stoppableReplica) pass(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !s.stopped.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// streamEnds checks that resp, the answer to what, is an event stream,
// and returns a channel closed once the stream ends (its connection
// closed).
func streamEnds(t *testing.T, what string, resp *http.Response) <-chan struct{} {
	t.Helper()
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %s %q %s, want an event stream", what, resp.Status, resp.Header.Get("Content-Type"), b)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		io.Copy(io.Discard, resp.Body)
	}()
	return ended
}

// Streams forwarded from a replica that then hangs (stopped: it accepts
// connections and answers nothing) end once it leaves its /livez
// unanswered, a session's GET stream and a call's SSE answer alike:
// their client's connection is closed, and the client that opens the
// stream again is answered 503 with Retry-After. They stayed open for
// good, their client never told. A live replica's quiet stream, forwarded
// meanwhile, goes on past every check.
func TestForwardedStreamOfAnOwnerThatHangs(t *testing.T) {
	reg := tool.NewRegistry()
	wait := goTool("wait", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		<-ctx.Done()
		return tool.Output{}, ctx.Err()
	})
	if _, err := reg.Register(wait); err != nil {
		t.Fatal(err)
	}
	srv, ts := openTaskStore(t)
	advertised := &atomic.Pointer[string]{}
	aOpts := Options{Gate: advertisingGate{sharedGate{ts: ts, lease: time.Minute}, advertised}}
	a := serveHTTP(t, newGateway(t, reg, aOpts), aOpts)
	link := stoppable(t, a)
	advertised.Store(&link.url) // the other replica reaches a through link
	tsB, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: srv.URL(), KeyPrefix: t.Name() + ":"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tsB.Close() })
	logs := mcptest.NewLog()
	bOpts := Options{Gate: sharedGate{ts: tsB, lease: time.Minute}, Logger: logs.Logger()}
	b := serveHTTP(t, newGateway(t, reg, bOpts), bOpts)

	onA := openRawHTTP(t, a, "")
	onB := openRawHTTP(t, b, "")
	viaB := &rawHTTP{t: t, endpoint: b + "/mcp", session: onA.session, hc: &http.Client{Timeout: 20 * time.Second}}
	viaA := &rawHTTP{t: t, endpoint: a + "/mcp", session: onB.session}
	live := streamEnds(t, "a live replica's GET stream", viaA.do(http.MethodGet))
	getEnded := streamEnds(t, "the GET stream", viaB.do(http.MethodGet))
	callEnded := streamEnds(t, "the call", viaB.postAside(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}}`))

	link.stop()
	stopped := time.Now()
	limit := ownerCheckAfter + ownerCheckWait + 2*time.Second
	for what, ended := range map[string]<-chan struct{}{"the GET stream": getEnded, "the call's SSE answer": callEnded} {
		select {
		case <-ended:
		case <-time.After(limit - time.Since(stopped)):
			t.Fatalf("%s forwarded from a replica that hangs is still open %v after it stopped, want it ended within %v", what, time.Since(stopped), limit)
		}
	}
	for range 2 {
		waitSignal(t, link.frozenClosed, "a stream's connection to the stopped replica closed")
	}
	said := 0
	for _, r := range logs.Records() {
		if r.Level == slog.LevelWarn && strings.Contains(r.Message, "does not answer") && strings.Contains(r.Message, "the answer it was streaming is ended here") && strings.Contains(r.String(), "name=session:"+onA.session) {
			said++
		}
	}
	if said != 2 {
		t.Errorf("%d warnings say a stream was ended for its replica not answering, want 2:\n%s", said, logs.Text())
	}
	again := viaB.do(http.MethodGet)
	body, _ := io.ReadAll(again.Body)
	again.Body.Close()
	if again.StatusCode != http.StatusServiceUnavailable || again.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "does not answer") {
		t.Errorf("the GET stream opened again: %s %q %s, want 503 with Retry-After saying its replica does not answer", again.Status, again.Header.Get("Retry-After"), body)
	}
	select {
	case <-live:
		t.Errorf("a quiet stream forwarded from a live replica ended")
	default:
	}
}

// The forwards to one owner share its liveness checks: sixteen calls
// held at a live owner past the first check ask its /livez once, not
// once each (a replica with a thousand streams forwarded to one owner
// asked it a hundred times a second).
func TestForwardsToOneOwnerShareItsChecks(t *testing.T) {
	_, ts := openTaskStore(t)
	opts := Options{Gate: sharedGate{ts: ts, lease: time.Minute}}
	b := serveHTTP(t, newGateway(t, tool.NewRegistry(), opts), opts)
	var checks, held atomic.Int32
	release := make(chan struct{})
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/livez" {
			checks.Add(1)
			return
		}
		held.Add(1)
		<-release // a long call, answered as one body at its end
	}))
	defer owner.Close()
	defer close(release)
	if err := ts.PutOwners(t.Context(), []string{"session:held"}, owner.URL, time.Minute); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const forwards = 16
	for i := range forwards {
		go func() {
			frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b+"/mcp", strings.NewReader(frame))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", "held")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	mcptest.Eventually(t, 10*time.Second, func() bool { return held.Load() == forwards }, "every forward to reach the owner")
	time.Sleep(ownerCheckAfter + ownerCheckShared/2) // past the first check of each
	if n := checks.Load(); n < 1 || n > 2 {
		t.Errorf("%d forwards held at one live owner past their first check asked its /livez %d times, want once (twice at most, had their checks fallen a second apart)", forwards, n)
	}
}
