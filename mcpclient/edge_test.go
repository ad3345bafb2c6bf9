package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A call while the server is in a reconnect backoff fails at once with the
// state; closing during the backoff returns promptly (docs/upstream.md §8.3 case
// 84, §8.4 case 112).
func TestCallDuringBackoffFailsFast(t *testing.T) {
	mem := newMemServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}))
	cfg := stdioConfig("srv")
	cfg.Reconnect = &ReconnectPolicy{Enabled: true, InitialDelay: time.Hour, MaxDelay: time.Hour, MaxAttempts: 3}
	h := mustStart(t, cfg, Options{NewTransport: mem.transport})
	mem.crash(1)
	waitFor(t, "the backoff", func() bool { return h.srv.Status().State == StateReconnecting })
	start := time.Now()
	if got := h.call("mcp__srv__add", `{"a":1,"b":2}`).Text(); got != `Error: server "srv" is reconnecting (attempt 1/3)` {
		t.Errorf("call during backoff: %q", got)
	}
	if _, ok := h.reg.Get("mcp__srv__add"); !ok {
		t.Error("the last good generation must stay registered during an outage")
	}
	if err := h.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close during a one-hour backoff took %v", d)
	}
	if h.reg.Len() != 0 {
		t.Errorf("tools left after Close: %v", h.names())
	}
}

// blockingClose is a connection whose Close waits for release, to model a
// server that will not shut down.
type blockingClose struct {
	mcp.Connection
	release chan struct{}
}

func (c *blockingClose) Close() error {
	<-c.release
	return c.Connection.Close()
}

type blockingTransport struct {
	inner   mcp.Transport
	release chan struct{}
}

func (t *blockingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &blockingClose{Connection: c, release: t.release}, nil
}

// A generation that does not close within the barrier is reported
// (docs/upstream.md §8.3 case 83), and Close still waits for it before returning.
func TestCloseBarrierTimeout(t *testing.T) {
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	release := make(chan struct{})
	newTransport := func() (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return &blockingTransport{inner: ct, release: release}, nil
	}
	h := mustStart(t, stdioConfig("stuck"), Options{NewTransport: newTransport, closeTimeout: 20 * time.Millisecond})
	closed := make(chan struct{})
	var closeErr error
	go func() {
		closeErr = h.srv.Close()
		close(closed)
	}()
	waitFor(t, "the barrier message", func() bool {
		return h.log.HasRecord(slog.LevelError, "generation did not close in time during shutdown — server shutdown may be incomplete", "server", "stuck", "timeout", "20ms")
	})
	select {
	case <-closed:
		t.Fatal("Close returned before the generation closed")
	default:
	}
	close(release)
	<-closed
	if closeErr == nil || !strings.Contains(closeErr.Error(), "did not close within 20ms") {
		t.Errorf("Close = %v", closeErr)
	}
}

// Output validation edge cases (docs/decisions.md §6): a missing structuredContent
// fails, a schema that does not compile is reported once and means any JSON.
func TestOutputSchemaEdges(t *testing.T) {
	tools := []json.RawMessage{
		json.RawMessage(`{"name":"nostruct","inputSchema":{"type":"object"},"outputSchema":{"type":"object","required":["answer"]}}`),
		json.RawMessage(`{"name":"oddschema","inputSchema":{"type":"object"},"outputSchema":{"type":5}}`),
	}
	script := mcppeer.RawScript{Pages: onePage(tools...), Results: map[string]json.RawMessage{
		"nostruct":  json.RawMessage(`{"content":[{"type":"text","text":"t"}]}`),
		"oddschema": json.RawMessage(`{"content":[],"structuredContent":"anything"}`),
	}}
	h, err := rawHarness(t, script, stdioConfig("raw"))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.call("mcp__raw__nostruct", `{}`).Text(); got != `Error: tool "mcp__raw__nostruct" returned invalid output: structuredContent is missing, but the tool declares an outputSchema` {
		t.Errorf("nostruct: %q", got)
	}
	for range 2 {
		if res := h.call("mcp__raw__oddschema", `{}`); res.IsError {
			t.Errorf("oddschema failed: %q", res.Text())
		}
	}
	if n := h.log.CountRecords(slog.LevelWarn, "outputSchema does not compile; the tool's structuredContent is not checked", "server", "raw", "tool", "oddschema", "err", mcptest.Contains("")); n != 1 {
		t.Errorf("compile failure logged %d times, want once:\n%s", n, h.log.Text())
	}
}

