package view

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// catalogTools are the tools a harness's servers offer in these tests.
func catalogTools() []tool.Tool {
	mk := func(server, name, desc string) tool.Tool {
		return tool.Tool{
			Name: "mcp__" + server + "__" + name, Description: desc, Origin: tool.Origin{Server: server},
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
				return tool.Output{Content: []tool.Content{tool.Text(name)}}, nil
			},
		}
	}
	return []tool.Tool{
		mk("github", "create_issue", "Create a new issue in a GitHub repository"),
		mk("gitlab", "create_issue", "Create a new issue in a GitLab project"),
		mk("fs", "read_file", "Read a file from the file system"),
		mk("time", "get_current_time", "Get the current time in a timezone"),
	}
}

// apply parses src and applies it to h.
func apply(t *testing.T, h *host.Host, cat *host.Catalog, src string) {
	t.Helper()
	plan, err := cat.Parse("mcpbridge.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Apply(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
}

func visible(t *testing.T, k *Kind) []string {
	t.Helper()
	v := k.View()
	if v == nil {
		t.Fatal("no view")
	}
	tools, err := v.Tools()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Name)
	}
	return out
}

// A tool-search entry turns on deferred loading for its host; a reload
// with a new config keeps what the model has loaded; removing the entry
// removes search_tools.
func TestEntryRunsTheView(t *testing.T) {
	k := NewKind()
	cat := host.NewCatalog(k)
	reg := tool.NewRegistry()
	if err := reg.NewSource().Publish(catalogTools()...); err != nil {
		t.Fatal(err)
	}
	h, err := host.New(host.Options{Catalog: cat, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	apply(t, h, cat, "- {id: s, name: tool-search, config: {mode: on, alwaysLoad: [fs]}}\n")
	want := []string{"mcp__fs__read_file", toolview.SearchName}
	if got := visible(t, k); !slices.Equal(got, want) {
		t.Fatalf("view %v, want %v", got, want)
	}
	res, err := reg.Execute(context.Background(), toolview.SearchName, json.RawMessage(`{"query":"open a GitLab issue","limit":1}`))
	if err != nil || res.IsError || !strings.Contains(res.Text(), `"name":"mcp__gitlab__create_issue"`) {
		t.Fatalf("search_tools: %v %s", err, res.Text())
	}

	apply(t, h, cat, "- {id: s, name: tool-search, config: {mode: on, pinned: ['mcp__time__*']}}\n")
	want = []string{"mcp__fs__read_file", "mcp__gitlab__create_issue", "mcp__time__get_current_time", toolview.SearchName}
	if got := visible(t, k); !slices.Equal(got, want) {
		t.Errorf("after reload: view %v, want %v (loaded and shown tools stay)", got, want)
	}
	st := h.Status()
	if len(st) != 1 || st[0].State != host.StateReady || st[0].Tools != 1 || st[0].Name != Name {
		t.Errorf("status %+v", st)
	}

	apply(t, h, cat, "[]\n")
	if _, ok := reg.Get(toolview.SearchName); ok || k.View() != nil {
		t.Error("search_tools or the view outlived its entry")
	}
}

// A spec whose config another kind decoded is an error of its own entry,
// not a panic that takes the host down.
func TestStartForeignConfig(t *testing.T) {
	k := NewKind()
	_, err := k.Start(context.Background(), host.Spec{Name: Name, Config: "a server's config"}, host.Env{})
	if err == nil || !strings.Contains(err.Error(), "tool-search: the entry's config is a string, not a toolview.Config") {
		t.Errorf("Start: %v", err)
	}
	if k.View() != nil {
		t.Error("a view runs after a failed start")
	}
}

// Mistakes in the entry are config errors at their line and column.
func TestDecodeErrors(t *testing.T) {
	cat := host.NewCatalog(NewKind())
	for _, c := range []struct{ src, want string }{
		{"- {id: s, name: tool-search, config: {mode: sometimes}}", `mcpbridge.yaml:1:45: entry "s": config.mode: must be auto, on or off, got "sometimes"`},
		{"- {id: s, name: tool-search, config: {threshold: 0}}", `mcpbridge.yaml:1:50: entry "s": config.threshold: must be between 1 and`},
		{"- {id: s, name: tool-search, config: {pinned: ['a[']}}", `mcpbridge.yaml:1:47: entry "s": config.pinned: "a[" is not a valid glob`},
		{"- {id: s, name: tool-search, config: {pined: [a]}}", `mcpbridge.yaml:1:39: entry "s": config.pined: unknown key "pined" (did you mean "pinned"?)`},
		{"- {id: s, name: tool-search}\n- {id: t, name: tool-search}", `entry "t"`},
	} {
		_, err := cat.Parse("mcpbridge.yaml", []byte(c.src), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %q", c.src, err, c.want)
		}
	}
	cfg, err := DecodeConfig(nil, nil)
	if err != nil || cfg.Mode != "" || cfg.Threshold != 0 {
		t.Errorf("no config: %+v, %v", cfg, err)
	}
}

// records is a slog handler that hands each record to a test.
type records chan slog.Record

func (records) Enabled(context.Context, slog.Level) bool          { return true }
func (r records) Handle(_ context.Context, rec slog.Record) error { r <- rec.Clone(); return nil }
func (r records) WithAttrs([]slog.Attr) slog.Handler              { return r }
func (r records) WithGroup(string) slog.Handler                   { return r }

// next returns the next warning logged, its attributes as text.
func (r records) next(t *testing.T) (msg string, attrs map[string]string) {
	t.Helper()
	for {
		select {
		case rec := <-r:
			if rec.Level != slog.LevelWarn {
				continue
			}
			attrs = map[string]string{}
			rec.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
			return rec.Message, attrs
		case <-time.After(10 * time.Second):
			t.Fatal("no warning logged")
		}
	}
}

// A pinned name that matches no tool (a typo) is warned about, once,
// when the server it names has published its tools, with the closest
// name it has; a server publishing later is checked then.
func TestUnmatchedPinWarned(t *testing.T) {
	k := NewKind()
	cat := host.NewCatalog(k)
	reg := tool.NewRegistry()
	if err := reg.NewSource().Publish(catalogTools()...); err != nil {
		t.Fatal(err)
	}
	logged := make(records, 100)
	h, err := host.New(host.Options{Catalog: cat, Registry: reg, Logger: slog.New(logged)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	apply(t, h, cat, "- {id: s, name: tool-search, config: {mode: on, pinned: [mcp__github__craete_issue, mcp__time__*, mcp__docs__serach_docs]}}\n")
	msg, attrs := logged.next(t)
	if !strings.Contains(msg, "pinned") || attrs["pinned"] != "mcp__github__craete_issue" || attrs["server"] != "github" ||
		attrs["did_you_mean"] != "mcp__github__create_issue" {
		t.Errorf("warning %q %v, want one naming the pin, its server and the tool meant", msg, attrs)
	}

	docs := reg.NewSource()
	defer docs.Close()
	search := catalogTools()[0]
	search.Name, search.Origin = "mcp__docs__search_docs", tool.Origin{Server: "docs"}
	for range 2 { // a refresh warns no more
		if err := docs.Publish(search); err != nil {
			t.Fatal(err)
		}
	}
	msg, attrs = logged.next(t)
	if attrs["pinned"] != "mcp__docs__serach_docs" || attrs["server"] != "docs" || attrs["did_you_mean"] != "mcp__docs__search_docs" {
		t.Errorf("warning %q %v, want the docs pin's", msg, attrs)
	}
}
