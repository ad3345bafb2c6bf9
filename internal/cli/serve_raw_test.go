package cli

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serve --raw-names: two servers offering the same tools are served under
// the servers' own names, each name once, from the first entry in the
// config; the log names the tools left out.
func TestServeRawNames(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "first", "second"))
	cmd := mcpbridgeCommand(t, "serve", "--stdio", "--raw-names", "--config", cfg)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	names := toolNames(t, cs)
	if !slices.Contains(names, "greet") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "mcp__") }) {
		t.Errorf("tools/list: %v", names)
	}
	if len(names) != len(slices.Compact(slices.Sorted(slices.Values(names)))) {
		t.Errorf("a name served twice: %v", names)
	}
	if got, isErr := callText(t, cs, "greet", `{"name":"r"}`); got != "Hello, r!" || isErr {
		t.Errorf("greet: %q %v", got, isErr)
	}
	cs.Close()
	if !hasTextRecord(stderr.String(), "WARN", "tool not served: another server offers the same raw name and comes first in the config", "tool", "greet", "server", "second", "served_from", "first") {
		t.Errorf("no log line for the shadowed greet:\n%s", stderr.String())
	}
}
