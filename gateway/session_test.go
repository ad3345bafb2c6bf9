package gateway

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpbridge/mcpbridge/tool"
)

// busySession is a stateful HTTP session holding one of everything the
// gateway keeps per session: a call parked for the client's answers with
// its question pending, a task running, its view, and a subscription (its
// GET event stream, where notifications and resource updates go), each
// with a signal of its end.
type busySession struct {
	*rawHTTP
	questionEnded <-chan struct{} // the parked call's backend question ended unanswered
	taskCancelled <-chan struct{} // the task's tool saw its context end
	streamEnded   <-chan struct{} // the subscription's response ended
}

// openBusySession opens a session on base and fills it. The client says
// 2026-07-28 in initialize and offers elicitation, so its calls park
// (asksByResult).
func openBusySession(t *testing.T, reg *tool.Registry, g *Gateway, base string, hc *http.Client, questionEnded <-chan struct{}, taskCancelled <-chan struct{}) *busySession {
	t.Helper()
	c := &rawHTTP{t: t, hc: hc, endpoint: base + "/mcp"}
	initialize(t, c)
	s := &busySession{rawHTTP: c, questionEnded: questionEnded, taskCancelled: taskCancelled}
	s.streamEnded = subscribe(t, c)
	waitFor(t, "the backend's tool listed", func() bool {
		_, ok := reg.Get("mcp__ask__confirm")
		return ok
	})
	parked := c.request("tools/call", `{"name":"mcp__ask__confirm","arguments":{"what":"deploy"}}`)
	if !strings.Contains(string(parked.Result), `"resultType":"input_required"`) {
		t.Fatalf("the call did not park: %s %+v", parked.Result, parked.Error)
	}
	task := c.request("tools/call", `{"name":"job","arguments":{},`+meta2026+`}`)
	if !strings.Contains(string(task.Result), `"resultType":"task"`) {
		t.Fatalf("no task: %s %+v", task.Result, task.Error)
	}
	books := g.books()
	if books["parked"] == 0 || books["tasks"] != 1 || books["sessions"] != 1 || books["views"] != 1 {
		t.Fatalf("the session holds less than it should: %v", books)
	}
	return s
}

// initialize opens c's session as a client of 2026-07-28 that offers
// elicitation.
func initialize(t *testing.T, c *rawHTTP) {
	t.Helper()
	m, resp := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if c.session = resp.Header.Get("Mcp-Session-Id"); c.session == "" {
		t.Fatalf("initialize: no session: %s %+v", m.Result, m.Error)
	}
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// subscribe opens c's GET event stream and returns a channel closed when
// it ends.
func subscribe(t *testing.T, c *rawHTTP) <-chan struct{} {
	t.Helper()
	resp := c.do(http.MethodGet)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the subscription: status %d", resp.StatusCode)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
	}()
	return ended
}

// A session ended any way a session ends (DELETE, eviction past
// MaxSessions, the idle timeout, Close) while it holds a parked call with
// its question pending, a task and a subscription leaves nothing behind:
// the backend's question, the task and the subscription end, and every
// table the gateway keeps per session (and its call slots) is empty, or,
// after an eviction, holds the evicting session alone. Close's end is
// complete when Close returns, with no goroutine left.
func TestSessionEndLeavesNothing(t *testing.T) {
	ways := []struct {
		name string
		opts Options
		end  func(t *testing.T, g *Gateway, s *busySession)
		left map[string]int
	}{
		{name: "DELETE", end: func(t *testing.T, _ *Gateway, s *busySession) {
			resp := s.do(http.MethodDelete)
			resp.Body.Close()
			if resp.StatusCode >= 300 {
				t.Fatalf("DELETE: status %d", resp.StatusCode)
			}
		}},
		{name: "evicted", opts: Options{MaxSessions: 1}, end: func(t *testing.T, _ *Gateway, s *busySession) {
			initialize(t, &rawHTTP{t: t, hc: s.hc, endpoint: s.endpoint})
		}, left: map[string]int{"sessions": 1, "byID": 1, "owners": 1}},
		{name: "idle timeout", opts: Options{idleTimeout: time.Second}, end: func(*testing.T, *Gateway, *busySession) {}},
		{name: "Close", end: func(t *testing.T, g *Gateway, s *busySession) {
			if err := g.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			// Ended by the time Close returns.
			if left := nonzero(g.books()); len(left) != 0 {
				t.Errorf("kept after Close returned: %v", left)
			}
		}},
	}
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			reg, newView := quickRegistry(t)
			way.opts.NewView = newView
			questionEnded := startConfirmBackend(t, reg, "2025-11-25")
			taskStarted, taskCancelled := make(chan struct{}), make(chan struct{})
			job := goTool("job", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
				close(taskStarted)
				<-ctx.Done()
				close(taskCancelled)
				return tool.Output{}, ctx.Err()
			})
			job.Background = true
			if _, err := reg.Register(job); err != nil {
				t.Fatal(err)
			}
			hc := &http.Client{Transport: &http.Transport{}}
			ignore := goleak.IgnoreCurrent()
			g := newGateway(t, reg, way.opts)
			base := serveHTTP(t, g, way.opts)
			s := openBusySession(t, reg, g, base, hc, questionEnded, taskCancelled)
			// A task cancelled before it ran would never say so.
			waitSignal(t, taskStarted, "the task started")

			way.end(t, g, s)
			waitSignal(t, s.questionEnded, "the parked call's question ended")
			waitSignal(t, s.taskCancelled, "the task cancelled")
			waitSignal(t, s.streamEnded, "the subscription ended")
			want := way.left
			var left map[string]int
			defer func() {
				if t.Failed() {
					t.Logf("kept: %v, want %v", left, want)
				}
			}()
			waitFor(t, "the session forgotten", func() bool {
				left = nonzero(g.books())
				return maps.Equal(left, want)
			})
			if way.name == "Close" {
				hc.CloseIdleConnections()
				goleak.VerifyNone(t, ignore)
			}
		})
	}
}

// nonzero is books without its zero counts (nil when all are).
func nonzero(books map[string]int) map[string]int {
	var n map[string]int
	for k, v := range books {
		if v != 0 {
			if n == nil {
				n = map[string]int{}
			}
			n[k] = v
		}
	}
	return n
}

// Close ends every client session before it returns: each one's Done
// (the tool.Session by which a backend keeps state per session) is
// closed and the gateway keeps nothing of any. Ended by goroutines Close
// did not wait for, a session could end after Close returned, and a
// backend closed next would still see it open.
func TestCloseEndsSessionsBeforeReturning(t *testing.T) {
	reg, newView := quickRegistry(t)
	g := New(reg, Options{NewView: newView})
	for range 32 {
		connectInMemory(t, g).call(t, "quick", `{}`)
	}
	g.mu.Lock()
	sessions := slices.Collect(maps.Keys(g.sessions))
	g.mu.Unlock()
	var done []<-chan struct{}
	for _, ss := range sessions {
		done = append(done, clientSession{g: g, session: ss}.Done())
	}
	if len(done) != 32 {
		t.Fatalf("%d sessions kept, want 32", len(done))
	}
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	open := 0
	for _, d := range done {
		select {
		case <-d:
		default:
			open++
		}
	}
	if open != 0 {
		t.Errorf("%d sessions not ended when Close returned", open)
	}
	if left := nonzero(g.books()); left != nil {
		t.Errorf("kept after Close returned: %v", left)
	}
}
