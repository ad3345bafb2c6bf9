package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// The gateway follows a backend's task to its result for the calling
// client (mcpclient, internal/tasks) and offers no tasks of its own: the
// backend's task id never reaches a client, and a second session that
// guesses or replays it (tasks/get, tasks/result, tasks/list,
// tasks/cancel) is refused and learns nothing.
func TestGatewayTasksStayWithTheirCall(t *testing.T) {
	const secret = "backend-task-7f3a"
	script := mcppeer.RawScript{
		Pages:   []mcppeer.RawPage{{Tools: []json.RawMessage{mcppeer.RawTool("report", "")}}},
		Results: map[string]json.RawMessage{"report": json.RawMessage(`{"resultType":"task","taskId":"` + secret + `","status":"completed","result":{"content":[{"type":"text","text":"the report"}]}}`)},
	}
	reg := tool.NewRegistry()
	startRawBackend(t, reg, "tk", script)
	g := newGateway(t, reg, Options{})
	a, b := connectRaw(t, g), connectRaw(t, g)
	waitFor(t, "the backend's tool served", func() bool {
		m := a.request("tools/list", `{}`)
		return strings.Contains(string(m.Result), "mcp__tk__report")
	})
	got := a.request("tools/call", `{"name":"mcp__tk__report","arguments":{}}`)
	if !strings.Contains(string(got.Result), "the report") || strings.Contains(string(got.Result), secret) {
		t.Fatalf("session A's call: %s", got.Result)
	}
	for _, req := range [][2]string{
		{"tasks/get", `{"taskId":"` + secret + `"}`},
		{"tasks/result", `{"taskId":"` + secret + `"}`},
		{"tasks/cancel", `{"taskId":"` + secret + `"}`},
		{"tasks/list", `{}`},
	} {
		m := b.request(req[0], req[1])
		if m.Error == nil || len(m.Result) > 0 || strings.Contains(m.Error.Message, "report") {
			t.Errorf("session B's %s: result %s, error %+v", req[0], m.Result, m.Error)
		}
	}
}
