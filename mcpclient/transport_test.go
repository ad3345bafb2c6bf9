package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// fixtureChild is the config of a real child process serving the fixture.
func fixtureChild(t *testing.T, serverName string) Config {
	cmd, args, env := mcptest.ChildCommand(t, "fixture")
	return Config{ServerName: serverName, Transport: TransportStdio, Command: cmd, Args: args, Env: env}
}

func fastReconnect(maxAttempts int) *ReconnectPolicy {
	return &ReconnectPolicy{Enabled: true, InitialDelay: 20 * time.Millisecond, MaxDelay: 200 * time.Millisecond, MaxAttempts: maxAttempts}
}

// docs/upstream.md §8.4 cases 102–106, 111 over a real child process: discovery,
// calls, crash and recovery with identical names.
func TestStdioChildCrashAndRecovery(t *testing.T) {
	cfg := fixtureChild(t, "crashy")
	cfg.Reconnect = fastReconnect(40)
	h := mustStart(t, cfg, Options{})
	before := h.names()
	if got := h.call("mcp__crashy__add", `{"a":2,"b":3}`).Text(); got != "5" {
		t.Fatalf("add = %q", got)
	}
	if res := h.call("mcp__crashy__crash", `{}`); res.IsError || res.Text() != "crashing" {
		t.Fatalf("crash = %+v", res)
	}
	waitFor(t, "the reconnect", func() bool {
		return h.log.HasRecord(slog.LevelInfo, msgReconnected, "server", "crashy", "attempt", 1, "max_attempts", 40)
	})
	if !h.log.HasRecord(slog.LevelWarn, msgReconnecting, "server", "crashy", "delay", "20ms", "attempt", 1, "max_attempts", 40) {
		t.Errorf("log:\n%s", h.log.Text())
	}
	if got := h.call("mcp__crashy__add", `{"a":20,"b":22}`).Text(); got != "42" {
		t.Errorf("add after recovery = %q", got)
	}
	if after := h.names(); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("names changed across the reconnect:\n%v\n%v", before, after)
	}
}

// A server that dies mid-call fails the call at once, not at the timeout;
// with reconnect disabled, the tools stay registered and fail fast.
func TestStdioChildDiesMidCall(t *testing.T) {
	cfg := fixtureChild(t, "dying")
	cfg.Reconnect = &ReconnectPolicy{Enabled: false, InitialDelay: time.Second, MaxDelay: time.Second, MaxAttempts: 1}
	h := mustStart(t, cfg, Options{})
	h.call("mcp__dying__crash", `{}`) // exits 25 ms after replying
	start := time.Now()
	res := h.call("mcp__dying__slow", `{"ms":60000}`)
	if !res.IsError || !strings.Contains(res.Text(), `server "dying"`) {
		t.Fatalf("slow call on a dying server: %+v", res)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the call took %v; it should fail when the child exits", d)
	}
	waitFor(t, "the disabled-reconnect error", func() bool {
		return h.log.HasRecord(slog.LevelError, msgLostNoReconnect, "server", "dying")
	})
	if _, ok := h.reg.Get("mcp__dying__add"); !ok {
		t.Error("tools unregistered although reconnect is disabled")
	}
	if got := h.call("mcp__dying__add", `{"a":1,"b":1}`).Text(); !strings.HasPrefix(got, `Error: server "dying" is not connected`) {
		t.Errorf("call after the loss: %q", got)
	}
}

// The child's stderr reaches the logger line by line, tagged with the
// server, the stream and the child's PID.
func TestStdioChildStderrIsLogged(t *testing.T) {
	cfg := fixtureChild(t, "noisy")
	cfg.ToolCallTimeout = 100 * time.Millisecond
	h := mustStart(t, cfg, Options{})
	pid := h.srv.Status().PID
	h.call("mcp__noisy__slow", `{"ms":60000}`) // times out; the child prints "cancelled"
	waitFor(t, "the child's stderr line", func() bool {
		return h.log.HasRecord(slog.LevelInfo, "child output", "server", "noisy", "stream", "stderr", "pid", pid, "line", "cancelled")
	})
}

