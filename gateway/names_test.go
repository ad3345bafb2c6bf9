package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

func TestListings(t *testing.T) {
	mk := func(public, server, raw string) tool.Tool {
		return tool.Tool{Name: public, Origin: tool.Origin{Server: server, Name: raw}}
	}
	tools := []tool.Tool{
		mk("go_tool", "", ""),
		mk("mcp__a__echo", "a", "echo"),
		mk("mcp__a__only_a", "a", "only_a"),
		mk("mcp__b__echo", "b", "echo"),
		mk("mcp__c__echo", "c", "echo"),
	}
	served := func(ls []listing) (out [][2]string) {
		for _, l := range ls {
			out = append(out, [2]string{l.served, l.tool.Name})
		}
		return out
	}
	tests := []struct {
		name  string
		raw   bool
		order []string
		want  [][2]string
		lost  []shadowed
	}{
		{"public names", false, nil, [][2]string{{"go_tool", "go_tool"}, {"mcp__a__echo", "mcp__a__echo"}, {"mcp__a__only_a", "mcp__a__only_a"}, {"mcp__b__echo", "mcp__b__echo"}, {"mcp__c__echo", "mcp__c__echo"}}, nil},
		{"raw, config order b first", true, []string{"b", "a", "c"},
			[][2]string{{"go_tool", "go_tool"}, {"only_a", "mcp__a__only_a"}, {"echo", "mcp__b__echo"}},
			[]shadowed{{"echo", "a", "b"}, {"echo", "c", "b"}}},
		{"raw, servers missing from the order come after, by name", true, []string{"c"},
			[][2]string{{"go_tool", "go_tool"}, {"only_a", "mcp__a__only_a"}, {"echo", "mcp__c__echo"}},
			[]shadowed{{"echo", "a", "c"}, {"echo", "b", "c"}}},
		{"raw, no order", true, nil,
			[][2]string{{"go_tool", "go_tool"}, {"echo", "mcp__a__echo"}, {"only_a", "mcp__a__only_a"}},
			[]shadowed{{"echo", "b", "a"}, {"echo", "c", "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls, lost := listings(tools, tt.raw, tt.order)
			if diff := cmp.Diff(tt.want, served(ls)); diff != "" {
				t.Errorf("served (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.lost, lost, cmp.AllowUnexported(shadowed{})); diff != "" {
				t.Errorf("shadowed (-want +got):\n%s", diff)
			}
		})
	}
}

// With RawNames the gateway serves two real backends' tools under their
// own names: a name both offer is served and called from the first server
// in order, and the log says why the other is not served.
func TestRawNames(t *testing.T) {
	reg := tool.NewRegistry()
	startBackend(t, reg, "a", mcppeer.FixtureOptions{})
	startBackend(t, reg, "b", mcppeer.FixtureOptions{})
	logs := mcptest.NewLog()
	order := []string{"b", "a"}
	g := newGateway(t, reg, Options{RawNames: true, ServerOrder: func() []string { return order }, Logger: logs.Logger()})
	c := connectInMemory(t, g)
	want := slices.Sorted(slices.Values(mcppeer.FixtureTools()))
	if diff := cmp.Diff(want, c.names(t)); diff != "" {
		t.Fatalf("tools/list (-want +got):\n%s", diff)
	}
	if !logs.HasRecord(slog.LevelWarn, "tool not served: another server offers the same raw name and comes first in the config",
		"component", "gateway", "tool", "greet", "server", "a", "served_from", "b") {
		t.Errorf("no record of the shadowed tool; log:\n%s", logs.Text())
	}
	g.syncMu.Lock()
	public := g.advertised["greet"].public
	g.syncMu.Unlock()
	if public != "mcp__b__greet" {
		t.Errorf("greet is served from %q, want mcp__b__greet (b comes first)", public)
	}
	if got := texts(c.call(t, "greet", `{"name":"x"}`)); !slices.Equal(got, []string{"Hello, x!"}) {
		t.Errorf("greet: %v", got)
	}
}

// With RawNames, a raw name with characters outside [A-Za-z0-9_.-] (ESC,
// C1, DEL, newline, a right-to-left override, a zero-width space) is not
// shown to clients: the tool is served under its public name, and the log
// says so once.
func TestRawNamesUnsafe(t *testing.T) {
	reg := tool.NewRegistry()
	unsafe := []string{"clear\x1b[2J", "c1\u009b", "del\x7f", "two\nlines", "txt.exe\u202egpj", "zero\u200bwidth", "sp ace", "ünï"}
	var want []string
	for i, raw := range unsafe {
		public := "mcp__s__t" + strconv.Itoa(i)
		want = append(want, public)
		tl := goTool(public, textBody("ok"))
		tl.Origin = tool.Origin{Server: "s", Name: raw}
		if _, err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	safe := goTool("mcp__s__fine", textBody("ok"))
	safe.Origin = tool.Origin{Server: "s", Name: "fine-1.0_x"}
	if _, err := reg.Register(safe); err != nil {
		t.Fatal(err)
	}
	want = append(want, "fine-1.0_x")
	logs := mcptest.NewLog()
	g := newGateway(t, reg, Options{RawNames: true, Logger: logs.Logger()})
	c := connectInMemory(t, g)
	slices.Sort(want)
	if diff := cmp.Diff(want, c.names(t)); diff != "" {
		t.Fatalf("tools/list (-want +got):\n%s", diff)
	}
	if !logs.HasRecord(slog.LevelWarn, "tool served under its public name: its raw name has characters other than A-Z, a-z, 0-9, _, . and -",
		"component", "gateway", "tool", "mcp__s__t4", "raw_name", `"txt.exe\u202egpj"`) {
		t.Errorf("no record of the unsafe raw name; log:\n%s", logs.Text())
	}
	if got := texts(c.call(t, "mcp__s__t0", `{}`)); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("a call by the public name: %v", got)
	}
}

// A tool's title and annotations are served with it.
func TestServesTitleAndAnnotations(t *testing.T) {
	reg := tool.NewRegistry()
	tl := goTool("look", textBody("ok"))
	tl.Title, tl.Annotations = "Look around", json.RawMessage(`{"readOnlyHint":true}`)
	if _, err := reg.Register(tl); err != nil {
		t.Fatal(err)
	}
	c := connectInMemory(t, newGateway(t, reg, Options{}))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for listed, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if listed.Title != "Look around" || listed.Annotations == nil || !listed.Annotations.ReadOnlyHint {
			t.Errorf("listed %+v (annotations %+v)", listed, listed.Annotations)
		}
	}
}
