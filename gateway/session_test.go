package gateway

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpbridge/mcpbridge/tool"
)

// busySession is a stateful HTTP session (protocol 2025-11-25) holding
// one of everything the gateway keeps per session: a call in flight with
// its backend's question put to the client in the middle of it and
// pending, a task running, its view, and a subscription (its GET event
// stream, where notifications and resource updates go), each with a
// signal of its end.
type busySession struct {
	*rawHTTP
	questionEnded <-chan struct{} // the call's backend question ended unanswered
	callEnded     <-chan struct{} // the call's response (its event stream) ended
	leaveCall     func()          // the client drops the call's response, as one whose connection broke
	taskCancelled <-chan struct{} // the task's tool saw its context end
	streamEnded   <-chan struct{} // the subscription's response ended
}

// openBusySession opens a session on base and fills it. The client
// initializes at 2025-11-25 and offers elicitation, so a backend's
// question reaches it in the middle of the call, as a request of the
// gateway's (on the call's stream or the GET stream, as the gateway
// routes it).
func openBusySession(t *testing.T, reg *tool.Registry, g *Gateway, base string, hc *http.Client, questionEnded <-chan struct{}, taskCancelled <-chan struct{}) *busySession {
	t.Helper()
	c := &rawHTTP{t: t, hc: hc, endpoint: base + "/mcp"}
	initialize(t, c)
	s := &busySession{rawHTTP: c, questionEnded: questionEnded, taskCancelled: taskCancelled}
	asked := make(chan wireMessage, 8)
	s.streamEnded = subscribe(t, c, asked)
	waitFor(t, "the backend's tool listed", func() bool {
		_, ok := reg.Get("mcp__ask__confirm")
		return ok
	})
	call := c.postAside(`{"jsonrpc":"2.0","id":"asking","method":"tools/call","params":{"name":"mcp__ask__confirm","arguments":{"what":"deploy"}}}`)
	s.callEnded, s.leaveCall = readEvents(call, asked), func() { call.Body.Close() }
	if q := waitSignal(t, asked, "the backend's question in the middle of the call"); q.Method != "elicitation/create" || !strings.Contains(string(q.Params), "Go on with deploy?") {
		t.Fatalf("the call did not ask in its middle: %s %s %s", q.Method, q.Params, q.Result)
	}
	taskOf(t, c.request("tools/call", `{"name":"job","arguments":{},"task":{}}`))
	books := g.books()
	if books["asks"] == 0 || books["slots"] == 0 || books["tasks"] != 1 || books["sessions"] != 1 || books["views"] != 1 {
		t.Fatalf("the session holds less than it should: %v", books)
	}
	return s
}

// postAside posts frame in c's session and returns the response without
// reading it.
func (c *rawHTTP) postAside(frame string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.endpoint, strings.NewReader(frame))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := cmp.Or(c.hc, http.DefaultClient).Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("POST %s: status %d", frame, resp.StatusCode)
	}
	return resp
}

// subscribe opens c's GET event stream, whose requests of the gateway's
// go to requests, and returns a channel closed when it ends.
func subscribe(t *testing.T, c *rawHTTP, requests chan<- wireMessage) <-chan struct{} {
	t.Helper()
	resp := c.do(http.MethodGet)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the subscription: status %d", resp.StatusCode)
	}
	return readEvents(resp, requests)
}

// readEvents reads the event stream of resp to its end from a goroutine
// of its own, answering nothing: each request of the gateway's on it goes
// to requests (dropped when full). The channel returned is closed once
// the stream ended.
func readEvents(resp *http.Response, requests chan<- wireMessage) <-chan struct{} {
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m wireMessage
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if ok && json.Unmarshal([]byte(data), &m) == nil && m.Method != "" && len(m.ID) > 0 {
				select {
				case requests <- m:
				default:
				}
			}
		}
	}()
	return ended
}

// initialize opens c's session as a client of 2025-11-25 that offers
// elicitation.
func initialize(t *testing.T, c *rawHTTP) {
	t.Helper()
	m, resp := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if c.session = resp.Header.Get("Mcp-Session-Id"); c.session == "" {
		t.Fatalf("initialize: no session: %s %+v", m.Result, m.Error)
	}
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// A session ended any way a session ends (DELETE, eviction past
// MaxSessions, the idle timeout, Close) while it holds a call with its
// backend's question pending at the client, a task and a subscription
// leaves nothing behind: the backend's question, the call's stream, the
// task and the subscription end, and every table the gateway keeps per
// session (and its call slots) is empty, or, after an eviction, holds the
// evicting session alone. Close's end is complete when Close returns,
// with no goroutine left.
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
		// Idle: no POST of the session's runs, the call's left by a
		// client whose connection broke (the call waits to be resumed).
		{name: "idle timeout", opts: Options{idleTimeout: time.Second}, end: func(_ *testing.T, _ *Gateway, s *busySession) { s.leaveCall() }},
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
			waitSignal(t, s.questionEnded, "the call's question ended")
			waitSignal(t, s.callEnded, "the call's stream ended")
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
