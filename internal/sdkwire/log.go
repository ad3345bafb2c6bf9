package sdkwire

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mcpbridge/mcpbridge/internal/errtext"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// The SDK's client logger (assumption 10 of the package doc).

// toolDropMessage is the message of the record the SDK logs, with the
// attributes "tool" and "error", for each tool it drops from a tools/list
// result because of invalid x-mcp-header annotations.
const toolDropMessage = "excluding tool from tools/list"

// ToolDrops keeps the reasons the SDK gave for dropping tools from
// tools/list results, by tool name. Its methods are safe for concurrent
// use.
type ToolDrops struct {
	mu      sync.Mutex
	reasons map[string]string
}

// Take returns why the SDK dropped the tool name, and forgets it; "" when
// the SDK gave no reason for it.
func (d *ToolDrops) Take(name string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.reasons[name]
	delete(d.reasons, name)
	return r
}

// Clear forgets every reason. Call it before each tools/list: a reason
// no Take asked for (the page also listed a valid tool of that name) must
// not outlive its page.
func (d *ToolDrops) Clear() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reasons = nil
}

func (d *ToolDrops) put(name, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.reasons == nil {
		d.reasons = make(map[string]string)
	}
	d.reasons[name] = reason
}

// ClientLogger returns the logger for mcp.ClientOptions.Logger: the SDK's
// tool-drop records go to drops (the caller logs its own line with the
// reason), every other record goes to next with prefix before its message.
// Texts are cut to textcut.PeerText.
func ClientLogger(next slog.Handler, prefix string, drops *ToolDrops) *slog.Logger {
	return slog.New(&clientHandler{next: next, prefix: prefix, drops: drops})
}

type clientHandler struct {
	next   slog.Handler
	prefix string
	drops  *ToolDrops
}

func (h *clientHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelError || h.next.Enabled(ctx, level) // drop records are errors
}

func (h *clientHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == toolDropMessage {
		var name, reason string
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "tool":
				name = a.Value.String()
			case "error":
				reason = a.Value.String()
			}
			return true
		})
		if name != "" {
			h.drops.put(name, cutText(reason))
			return nil
		}
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	out := slog.NewRecord(r.Time, r.Level, h.prefix+cutText(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool { out.AddAttrs(cutAttr(a)); return true })
	return h.next.Handle(ctx, out)
}

// cutText cuts s to textcut.PeerText.
func cutText(s string) string { return textcut.Peer(s) }

// cutError is err with its text cut to textcut.PeerText; errors.Is and As
// still find err.
func cutError(err error) error { return errtext.Map(err, cutText) }

// cutAttr is a with its text, a string's or an error's, cut.
func cutAttr(a slog.Attr) slog.Attr {
	switch v := a.Value.Resolve(); {
	case v.Kind() == slog.KindString:
		a.Value = slog.StringValue(cutText(v.String()))
	case v.Kind() == slog.KindAny:
		if err, ok := v.Any().(error); ok {
			a.Value = slog.StringValue(cutText(err.Error()))
		}
	}
	return a
}

func (h *clientHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &clientHandler{next: h.next.WithAttrs(attrs), prefix: h.prefix, drops: h.drops}
}

func (h *clientHandler) WithGroup(name string) slog.Handler {
	return &clientHandler{next: h.next.WithGroup(name), prefix: h.prefix, drops: h.drops}
}

// ServerLogger returns the handler to give the SDK's server as its log: its
// info records (a line or three per client session: "server connecting",
// "server session connected", …) at debug level, so thousands of sessions
// never flood an info-level log; warnings and errors as they are.
func ServerLogger(h slog.Handler) slog.Handler { return quieter{h} }

// quieter lowers info records to debug.
type quieter struct{ slog.Handler }

func (q quieter) Enabled(ctx context.Context, level slog.Level) bool {
	return q.Handler.Enabled(ctx, lowered(level))
}

func (q quieter) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lowered(r.Level)
	return q.Handler.Handle(ctx, r)
}

func (q quieter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quieter{q.Handler.WithAttrs(attrs)}
}
func (q quieter) WithGroup(name string) slog.Handler { return quieter{q.Handler.WithGroup(name)} }

// lowered is level, with info lowered to debug.
func lowered(level slog.Level) slog.Level {
	if level == slog.LevelInfo {
		return slog.LevelDebug
	}
	return level
}
