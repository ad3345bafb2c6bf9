package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A client that ends its session (DELETE) while a call of its runs: the
// call is cancelled at once, the DELETE answered, and the gateway keeps
// nothing of the session. The DELETE used to wait for the call to end on
// its own (the backend never heard of the cancellation), and the session
// stayed in the gateway's books until the next client initialized.
func TestDeleteEndsTheSessionsCalls(t *testing.T) {
	reg, release, started := blockingTools(t)
	defer close(release)
	g := newGateway(t, reg, Options{})
	base := serveHTTP(t, g, Options{})
	c := connectHTTP(t, base, nil)
	id := c.session.ID()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	called := make(chan error, 1)
	go func() {
		_, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: "block"})
		called <- err
	}()
	waitSignal(t, started, "the blocking call to start")

	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, base+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", id)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("DELETE: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("DELETE: status %d", resp.StatusCode)
	}
	// The tool returns only when its context ends (or release closes, at
	// the end of the test): an answer before that is the cancellation.
	t.Logf("DELETE answered in %v with a call in flight", time.Since(start).Round(time.Millisecond))
	waitFor(t, "the session to be forgotten", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		for ss := range g.sessions {
			if ss.ID() == id {
				return false
			}
		}
		return g.byID[id] == nil && g.sessionByID(id) == nil
	})
	<-called // the client's call ends one way or another with its session
}

// A session that ends while Close runs, once the gateway is closed,
// leaves its tasks to Close (end): Close still waits for them, so when
// it returns no task's call holds a slot or is in flight. Close took the
// tasks of the sessions still there some time after it closed the
// gateway, missed such a session's, and returned with its task's call
// still counted. Here the session ends while Close waits for a sync in
// progress. In a synctest bubble the task's call, slow to end once
// cancelled, ends only once all else waits: a Close that did not wait
// for it has returned by then, with no timing bet.
func TestCloseWaitsForTasksOfASessionEndedMeanwhile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := tool.NewRegistry()
		started, ended := make(chan struct{}), make(chan struct{})
		job := goTool("job", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			defer close(ended)
			close(started)
			<-ctx.Done()
			time.Sleep(time.Second)
			return tool.Output{}, ctx.Err()
		})
		job.Background = true
		if _, err := reg.Register(job); err != nil {
			t.Fatal(err)
		}
		var hold atomic.Bool
		syncing, resume := make(chan struct{}), make(chan struct{})
		g := newGateway(t, reg, Options{ServerOrder: func() []string {
			if hold.CompareAndSwap(true, false) {
				close(syncing)
				<-resume
			}
			return nil
		}})
		c := connectRaw(t, g)
		taskOf(t, c.request("tools/call", `{"name":"job","arguments":{},"task":{}}`))
		waitSignal(t, started, "the task started")

		hold.Store(true)
		if _, err := reg.Register(goTool("other", textBody("x"))); err != nil {
			t.Fatal(err)
		}
		waitSignal(t, syncing, "a sync in progress")
		closed := make(chan error, 1)
		go func() { closed <- g.Close() }()
		synctest.Wait() // Close closed the gateway and waits for the sync
		c.w.Close()     // the client leaves
		synctest.Wait()
		if !g.isClosed() || g.books()["sessions"] != 0 {
			t.Errorf("the session did not end after the gateway closed: closed %v, %v", g.isClosed(), g.books())
		}
		close(resume)
		if err := <-closed; err != nil {
			t.Errorf("Close: %v", err)
		}
		if left := nonzero(g.books()); len(left) != 0 {
			t.Errorf("kept after Close returned: %v", left)
		}
		<-ended // nothing left running in the bubble
	})
}
