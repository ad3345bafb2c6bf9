package view

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// The pattern end to end with servers we did not write (the pinned npm
// reference servers): the model first sees search_tools alone, a fraction
// of the catalog's tokens; one search in a user's words finds the tool,
// which is then visible and runs.
func TestSearchThenCallOnNpmServers(t *testing.T) {
	dir := t.TempDir()
	src := fmt.Sprintf(`- {id: everything, name: mcp-client, config: {serverName: everything, transport: stdio, command: %q}}
- {id: filesystem, name: mcp-client, config: {serverName: filesystem, transport: stdio, command: %q, roots: [%q]}}
- {id: memory, name: mcp-client, config: {serverName: memory, transport: stdio, command: %q}}
- {id: search, name: tool-search, config: {mode: auto, threshold: 2000}}
`, mcptest.ThirdPartyBin(t, "mcp-server-everything"), mcptest.ThirdPartyBin(t, "mcp-server-filesystem"), dir,
		mcptest.ThirdPartyBin(t, "mcp-server-memory"))
	reg, k, _ := startHost(t, src)

	if got := visible(t, k); !slices.Equal(got, []string{toolview.SearchName}) {
		t.Fatalf("before a search the model sees %v", got)
	}
	all, err := k.View().CatalogTokens()
	if err != nil {
		t.Fatal(err)
	}
	seen, _ := k.View().Tools()
	few, err := tokens.Total(seen)
	if err != nil || all < 3000 || few*10 > all {
		t.Errorf("the model sees %d tokens of %d (%v); want at most 10%%", few, all, err)
	}

	res, err := reg.Execute(context.Background(), toolview.SearchName, json.RawMessage(`{"query":"write some text into a file","limit":3}`))
	var found struct{ Tools []toolview.Found }
	if err != nil || res.IsError || json.Unmarshal(res.Value, &found) != nil || len(found.Tools) == 0 {
		t.Fatalf("search_tools: %v %s", err, res.Text())
	}
	if f := found.Tools[0]; f.Name != "mcp__filesystem__write_file" || !json.Valid(f.Parameters) {
		t.Fatalf("first match %+v", f)
	}
	if got := visible(t, k); !slices.Contains(got, "mcp__filesystem__write_file") || len(got) != 4 {
		t.Errorf("after the search the model sees %v", got)
	}
	path := filepath.Join(dir, "note.txt")
	args, _ := json.Marshal(map[string]string{"path": path, "content": "found in one search"})
	if res, err := reg.Execute(context.Background(), "mcp__filesystem__write_file", args); err != nil || res.IsError {
		t.Fatalf("write_file: %v %s", err, res.Text())
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "found in one search" {
		t.Errorf("the file holds %q, %v", b, err)
	}
}
