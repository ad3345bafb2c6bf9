package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A burst of registry changes gives one list_changed. In a synctest bubble
// the burst takes no time at all, so the count is exact, not a timing bet.
func TestBurstOfChangesIsOneNotification(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := tool.NewRegistry()
		g := newGateway(t, reg, Options{})
		c := connectInMemory(t, g)

		var handles []*tool.Handle
		for i := range 20 {
			h, err := reg.Register(goTool(fmt.Sprintf("t%02d", i), textBody("x")))
			if err != nil {
				t.Fatal(err)
			}
			handles = append(handles, h)
		}
		synctest.Wait()
		time.Sleep(time.Second) // fake time: lets the SDK's debounce fire
		synctest.Wait()
		if got := c.listChanged.Load(); got != 1 {
			t.Errorf("20 registrations gave %d list_changed notifications, want 1", got)
		}
		if got := len(c.names(t)); got != 20 {
			t.Errorf("listed %d tools, want 20", got)
		}

		// Another burst, of removals, is another single notification.
		for _, h := range handles[:10] {
			h.Unregister()
		}
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		if got := c.listChanged.Load(); got != 2 {
			t.Errorf("after a burst of removals: %d notifications in all, want 2", got)
		}
		if got := len(c.names(t)); got != 10 {
			t.Errorf("listed %d tools after removals, want 10", got)
		}
	})
}

// A tool that stays registered is never missing from tools/list while the
// registry churns around it (the sync is a diff, not clear-and-refill).
func TestSyncNeverBlinksAToolThatStayed(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("stay", textBody("still here"))); err != nil {
		t.Fatal(err)
	}
	churn, err := reg.Register(goTool("churn_0", textBody("x")))
	if err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, reg, Options{})
	c := connectInMemory(t, g)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// Replace swaps the churn tools atomically; "stay" is untouched.
			next, err := reg.Replace(churn, goTool(fmt.Sprintf("churn_%d", i), textBody("x")), goTool(fmt.Sprintf("churn_%d_b", i), textBody("x")))
			if err != nil {
				t.Error(err)
				return
			}
			churn = next
		}
	})
	for range 200 {
		if names := c.names(t); !slices.Contains(names, "stay") {
			t.Fatalf("tools/list during churn lacks the tool that stayed: %v", names)
		}
	}
	close(stop)
	wg.Wait()
	// Once the churn stops the listing converges on the registry.
	waitFor(t, "the listing to equal the registry", func() bool {
		var want []string
		for _, tl := range reg.List() {
			want = append(want, tl.Name)
		}
		return cmp.Equal(want, c.names(t))
	})
}

func TestPagination(t *testing.T) {
	reg := tool.NewRegistry()
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("tool_%d", i)
		want = append(want, name)
		if _, err := reg.Register(goTool(name, textBody(name))); err != nil {
			t.Fatal(err)
		}
	}
	g := newGateway(t, reg, Options{PageSize: 3})
	c := connectInMemory(t, g)

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	first, err := c.session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Tools) != 3 || first.NextCursor == "" {
		t.Errorf("first page: %d tools, cursor %q; want 3 and a cursor", len(first.Tools), first.NextCursor)
	}
	if diff := cmp.Diff(want, c.names(t)); diff != "" {
		t.Errorf("all pages (-want +got):\n%s", diff)
	}
}

// Definitions the SDK would refuse are fixed where MCP allows (a missing
// type) and skipped, with a log line, where it does not; a changed
// definition is re-listed.
func TestToolDefinitions(t *testing.T) {
	reg := tool.NewRegistry()
	def := func(name, in, out string) tool.Tool {
		return tool.Tool{Name: name, Description: "d", InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out), Execute: textBody(name)}
	}
	h, err := reg.Register(
		def("no_schema", "", ""),
		def("no_type", `{ "properties": {"a": {"type": "string"}} }`, ""),
		def("empty_object", `{ }`, ""),
		def("null_output", `{"type":"object"}`, "null"),
		def("string_type", `{"type":"string"}`, ""),
		def("array_schema", `[1]`, ""),
		def("bad_header", `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"X-A"}}}`, ""),
	)
	if err != nil {
		t.Fatal(err)
	}
	logs := mcptest.NewLog()
	g := newGateway(t, reg, Options{Logger: logs.Logger()})
	c := connectInMemory(t, g)

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	got := map[string]any{}
	for tl, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		got[tl.Name] = remarshal(t, tl.InputSchema)
		if tl.OutputSchema != nil {
			t.Errorf("%s: output schema %v, want none", tl.Name, tl.OutputSchema)
		}
	}
	want := map[string]any{
		"no_schema":    map[string]any{"type": "object"},
		"no_type":      map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}},
		"empty_object": map[string]any{"type": "object"},
		"null_output":  map[string]any{"type": "object"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listed input schemas (-want +got):\n%s", diff)
	}
	for _, name := range []string{"string_type", "array_schema", "bad_header"} {
		if !logs.HasRecord(slog.LevelWarn, "tool not served", "component", "gateway", "tool", name) {
			t.Errorf("no log record for skipped tool %s; log:\n%s", name, logs.Text())
		}
	}

	// A skipped tool fixed in the registry is listed; a listed tool broken
	// in the registry is removed; a re-sync with no change logs nothing new.
	notServed := func() int { return logs.CountRecords(slog.LevelWarn, "tool not served", "component", "gateway") }
	before := notServed()
	if _, err := reg.Replace(h,
		def("no_schema", "", ""),
		def("no_type", `{"type":"string"}`, ""),
		def("string_type", `{"type":"object"}`, ""),
		def("array_schema", `[1]`, ""),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the listing to follow", func() bool {
		return cmp.Equal([]string{"no_schema", "string_type"}, c.names(t))
	})
	if got := notServed() - before; got != 1 || !logs.HasRecord(slog.LevelWarn, "tool not served", "component", "gateway", "tool", "no_type") {
		t.Errorf("%d new log records after the replace, want 1 (no_type now broken):\n%s", got, logs.Text())
	}
}
