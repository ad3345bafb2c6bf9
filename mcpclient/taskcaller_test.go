package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A task-required tool of a 2026-07-28 server, called for a consumer's
// client described without the tasks extension (a gateway's caller), is
// sent as that client's call alone: the server refuses it with -32021,
// which the call's cause carries as sent; the bridge followed the task for
// a client that cannot hold one. Described with the extension, or not
// described (the bridge's own consumer), the task is followed.
func TestTaskRequiredForCallerWithoutExtension(t *testing.T) {
	ts := mcppeer.NewTaskServer()
	t.Cleanup(ts.Close)
	hs := httptest.NewServer(ts)
	t.Cleanup(hs.Close)
	h := mustStart(t, Config{ServerName: "tk", Transport: TransportStreamableHTTP, URL: hs.URL}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	described := func(caps map[string]any) context.Context {
		return tool.WithCaller(ctx, map[string]any{mcp.MetaKeyClientCapabilities: caps})
	}
	res, _ := h.reg.Execute(described(map[string]any{"elicitation": map[string]any{}}), "mcp__tk__failing_job", json.RawMessage(`{}`))
	if wire, ok := errors.AsType[*jsonrpc.Error](res.Cause); !ok || wire.Code != -32021 {
		t.Errorf("a caller without the extension: %q, cause %v; want the server's -32021", res.Text(), res.Cause)
	}
	withTasks := described(map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}})
	for what, ctx := range map[string]context.Context{"with the extension": withTasks, "not described": ctx} {
		if res, err := h.reg.Execute(ctx, "mcp__tk__failing_job", json.RawMessage(`{}`)); err != nil || !strings.Contains(res.Text(), "the job failed") {
			t.Errorf("a caller %s: %q, %v; want the task's result", what, res.Text(), err)
		}
	}
}