// Startup failures are clear and bounded: a missing command, and a child
// that never answers the handshake.
func TestStdioStartupFailures(t *testing.T) {
	cfg := Config{ServerName: "missing", Transport: TransportStdio, Command: "no-such-mcp-server-xyz", FailOnStartupError: true}
	h, err := start(t, cfg, Options{})
	if err == nil || !strings.Contains(err.Error(), "no-such-mcp-server-xyz") {
		t.Errorf("missing command: %v", err)
	}
	// Ready wakes a caller only once the outcome is in Status.
	if st := h.srv.Status(); st.State != StateFailed || !strings.Contains(st.Err, "no-such-mcp-server-xyz") {
		t.Errorf("status after a strict startup failure: %+v", st)
	}

	cfg = Config{ServerName: "mute", Transport: TransportStdio, Command: "sleep", Args: []string{"30"}, StartupTimeout: 300 * time.Millisecond}
	h, err = start(t, cfg, Options{OneShot: true})
	if err == nil || !strings.Contains(err.Error(), "no answer within startupTimeoutMs (300ms)") {
		t.Errorf("mute child: %v", err)
	}
	if st := h.srv.Status(); st.State != StateTimedOut {
		t.Errorf("state = %s", st.State)
	}
	if res, err := h.reg.Execute(context.Background(), "mcp__mute__x", nil); err == nil || res.Text() != `Error: unknown tool "mcp__mute__x"` {
		t.Errorf("call: %q, %v", res.Text(), err)
	}
	if lines := h.log.Lines(); len(lines) != 0 {
		t.Errorf("a one-shot server logged: %v", lines)
	}
}

// docs/upstream.md §8.3 cases 78 and 87–89 with an in-process server: the budget,
// give-up and the exact log texts.
func TestReconnectGivesUp(t *testing.T) {
	mem := newMemServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}))
	var attempts atomic.Int32
	newTransport := func() (mcp.Transport, error) {
		if attempts.Add(1) > 1 {
			return nil, errors.New("server gone")
		}
		return mem.transport()
	}
	cfg := stdioConfig("srv")
	cfg.Reconnect = &ReconnectPolicy{Enabled: true, InitialDelay: 2 * time.Millisecond, MaxDelay: 8 * time.Millisecond, MaxAttempts: 2}
	h := mustStart(t, cfg, Options{NewTransport: newTransport})
	mem.crash(1) // the server goes away
	waitFor(t, "give-up", func() bool {
		return h.log.HasRecord(slog.LevelError, msgGiveUp, "server", "srv", "max_attempts", 2, "err", "server gone")
	})
	for _, want := range []struct {
		msg   string
		attrs []any
	}{
		{msgReconnecting, []any{"delay", "2ms", "attempt", 1, "max_attempts", 2}},
		{"connection attempt failed", []any{"err", "server gone"}},
		{"connection failed; retrying", []any{"delay", "4ms", "attempt", 2, "max_attempts", 2}},
	} {
		if !h.log.HasRecord(slog.LevelWarn, want.msg, append(want.attrs, "server", "srv")...) {
			t.Errorf("log lacks WARN %q %v:\n%s", want.msg, want.attrs, h.log.Text())
		}
	}
	if n := attempts.Load(); n != 3 {
		t.Errorf("%d connection attempts, want 3 (initial + 2)", n)
	}
	if n := h.reg.Len(); n != 0 {
		t.Errorf("%d tools still registered after give-up", n)
	}
	if st := h.srv.Status(); st.State != StateFailed {
		t.Errorf("state = %s", st.State)
	}
}

// The reconnect delay is min(maxDelay, initialDelay·2^(n−1)) (docs/upstream.md §3.9).
func TestBackoff(t *testing.T) {
	p := DefaultReconnectPolicy()
	var got []string
	for n := 1; n <= 10; n++ {
		got = append(got, fmt.Sprint(backoff(p, n).Milliseconds()))
	}
	if want := "500,1000,2000,4000,8000,16000,30000,30000,30000,30000"; strings.Join(got, ",") != want {
		t.Errorf("schedule %s, want %s", strings.Join(got, ","), want)
	}
	huge := ReconnectPolicy{InitialDelay: time.Millisecond, MaxDelay: 2147483647 * time.Millisecond}
	if d := backoff(huge, 200); d != huge.MaxDelay {
		t.Errorf("no saturation: %v", d)
	}
}

