package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/chattools"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/tool"
)

// toolInFull is `tools NAME`: one tool with nothing cut (the list shows a
// description's first line only): its whole description, its schemas,
// title and annotations; with --json its chat-completions entry, with
// --tokens its tokens. Only the tool's own server starts, as for call.
func (e *env) toolInFull(ctx context.Context, f *flags, name string) error {
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	b, err := e.open(ctx, src.only(serverOf(name)), f)
	if err != nil {
		return err
	}
	defer b.close()
	t, ok := b.findTool(name)
	if !ok {
		return e.noTool(b, f, name)
	}
	switch {
	case f.tokens:
		err = writeTokens(e.Stdout, []tool.Tool{t}, f.json)
	case f.json:
		err = writeJSON(e.Stdout, chattools.Of(t))
	default:
		err = writeToolInFull(e.Stdout, t)
	}
	if err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	if f.timings {
		e.printTimings(b)
	}
	return nil
}

// findTool is the tool called name: one the model sees (search_tools
// under a tool-search entry), else any of the catalog's.
func (b *bridge) findTool(name string) (tool.Tool, bool) {
	if list, err := b.modelTools(); err == nil {
		if i := slices.IndexFunc(list, func(t tool.Tool) bool { return t.Name == name }); i >= 0 {
			return list[i], true
		}
	}
	return b.reg.Get(name)
}

// noTool is the error of `tools NAME` (with f) for a name no tool has:
// why it is withheld, else the name meant, else the command that lists
// them; the servers that failed are reported first, since the tool may
// be theirs.
func (e *env) noTool(b *bridge, f *flags, name string) error {
	e.reportFailures(b)
	e.reportPinNotes(b)
	e.sayNoServers(b)
	if why, ok := b.reg.Withheld(name); ok {
		return fmt.Errorf("tools: %w", &tool.WithheldError{Name: name, Why: why})
	}
	if hint := toolHint(name, b); hint != "" {
		return fmt.Errorf("tools: no tool %q: %s", name, hint)
	}
	return fmt.Errorf("tools: no tool %q ('mcpbridge tools%s' lists them)", name, sourceArgs(f))
}

// writeToolInFull prints t for a person: its name and origin, title and
// annotations, the whole description, and each schema indented (as the
// server wrote it, keys in its order). Everything the server wrote is
// escaped for the terminal.
func writeToolInFull(w io.Writer, t tool.Tool) error {
	var b strings.Builder
	b.WriteString(t.Name)
	if t.Origin.Server != "" {
		fmt.Fprintf(&b, "  (server %q, tool %q)", t.Origin.Server, t.Origin.Name)
	}
	b.WriteString("\n")
	if t.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", termsafe.Line(t.Title))
	}
	if len(t.Annotations) > 0 {
		fmt.Fprintf(&b, "Annotations: %s\n", termsafe.Line(compactJSON(t.Annotations)))
	}
	if d := strings.TrimSpace(t.Description); d != "" {
		fmt.Fprintf(&b, "\n%s\n", termsafe.Text(d))
	}
	for _, s := range []struct {
		label string
		raw   json.RawMessage
	}{{"Input schema", t.InputSchema}, {"Output schema", t.OutputSchema}} {
		if len(s.raw) > 0 {
			fmt.Fprintf(&b, "\n%s:\n%s\n", s.label, termsafe.Text(indentJSON(s.raw)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// indentJSON is raw indented by two spaces, keys in their order; raw as
// it is when it is not JSON.
func indentJSON(raw json.RawMessage) string {
	var out bytes.Buffer
	if json.Indent(&out, raw, "", "  ") != nil {
		return string(raw)
	}
	return out.String()
}

// compactJSON is raw on one line; raw as it is when it is not JSON.
func compactJSON(raw json.RawMessage) string {
	var out bytes.Buffer
	if json.Compact(&out, raw) != nil {
		return string(raw)
	}
	return out.String()
}
