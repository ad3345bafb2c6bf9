package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A gateway client listing tools every 20 ms while one entry is edited ten
// times (make before break: each edit starts a new server process that
// takes over from the old one) never sees that entry's tools missing, nor
// the other entry's.
func TestServeReloadNeverHidesTools(t *testing.T) {
	t.Parallel()
	base := fixtureEntries(t, "steady")
	edited := func(timeoutMs int) string {
		return base + strings.Replace(fixtureEntries(t, "edited"), "    transport: stdio\n",
			fmt.Sprintf("    transport: stdio\n    toolCallTimeoutMs: %d\n", timeoutMs), 1)
	}
	cfg := writeConfig(t, edited(60000))
	cmd := mcpbridgeCommand(t, "serve", "--stdio", "--config", cfg)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "poller", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	want := []string{"mcp__edited__greet", "mcp__steady__greet"}
	waitTools(t, cs, want...)

	lists, missing := 0, 0
	poll := func() {
		names := toolNames(t, cs)
		lists++
		if !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(names, w) }) {
			return
		}
		missing++
	}
	for edit := 1; edit <= 10; edit++ {
		if err := os.WriteFile(cfg, []byte(edited(60000+edit)), 0o644); err != nil {
			t.Fatal(err)
		}
		// Poll through the reload (a 100 ms debounce, a new process, its
		// handshake and the takeover) and the old process's stop.
		deadline := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(deadline) {
			poll()
			time.Sleep(20 * time.Millisecond)
		}
	}
	cs.Close() // the server exits: its stderr is complete
	// Each applied edit is logged with the entry's id, as is its first start.
	if n := strings.Count(stderr.String(), `edited`); n < 11 {
		t.Errorf("the entry was named in %d log lines, want its start and 10 reloads:\n%s", n, stderr.String())
	}
	if missing != 0 {
		t.Errorf("tools missing from %d of %d lists during 10 edits", missing, lists)
	}
	t.Logf("%d lists during 10 edits, %d missing", lists, missing)
}