// Streamable HTTP, both server modes: discovery, calls, configured headers
// on every request (docs/upstream.md §8.4 cases 120–123), results that pass through
// the SSE filter unchanged.
func TestStreamableHTTP(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprint("stateless=", stateless), func(t *testing.T) {
			hs := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{Stateless: stateless})
			cfg := Config{ServerName: "web", Transport: TransportStreamableHTTP, URL: hs.URL,
				Headers: map[string]string{"Authorization": "Bearer e2e-test-token"}}
			h := mustStart(t, cfg, Options{})
			if _, ok := h.reg.Get("mcp__web__greet"); !ok {
				t.Fatalf("tools: %v", h.names())
			}
			if got := h.call("mcp__web__greet", `{"name":"quiet"}`).Text(); got != "Hello, quiet!" {
				t.Errorf("greet = %q", got)
			}
			if got := h.call("mcp__web__image", `{}`); !strings.Contains(string(got.Value), "iVBORw0KGgo") || !strings.Contains(got.Text(), imageDiag) {
				t.Errorf("image = %+v", got)
			}
			if got := h.call("mcp__web__fail", `{}`).Text(); got != "Error: Something went wrong" {
				t.Errorf("fail = %q", got)
			}
			h.srv.Close()
			headers := hs.Headers()
			if len(headers) == 0 {
				t.Fatal("no request observed")
			}
			for i, hd := range headers {
				if got := hd.Get("Authorization"); got != "Bearer e2e-test-token" {
					t.Errorf("request %d carried Authorization %q", i, got)
				}
			}
		})
	}
}

// Raw results over HTTP (plain JSON replies) are projected like stdio ones,
// and list_changed over the GET stream re-syncs.
func TestStreamableHTTPRawResult(t *testing.T) {
	hs := mcptest.NewRawHTTPServer(t, mcppeer.RawScript{
		Pages:   onePage(mcppeer.RawTool("video", "")),
		Results: map[string]json.RawMessage{"video": json.RawMessage(`{"content":[{"type":"video"},7]}`)},
	})
	h := mustStart(t, Config{ServerName: "web", Transport: TransportStreamableHTTP, URL: hs.URL}, Options{})
	want := "[unsupported MCP content type: video]\n[unsupported MCP content block: expected an object]"
	if got := h.call("mcp__web__video", `{}`); got.IsError || got.Text() != want || string(got.Value) != `{"content":[{"type":"video"},7]}` {
		t.Errorf("got %+v", got)
	}
}

func TestStreamableHTTPRefused(t *testing.T) {
	// Secrets in the URL's path and query never reach errors, Status or logs.
	cfg := Config{ServerName: "down", Transport: TransportStreamableHTTP, URL: "http://127.0.0.1:1/mcp/pathsecret?api_key=querysecret", FailOnStartupError: true}
	h, err := start(t, cfg, Options{})
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("err = %v", err)
	}
	texts := append(h.log.Lines(), err.Error(), h.srv.Status().Err)
	for _, text := range texts {
		if strings.Contains(text, "secret") {
			t.Errorf("a secret leaked: %q", text)
		}
	}
}

// The configured headers (a token, often) go to the configured URL's
// origin only: a server that redirects to another origin gets the
// requests there without them, as net/http drops its own Authorization.
func TestConfiguredHeadersStayWithTheirOrigin(t *testing.T) {
	hs := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, hs.URL, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(elsewhere.Close)
	cfg := Config{ServerName: "web", Transport: TransportStreamableHTTP, URL: elsewhere.URL,
		Headers: map[string]string{"Authorization": "Bearer e2e-test-token"}}
	h := mustStart(t, cfg, Options{})
	if got := h.call("mcp__web__greet", `{"name":"quiet"}`).Text(); got != "Hello, quiet!" {
		t.Errorf("greet through the redirect = %q", got)
	}
	h.srv.Close()
	headers := hs.Headers()
	if len(headers) == 0 {
		t.Fatal("no request reached the other origin")
	}
	for i, hd := range headers {
		if got := hd.Get("Authorization"); got != "" {
			t.Errorf("request %d to the other origin carried Authorization %q", i, got)
		}
	}
}
