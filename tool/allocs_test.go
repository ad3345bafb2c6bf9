// The race detector makes sync.Pool drop items at random, and encoding/json
// pools its scanners, so allocation counts are only meaningful without -race.

//go:build !race

package tool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

func TestExecuteSuccessAllocs(t *testing.T) {
	r := tool.NewRegistry()
	out := tool.Output{Content: []tool.Content{tool.Text("ok")}, Value: json.RawMessage(`{"ok":true}`)}
	mustRegister(t, r, tool.Tool{Name: "t", Execute: func(context.Context, json.RawMessage) (tool.Output, error) { return out, nil }})
	ctx, args := context.Background(), json.RawMessage(`{"a":[1,2,3]}`)
	allocs := testing.AllocsPerRun(100, func() {
		if res, _ := r.Execute(ctx, "t", args); res.IsError {
			t.Fatal("unexpected failure")
		}
	})
	if allocs != 0 {
		t.Errorf("Execute success path allocates %v times, want 0", allocs)
	}
}
