package mcpclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// The warnings of a tool filter's name that matches no tool of the server.
const (
	msgUnmatchedEnabled  = "enabledTools names a tool the server does not list, so the tool it means is not registered: correct the name in the entry's enabledTools"
	msgUnmatchedDisabled = "disabledTools names a tool the server does not list, so the tool it means stays registered: correct the name in the entry's disabledTools"
)

// docsServer is an in-memory server listing tools by name.
func docsServer(names ...string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	for _, name := range names {
		addNoop(srv, name)
	}
	return srv
}

func addNoop(srv *mcp.Server, name string) {
	srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult("ok"), nil })
}

// sessionOf is a consumer session that ends with the test.
type sessionOf struct{ done chan struct{} }

func (s *sessionOf) Done() <-chan struct{} { return s.done }

// A name in enabledTools or disabledTools that matches no tool the server
// lists, a typo, is warned about once the tools are listed, with the
// server, the key, the name and the server's closest tool name; once per
// name: not again at a re-list, a reconnect or in a share: session
// instance, but a listed name the server stops listing is warned about
// then. A name the server lists is not, nor any while the server lists no
// tools.
func TestUnmatchedToolFiltersWarned(t *testing.T) {
	t.Run("enabledTools", func(t *testing.T) {
		srv := docsServer("search", "fetch", "delete_page")
		mem := newMemServer(t, srv)
		cfg := stdioConfig("docs")
		cfg.EnabledTools = []string{"serach", "fetch"}
		cfg.Share = ShareSession
		h := mustStart(t, cfg, Options{NewTransport: mem.transport})
		if diff := cmp.Diff([]string{"mcp__docs__fetch"}, h.names()); diff != "" {
			t.Errorf("registry (-want +got):\n%s", diff)
		}
		if !h.log.HasRecord(slog.LevelWarn, msgUnmatchedEnabled, "server", "docs", "tool", "serach", "did_you_mean", "search") {
			t.Fatalf("no warning for enabledTools' serach:\n%s", h.log.Text())
		}

		srv.RemoveTools("fetch") // list_changed: a re-list without it
		h.log.WaitForRecord(t, slog.LevelWarn, msgUnmatchedEnabled, "server", "docs", "tool", "fetch")
		addNoop(srv, "fetch")
		waitFor(t, "fetch listed again", func() bool { _, ok := h.reg.Get("mcp__docs__fetch"); return ok })
		srv.RemoveTools("fetch")
		waitFor(t, "fetch gone again", func() bool { _, ok := h.reg.Get("mcp__docs__fetch"); return !ok })
		addNoop(srv, "fetch")
		waitFor(t, "fetch back", func() bool { _, ok := h.reg.Get("mcp__docs__fetch"); return ok })

		mem.crash(1)
		h.log.WaitForRecord(t, slog.LevelInfo, msgReconnected)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		session := &sessionOf{done: make(chan struct{})}
		defer close(session.done)
		if _, err := h.reg.Execute(tool.WithSession(ctx, session), "mcp__docs__fetch", nil); err != nil {
			t.Fatalf("call in a session: %v", err)
		}
		for _, name := range []string{"serach", "fetch"} {
			if n := h.log.CountRecords(slog.LevelWarn, msgUnmatchedEnabled, "tool", name); n != 1 {
				t.Errorf("%s warned about %d times after re-lists, a reconnect and a session's instance, want once:\n%s", name, n, h.log.Text())
			}
		}
	})

	t.Run("disabledTools", func(t *testing.T) {
		srv := docsServer("search", "fetch", "delete_page")
		cfg := stdioConfig("docs")
		cfg.DisabledTools = []string{"delte_page", "zzz", "search"}
		h := mustStart(t, cfg, Options{NewTransport: inMemory(t, srv)})
		if !h.log.HasRecord(slog.LevelWarn, msgUnmatchedDisabled, "server", "docs", "tool", "delte_page", "did_you_mean", "delete_page") {
			t.Errorf("no warning for disabledTools' delte_page:\n%s", h.log.Text())
		}
		addNoop(srv, "extra") // list_changed: a re-list
		waitFor(t, "the re-list", func() bool { _, ok := h.reg.Get("mcp__docs__extra"); return ok })
		for _, name := range []string{"delte_page", "zzz"} {
			if n := h.log.CountRecords(slog.LevelWarn, msgUnmatchedDisabled, "tool", name); n != 1 {
				t.Errorf("%s warned about %d times after a re-list, want once:\n%s", name, n, h.log.Text())
			}
		}
		if !h.log.HasRecord(slog.LevelWarn, msgUnmatchedDisabled, "tool", "zzz", "did_you_mean", mcptest.Absent) ||
			h.log.HasRecord(slog.LevelWarn, msgUnmatchedDisabled, "tool", "search") {
			t.Errorf("zzz given a suggestion, or search (listed) warned about:\n%s", h.log.Text())
		}
	})

	t.Run("no tools listed", func(t *testing.T) {
		cfg := stdioConfig("docs")
		cfg.EnabledTools = []string{"serach"}
		h := mustStart(t, cfg, Options{NewTransport: inMemory(t, docsServer())})
		if h.log.HasRecord(slog.LevelWarn, msgUnmatchedEnabled) {
			t.Errorf("warned with no tools listed to compare with:\n%s", h.log.Text())
		}
	})
}