// A result over MaxResultBytes fails its call with a clear message and the
// connection survives.
func TestResultSizeCap(t *testing.T) {
	big := `{"content":[{"type":"text","text":"` + strings.Repeat("x", 4000) + `"}]}`
	script := mcppeer.RawScript{
		Pages:   onePage(mcppeer.RawTool("big", ""), mcppeer.RawTool("small", "")),
		Results: map[string]json.RawMessage{"big": json.RawMessage(big), "small": json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)},
	}
	h, err := start(t, stdioConfig("raw"), Options{MaxResultBytes: 1000, NewTransport: rawPipe(t, mcppeer.NewRawServer(script))})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.call("mcp__raw__big", `{}`).Text(); !strings.Contains(got, "result of 4") || !strings.Contains(got, "exceeds the bridge's limit of 1000 bytes") {
		t.Errorf("big: %q", got)
	}
	if got := h.call("mcp__raw__small", `{}`).Text(); got != "ok" {
		t.Errorf("small after big: %q", got)
	}
}

// Large results cross the SSE filter intact, including data lines longer
// than its read buffer.
func TestStreamableHTTPLargeResult(t *testing.T) {
	hs := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	h := mustStart(t, Config{ServerName: "web", Transport: TransportStreamableHTTP, URL: hs.URL}, Options{})
	msg := strings.Repeat("0123456789", 30000)
	args, _ := json.Marshal(map[string]string{"message": msg})
	if got := h.call("mcp__web__echo", string(args)).Text(); got != "Echo: "+msg {
		t.Errorf("echo of %d bytes came back as %d bytes", len(msg), len(got))
	}
}

func TestWaitReadyHonoursContext(t *testing.T) {
	srv, err := Start(Config{ServerName: "mute", Transport: TransportStdio, Command: "sleep", Args: []string{"30"}}, Options{Registry: newRegistry(), CloseGrace: 50 * time.Millisecond, TermGrace: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := srv.WaitReady(ctx); err != context.DeadlineExceeded {
		t.Errorf("WaitReady = %v", err)
	}
	select {
	case <-srv.Ready():
		t.Error("Ready closed although the handshake cannot finish")
	default:
	}
	if srv.Config().StartupTimeout != DefaultStartupTimeout {
		t.Errorf("Config() = %+v, want defaults filled", srv.Config())
	}
}

// startupTimeoutMs bounds discovery too: a server that never answers
// tools/list fails the attempt with the reason.
func TestDiscoveryTimeout(t *testing.T) {
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return next(ctx, method, req)
		}
	})
	cfg := stdioConfig("hang")
	cfg.StartupTimeout = 200 * time.Millisecond
	_, err := start(t, cfg, Options{OneShot: true, NewTransport: inMemory(t, srv)})
	if err == nil || !strings.Contains(err.Error(), "tool discovery: no answer within startupTimeoutMs (200ms)") {
		t.Errorf("err = %v", err)
	}
}

// docs/upstream.md §8.3 case 87: an initial failure with reconnect disabled.
func TestDisabledReconnectInitialFailure(t *testing.T) {
	cfg := stdioConfig("srv")
	cfg.Reconnect = &ReconnectPolicy{Enabled: false, InitialDelay: time.Millisecond, MaxDelay: time.Millisecond, MaxAttempts: 1}
	h, err := start(t, cfg, Options{NewTransport: func() (mcp.Transport, error) { return nil, errors.New("server gone") }})
	if err == nil {
		t.Fatal("no startup error")
	}
	waitFor(t, "the error line", func() bool {
		return h.log.HasRecord(slog.LevelError, "connection failed and reconnect is disabled — no tools were registered; reload the config or restart mcpbridge to connect", "server", "srv", "err", "server gone")
	})
	if h.reg.Len() != 0 {
		t.Error("tools registered")
	}
}

// docs/upstream.md §8.3 cases 88–89: the failure budget resets after an uptime of
// maxDelay, and not before (on a fake clock).
func TestReconnectBudgetReset(t *testing.T) {
	synctest.Test(t, testReconnectBudgetReset)
}

func testReconnectBudgetReset(t *testing.T) {
	mem := newMemServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}))
	crash := func(n int) {
		waitFor(t, "connection", func() bool { return mem.connections() == n })
		mem.crash(n)
	}
	cfg := stdioConfig("srv")
	cfg.Reconnect = &ReconnectPolicy{Enabled: true, InitialDelay: 2 * time.Millisecond, MaxDelay: 30 * time.Millisecond, MaxAttempts: 1}
	h := mustStart(t, cfg, Options{NewTransport: mem.transport})
	crash(1)
	waitFor(t, "first recovery", func() bool { return h.log.HasRecord(slog.LevelInfo, msgReconnected, "attempt", 1, "max_attempts", 1) })
	synctest.Wait()
	time.Sleep(40 * time.Millisecond) // fake clock: an uptime longer than maxDelay resets the budget
	crash(2)
	waitFor(t, "second connection", func() bool { return mem.connections() == 3 })
	waitFor(t, "second recovery", func() bool { return h.srv.Status().State == StateReady })
	if h.log.HasRecord(slog.LevelError, msgGiveUp) {
		t.Fatalf("gave up although the budget should have reset:\n%s", h.log.Text())
	}
	crash(3) // at once: no uptime, so the budget of 1 is spent
	waitFor(t, "give-up", func() bool { return h.log.HasRecord(slog.LevelError, msgGiveUp, "max_attempts", 1) })
	if h.reg.Len() != 0 {
		t.Errorf("tools left after give-up: %v", h.names())
	}
}

