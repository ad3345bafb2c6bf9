package gatewayrun

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpbridge/mcpbridge/codemode"
	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	viewkind "github.com/mcpbridge/mcpbridge/internal/kinds/view"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// codeToolNames are the tools code mode lists (Config.CodeMode).
var codeToolNames = []string{codemode.SearchName, codemode.DescribeName, codemode.RunName}

// listedTools are the only tools cfg's sessions list: code mode's, or
// nil for the catalog.
func listedTools(cfg Config) []string {
	if cfg.CodeMode {
		return codeToolNames
	}
	return nil
}

// withCodeMode registers code mode's tools in reg and makes every client
// session list them instead of the catalog (Config.CodeMode). The
// programs of run_code call through gw, once set, as their caller
// (gatewayCode). The other tools stay callable by name, as under tool
// search: a listing saves the client's context, the gateway entry's
// policy is what decides who may call what (run_code included).
func withCodeMode(opts gateway.Options, reg *tool.Registry, view *gatewayCode) (gateway.Options, error) {
	if _, err := reg.Register(codemode.Tools(view, codemode.Options{CallUnlisted: true})...); err != nil {
		return opts, fmt.Errorf("serve: --code-mode: %w", err) // untested: the registry is new
	}
	opts.NewView = func() gateway.View { return codeListing{reg} }
	return opts, nil
}

// gatewayCode is the view of the gateway's run_code: the tools the gateway
// serves to the caller of run_code, each call one of that caller's,
// through the gateway's call path (Gateway.CallFor).
type gatewayCode struct {
	gw *gateway.Gateway // set once the gateway is made, before it serves
}

var (
	_ codemode.CallerView = (*gatewayCode)(nil)
	_ codemode.HolderView = (*gatewayCode)(nil)
)

// Holder is who runs the program of ctx, as the gateway's per-identity
// limits count callers.
func (v *gatewayCode) Holder(ctx context.Context) string { return v.gw.Holder(ctx) }

// Tools is the view without a caller: none, since what a program may
// call depends on who runs it (ToolsFor).
func (v *gatewayCode) Tools() ([]tool.Tool, error) { return v.ToolsFor(context.Background()) }

// ToolsFor is what the gateway serves to ctx's caller but the tools of
// code mode and tool search, which a program has no use for.
func (v *gatewayCode) ToolsFor(ctx context.Context) ([]tool.Tool, error) {
	tools, err := v.gw.ToolsFor(ctx)
	return slices.DeleteFunc(tools, func(t tool.Tool) bool { return notForPrograms(t.Name) }), err
}

// Call calls name as the caller of ctx. A program's tools.call of a name
// it was not declared reaches the gateway's Gate, which records it
// (codemode.Options.CallUnlisted); the tools ToolsFor leaves out are
// unknown to it without that, as they are not the catalog's.
func (v *gatewayCode) Call(ctx context.Context, name string, args json.RawMessage) (tool.Result, error) {
	if notForPrograms(name) {
		return tool.Result{}, fmt.Errorf("unknown tool %q: a program calls the catalog's tools, not code mode's or tool search", name)
	}
	return v.gw.CallFor(ctx, name, args)
}

// notForPrograms reports whether name is a tool a program may not call.
func notForPrograms(name string) bool {
	return slices.Contains(BuiltinTools(), name)
}

// codeListing is a client session's listing in code mode: the tools of
// code mode alone.
type codeListing struct{ reg *tool.Registry }

var _ gateway.View = codeListing{}

func (l codeListing) Tools() ([]tool.Tool, error) {
	var out []tool.Tool
	for _, name := range codeToolNames {
		if t, ok := l.reg.Get(name); ok {
			out = append(out, t)
		}
	}
	return out, nil
}

func (codeListing) Bind(ctx context.Context) context.Context { return ctx }
func (codeListing) Grown() bool                              { return false }

// sessionViews is the gateway's Options.NewView outside code mode: each
// client session gets a toolview.Session of its own over the config's
// tool-search view (which follows reloads; the whole catalog while the
// config has none).
func sessionViews(cat *host.Catalog, reg *tool.Registry) func() gateway.View {
	k, ok := cat.Kind(viewkind.Name)
	if !ok {
		return nil // untested: every catalog of the CLI has the kind
	}
	kind := k.(*viewkind.Kind)
	return func() gateway.View { return toolview.NewSession(reg, kind.View) }
}
