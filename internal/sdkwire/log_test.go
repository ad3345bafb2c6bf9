package sdkwire

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// The SDK's tool-drop records become reasons; everything else reaches the
// next handler, prefixed, at its level.
func TestClientLogger(t *testing.T) {
	var out bytes.Buffer
	var drops ToolDrops
	log := ClientLogger(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}), "srv: go-sdk: ", &drops)
	log.Error(toolDropMessage, "tool", "bad", "error", errors.New(`property "x": x-mcp-header must be a non-empty string`))
	log.Error("jsonrpc2 internal error", "error", "boom")
	log.Info("quiet")
	log.With("k", "v").Warn("loud")
	log.WithGroup("g").Warn("grouped", "a", 1)
	if got := drops.Take("bad"); got != `property "x": x-mcp-header must be a non-empty string` {
		t.Errorf("reason %q", got)
	}
	if got := drops.Take("bad"); got != "" {
		t.Errorf("a reason taken twice: %q", got)
	}
	text := out.String()
	for _, want := range []string{`level=ERROR msg="srv: go-sdk: jsonrpc2 internal error" error=boom`, `level=WARN msg="srv: go-sdk: loud" k=v`, `msg="srv: go-sdk: grouped" g.a=1`} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "quiet") || strings.Contains(text, toolDropMessage) {
		t.Errorf("log has what it should not:\n%s", text)
	}
}

// What the SDK logs can quote a server (a Content-Type header, a tool's
// property names in a drop's reason): its records reach the log, and its
// reasons the caller, cut to textcut.PeerText.
func TestClientLoggerCutsText(t *testing.T) {
	var out bytes.Buffer
	var drops ToolDrops
	log := ClientLogger(slog.NewTextHandler(&out, nil), "", &drops)
	huge := strings.Repeat("x", 1<<20)
	log.Warn("got Content-Type "+huge+" instead of text/event-stream for standalone SSE stream", "error", errors.New(huge), "value", huge, "n", 7)
	log.Error(toolDropMessage, "tool", "bad", "error", errors.New(`property "`+huge+`": x-mcp-header must be a non-empty string`))
	if n := out.Len(); n > 4*textcut.PeerText {
		t.Errorf("the SDK's record of %d bytes of a server's text was logged in %d bytes", 3<<20, n)
	}
	if !strings.Contains(out.String(), "n=7") {
		t.Errorf("the record lost its other attributes: %.200s", out.String())
	}
	if reason := drops.Take("bad"); len(reason) > textcut.PeerText || !strings.HasPrefix(reason, `property "xxx`) {
		t.Errorf("reason of %d bytes, want the start of it within %d", len(reason), textcut.PeerText)
	}
}

// ServerLogger lowers the SDK's info lines to debug and keeps warnings.
func TestServerLogger(t *testing.T) {
	var buf strings.Builder
	log := slog.New(ServerLogger(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))).With("a", 1).WithGroup("g")
	log.Info("server session connected")
	log.Warn("something odd")
	if got := buf.String(); strings.Contains(got, "connected") || !strings.Contains(got, "level=WARN msg=\"something odd\" a=1") {
		t.Errorf("at info level: %q", got)
	}
	buf.Reset()
	debug := slog.New(ServerLogger(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	debug.Info("server session connected")
	if got := buf.String(); !strings.Contains(got, "level=DEBUG msg=\"server session connected\"") {
		t.Errorf("at debug level: %q", got)
	}
}