// A caller that asks for progress gets the server's notifications; a
// failed call's raw result stays reachable through tool.ToolError.
func TestProgressAndToolError(t *testing.T) {
	h, _, _ := fixtureHarness(t, mcppeer.FixtureOptions{})
	got := make(chan string, 10)
	ctx := tool.WithProgress(context.Background(), func(p tool.Progress) { got <- p.Message })
	slow, _ := h.reg.Get("mcp__fixture__slow")
	if _, err := slow.Execute(ctx, json.RawMessage(`{"ms":1}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m != "started" {
			t.Errorf("progress message %q", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no progress forwarded")
	}
	fail, _ := h.reg.Get("mcp__fixture__fail")
	_, err := fail.Execute(context.Background(), nil)
	var te *tool.ToolError
	if !errors.As(err, &te) || te.Message != "Something went wrong" || !strings.Contains(string(te.Wire), `"isError":true`) {
		t.Errorf("err = %#v", err)
	}
}

// A 50 MB result does not take the host's memory with it: the frame limit
// ends the connection with a clear error, and the server is reconnected.
func TestHugeResult(t *testing.T) {
	huge := `{"content":[{"type":"text","text":"` + strings.Repeat("x", 50<<20) + `"}]}`
	raw := mcppeer.NewRawServer(mcppeer.RawScript{
		Pages:   onePage(mcppeer.RawTool("huge", ""), mcppeer.RawTool("small", "")),
		Results: map[string]json.RawMessage{"huge": json.RawMessage(huge), "small": json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)},
	})
	cfg := stdioConfig("big")
	cfg.Reconnect = fastReconnect(5)
	h := mustStart(t, cfg, Options{NewTransport: func() (mcp.Transport, error) {
		t, err := rawPipe(t, raw)()
		if err != nil {
			return nil, err
		}
		// What childproc sets for a stdio child: the result cap plus room.
		io := t.(*mcp.IOTransport)
		io.MaxLineLength = DefaultMaxResultBytes + 1<<20
		return io, nil
	}})
	got := h.call("mcp__big__huge", `{}`).Text()
	t.Logf("50 MB result: %.200s", got)
	if !strings.Contains(got, `server "big" connection lost during the call`) || !strings.Contains(got, "frame exceeded the configured maximum") {
		t.Errorf("huge: %.300q", got)
	}
	waitFor(t, "the reconnect", func() bool { return h.log.HasRecord(slog.LevelInfo, msgReconnected, "server", "big") })
	if got := h.call("mcp__big__small", `{}`).Text(); got != "ok" {
		t.Errorf("small: %q", got)
	}
}

// docs/upstream.md §8.3 cases 79 and 92: a crash while a re-sync is in flight gives
// up behind it, and the late list never registers.
func TestGiveUpBehindInFlightResync(t *testing.T) {
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	gate := make(chan struct{})
	var lists atomic.Int32
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" && lists.Add(1) == 2 {
				<-gate // the re-sync's fetch hangs until released
			}
			return next(ctx, method, req)
		}
	})
	var attempts atomic.Int32
	var conn *recordingTransport
	newTransport := func() (mcp.Transport, error) {
		if attempts.Add(1) > 1 {
			return nil, errors.New("server gone")
		}
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		conn = &recordingTransport{inner: ct}
		return conn, nil
	}
	cfg := stdioConfig("srv")
	cfg.Reconnect = &ReconnectPolicy{Enabled: true, InitialDelay: 2 * time.Millisecond, MaxDelay: 8 * time.Millisecond, MaxAttempts: 1}
	h := mustStart(t, cfg, Options{NewTransport: newTransport})
	mcppeer.AddRuntimeTool(srv, "late") // list_changed → a re-sync whose fetch hangs
	waitFor(t, "the re-sync to be in flight", func() bool { return lists.Load() == 2 })
	conn.conn.Close() // the connection dies under the in-flight re-sync
	waitFor(t, "give-up", func() bool { return h.log.HasRecord(slog.LevelError, msgGiveUp, "server", "srv", "max_attempts", 1) })
	close(gate)
	if h.reg.Len() != 0 {
		t.Errorf("tools after give-up: %v", h.names())
	}
	if h.log.HasRecord(slog.LevelError, "tool re-sync failed") {
		t.Errorf("a re-sync cut short by the crash was reported as failed:\n%s", h.log.Text())
	}
	if n := attempts.Load(); n != 2 {
		t.Errorf("%d connection attempts, want 2", n)
	}
}

// recordingTransport keeps the client side of its connection, so a test can
// break it as a dying server would.
type recordingTransport struct {
	inner mcp.Transport
	conn  mcp.Connection
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	t.conn = c
	return c, err
}
