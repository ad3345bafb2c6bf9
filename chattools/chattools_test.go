package chattools_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/chattools"
	"github.com/mcpbridge/mcpbridge/tool"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema string
		want   string
	}{
		{"schema kept byte for byte", `{"type":"object","properties":{"q":{"type":"string"}}}`, `{"type":"object","properties":{"q":{"type":"string"}}}`},
		{"no schema", ``, `{"type":"object"}`},
		{"blank schema", " \n", `{"type":"object"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := chattools.Of(tool.Tool{Name: "mcp__s__t", Description: "d", InputSchema: json.RawMessage(tc.schema)})
			want := chattools.Tool{Type: "function", Function: chattools.Function{Name: "mcp__s__t", Description: "d", Parameters: json.RawMessage(tc.want)}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := chattools.All(nil); got == nil || len(got) != 0 {
		t.Errorf("All(nil) = %#v, want an empty array (it marshals as [])", got)
	}
}

// The package stays free of the tokenizer and of MCP: a harness that only
// needs the shape links neither.
func TestImportsNoTokenizerNorMCP(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "tiktoken") || strings.Contains(dep, "go-sdk") || strings.HasSuffix(dep, "mcpbridge/tokens") {
			t.Errorf("chattools depends on %s", dep)
		}
	}
}

func ExampleAll() {
	tools := []tool.Tool{{Name: "mcp__weather__forecast", Description: "Forecast for a city.", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
	body, _ := json.Marshal(map[string]any{"model": "deepseek-chat", "tools": chattools.All(tools)})
	fmt.Println(string(body))
	// Output: {"model":"deepseek-chat","tools":[{"type":"function","function":{"name":"mcp__weather__forecast","description":"Forecast for a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}
}
