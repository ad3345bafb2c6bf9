package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool with many icons the bridge drops, listed again at every re-sync,
// is logged once, in one line that counts them, and again once it
// changed: a server that changes its list every few seconds would
// otherwise fill the log with the same lines.
func TestDroppedIconsLoggedOncePerChange(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "icons", Version: "1"}, nil)
	var icons []mcp.Icon
	for i := range 40 {
		icons = append(icons, mcp.Icon{Source: fmt.Sprintf("http://example.com/%d.png", i)})
	}
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult("ok"), nil }
	srv.AddTool(&mcp.Tool{Name: "iconic", Icons: icons, InputSchema: json.RawMessage(`{"type":"object"}`)}, noop)
	h := mustStart(t, stdioConfig("icons"), Options{NewTransport: inMemory(t, srv)})
	for i := range 5 {
		name := fmt.Sprintf("extra%d", i)
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, noop) // list_changed: a re-sync
		waitFor(t, "the re-sync that lists "+name, func() bool { _, ok := h.reg.Get("mcp__icons__" + name); return ok })
	}
	var lines int
	for _, r := range h.log.Records() {
		if strings.HasPrefix(r.Message, "icon") {
			lines++
		}
	}
	if lines != 1 || !h.log.HasRecord(slog.LevelWarn, "icons dropped", "tool", "iconic", "dropped", "40") {
		t.Errorf("%d icon lines after six syncs of one unchanged tool with 40 bad icons; want one summary:\n%s", lines, h.log.Text())
	}
	// Changed, it is logged again.
	srv.AddTool(&mcp.Tool{Name: "iconic", Icons: icons[1:], InputSchema: json.RawMessage(`{"type":"object"}`)}, noop)
	h.log.WaitForRecord(t, slog.LevelWarn, "icons dropped", "tool", "iconic", "dropped", "39")
}

// A server that fails tools/list with a megabyte of error text gets it
// cut where the bridge keeps or logs it: the failed first sync's
// Status.Err and log line, and a failed re-sync's.
func TestListErrorTextCut(t *testing.T) {
	huge := strings.Repeat("e", 1<<20)
	var fail atomic.Bool
	srv := mcp.NewServer(&mcp.Implementation{Name: "wordy", Version: "1"}, nil)
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult("ok"), nil }
	srv.AddTool(&mcp.Tool{Name: "a", InputSchema: json.RawMessage(`{"type":"object"}`)}, noop)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" && fail.Load() {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: huge}
			}
			return next(ctx, method, req)
		}
	})
	const bound = 8 << 10
	longest := func(h *harness, msg string) int {
		n := -1
		for _, r := range h.log.Records() {
			if r.Message == msg {
				n = max(n, len(r.String()))
			}
		}
		return n
	}

	fail.Store(true)
	cfg := stdioConfig("wordy")
	cfg.FailOnStartupError = true
	h, err := start(t, cfg, Options{NewTransport: inMemory(t, srv)})
	if err == nil || len(err.Error()) > bound || len(h.srv.Status().Err) > bound || !strings.Contains(h.srv.Status().Err, "eee…") {
		t.Errorf("the failed first sync: error of %d bytes, Status.Err of %d; want both cut", len(fmt.Sprint(err)), len(h.srv.Status().Err))
	}
	if n := longest(h, "initial connection or tool synchronization failed"); n < 0 || n > bound {
		t.Errorf("the failed first sync's log line: %d bytes", n)
	}

	fail.Store(false)
	h = mustStart(t, stdioConfig("wordy"), Options{NewTransport: inMemory(t, srv)})
	fail.Store(true)
	srv.AddTool(&mcp.Tool{Name: "b", InputSchema: json.RawMessage(`{"type":"object"}`)}, noop) // list_changed
	h.log.WaitForRecord(t, slog.LevelError, "tool re-sync failed")
	if n := longest(h, "tool re-sync failed"); n > bound {
		t.Errorf("the failed re-sync's log line: %d bytes", n)
	}
}
