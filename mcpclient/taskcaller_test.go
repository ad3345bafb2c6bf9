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
		started := 0
		ctx = tool.WithTaskStarted(ctx, func(string) { started++ })
		if res, err := h.reg.Execute(ctx, "mcp__tk__failing_job", json.RawMessage(`{}`)); err != nil || !strings.Contains(res.Text(), "the job failed") || started != 1 {
			t.Errorf("a caller %s: %q, %v, the task's start told %d times; want the task's result, its start told once", what, res.Text(), err, started)
		}
	}
}

// The tools of a server that declares the tasks extension say that the
// server decides about tasks (tool.Tool.ServerTasks); a plain tool, or a
// server without the extension, does not.
func TestServerTasksListed(t *testing.T) {
	ts := mcppeer.NewTaskServer()
	t.Cleanup(ts.Close)
	hs := httptest.NewServer(ts)
	t.Cleanup(hs.Close)
	h := mustStart(t, Config{ServerName: "tk", Transport: TransportStreamableHTTP, URL: hs.URL}, Options{})
	for name, want := range map[string]bool{"mcp__tk__slow_compute": true, "mcp__tk__failing_job": true, "mcp__tk__greet": false} {
		if def, ok := h.reg.Get(name); !ok || def.ServerTasks != want || def.Background != want {
			t.Errorf("%s: listed %v, ServerTasks %v, Background %v; want both %v", name, ok, def.ServerTasks, def.Background, want)
		}
	}
	p := &taskPeer{}
	old := mustStart(t, stdioConfig("old"), Options{NewTransport: p.transport(t)})
	if def, ok := old.reg.Get("mcp__old__slow"); !ok || def.ServerTasks || !def.Background {
		t.Errorf("a task tool of a server without the extension: %+v", def)
	}
}
