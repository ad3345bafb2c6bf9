package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// kill -9 of a stdio server mid-call: the call fails within a second, and
// the server is back with identical tool names within the backoff.
func TestKill9MidCall(t *testing.T) {
	cfg := fixtureChild(t, "killed")
	cfg.Reconnect = fastReconnect(10)
	h := mustStart(t, cfg, Options{})
	before := h.names()
	pid := h.srv.Status().PID
	if pid == 0 {
		t.Fatal("no PID in status")
	}
	inFlight := make(chan struct{}, 1)
	ctx := tool.WithProgress(context.Background(), func(tool.Progress) { inFlight <- struct{}{} })
	slow, _ := h.reg.Get("mcp__killed__slow")
	type outcome struct {
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	go func() {
		_, err := slow.Execute(ctx, json.RawMessage(`{"ms":60000}`))
		done <- outcome{err, time.Now()}
	}()
	waitSignal(t, inFlight, "the call to be in flight")
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var out outcome
	select {
	case out = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not end after kill -9")
	}
	failAfter := out.at.Sub(killed)
	if out.err == nil || !strings.Contains(out.err.Error(), `server "killed" connection lost during the call`) || !strings.Contains(out.err.Error(), "signal: killed") {
		t.Errorf("call error = %v", out.err)
	}
	waitFor(t, "the reconnect", func() bool { return h.log.HasRecord(slog.LevelInfo, msgReconnected) })
	recovered := time.Since(killed)
	if after := h.names(); !slices.Equal(before, after) {
		t.Errorf("names changed across the restart:\n%v\n%v", before, after)
	}
	if got := h.call("mcp__killed__add", `{"a":1,"b":2}`).Text(); got != "3" {
		t.Errorf("call after recovery: %q", got)
	}
	if newPID := h.srv.Status().PID; newPID == pid || newPID == 0 {
		t.Errorf("PID %d after the restart (was %d)", newPID, pid)
	}
	t.Logf("kill -9 mid-call: call failed after %v, server back after %v (initialDelayMs 20)", failAfter, recovered)
	if failAfter > time.Second {
		t.Errorf("the call failed %v after the kill, want within a second", failAfter)
	}
}

// A server that ignores SIGTERM and leaves a grandchild behind: nothing of
// its process group survives Close.
func TestNoGrandchildSurvives(t *testing.T) {
	exe, args, env := mcptest.ChildCommand(t, "fixture")
	script := `trap "" TERM; sleep 300 & exec "$0" "$@"`
	cfg := Config{ServerName: "stubborn", Transport: TransportStdio, Command: "sh",
		Args: append([]string{"-c", script, exe}, args...), Env: env}
	h := mustStart(t, cfg, Options{})
	pgid := h.srv.Status().PID
	if n := len(mcptest.GroupMembers(pgid)); n < 2 {
		t.Fatalf("process group %d has %d members, want the server and its sleep", pgid, n)
	}
	if err := h.srv.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the whole group to go", func() bool { return len(mcptest.GroupMembers(pgid)) == 0 })
}

// countingWriter counts the tools/list requests a client writes.
type countingWriter struct {
	io.WriteCloser
	lists atomic.Int32
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.lists.Add(int32(bytes.Count(p, []byte(`"method":"tools/list"`))))
	return w.WriteCloser.Write(p)
}

// A list_changed storm costs a bounded number of tools/list requests, and
// the final state is the server's last list.
func TestListChangedStorm(t *testing.T) {
	raw := mcppeer.NewRawServer(mcppeer.RawScript{Pages: onePage(mcppeer.RawTool("v1", ""))})
	var counter *countingWriter
	newTransport := func() (mcp.Transport, error) {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		counter = &countingWriter{WriteCloser: cw}
		done := make(chan struct{})
		go func() {
			defer close(done)
			raw.Serve(context.Background(), sr, sw)
			sw.Close()
		}()
		t.Cleanup(func() { cw.Close(); sr.Close(); <-done })
		return &mcp.IOTransport{Reader: cr, Writer: counter}, nil
	}
	h := mustStart(t, stdioConfig("storm"), Options{NewTransport: newTransport})
	raw.SetScript(mcppeer.RawScript{Pages: onePage(mcppeer.RawTool("v2", ""))})
	const storm = 3000
	start := time.Now()
	for range storm {
		if err := raw.NotifyToolsChanged(); err != nil {
			t.Fatal(err)
		}
	}
	sent := time.Since(start)
	waitFor(t, "the final list", func() bool { _, ok := h.reg.Get("mcp__storm__v2"); return ok && h.reg.Len() == 1 })
	// Let trailing re-syncs settle, then count.
	time.Sleep(3 * minResyncInterval)
	lists := int(counter.lists.Load())
	bound := 1 + int(time.Since(start)/minResyncInterval) + 2
	t.Logf("%d notifications sent in %v cost %d tools/list requests (bound %d)", storm, sent, lists, bound)
	if lists > bound {
		t.Errorf("%d tools/list requests for a storm of %d, want at most %d", lists, storm, bound)
	}
	if got := h.names(); !slices.Equal(got, []string{"mcp__storm__v2"}) {
		t.Errorf("final tools %v", got)
	}
}

// A server that writes garbage on its protocol stream is disconnected with a
// clear error and retried per the budget.
func TestGarbageOnStdout(t *testing.T) {
	raw := mcppeer.NewRawServer(mcppeer.RawScript{Pages: onePage(mcppeer.RawTool("t", ""))})
	var mu sync.Mutex
	attempts := 0
	transport := rawPipe(t, raw)
	cfg := stdioConfig("garbage")
	cfg.Reconnect = fastReconnect(5)
	h := mustStart(t, cfg, Options{NewTransport: func() (mcp.Transport, error) {
		mu.Lock()
		attempts++
		mu.Unlock()
		return transport()
	}})
	if err := raw.SendLine("this is not JSON-RPC"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reconnect", func() bool { return h.log.HasRecord(slog.LevelInfo, msgReconnected, "attempt", 1, "max_attempts", 5) })
	if !h.log.HasRecord(slog.LevelWarn, msgReconnecting, "server", "garbage", "delay", "20ms", "attempt", 1, "max_attempts", 5) ||
		!h.log.HasRecord(slog.LevelWarn, "connection lost", "server", "garbage", "err", mcptest.Contains("invalid character")) {
		t.Errorf("log:\n%s", h.log.Text())
	}
	mu.Lock()
	defer mu.Unlock()
	if attempts != 2 {
		t.Errorf("%d attempts", attempts)
	}
}

// Against the real server-everything, which sends a real list_changed right
// after connecting: the final tool set is complete and stable.
func TestServerEverythingListChanged(t *testing.T) {
	bin := mcptest.ThirdPartyBin(t, "mcp-server-everything")
	cfg := Config{ServerName: "everything", Transport: TransportStdio, Command: bin, Args: []string{"stdio"}}
	h := mustStart(t, cfg, Options{})
	waitFor(t, "the re-sync after list_changed", func() bool { return h.log.HasRecord(slog.LevelInfo, msgResync, "server", "everything") })
	// Stable: no change to the registry for a while.
	var v uint64
	deadline := time.Now().Add(20 * time.Second)
	for stable := 0; stable < 10; {
		if time.Now().After(deadline) {
			t.Fatal("the tool set never settled")
		}
		if nv := h.reg.Version(); nv != v {
			v, stable = nv, 0
		} else {
			stable++
		}
		time.Sleep(50 * time.Millisecond)
	}
	names := h.names()
	for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s missing from %v", want, names)
		}
	}
	if len(names) < 8 || h.srv.Status().Tools != len(names) {
		t.Errorf("%d tools, status %+v", len(names), h.srv.Status())
	}
	if got := h.call("mcp__everything__echo", `{"message":"still here"}`).Text(); got != "Echo: still here" {
		t.Errorf("echo: %q", got)
	}
}
