package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

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
