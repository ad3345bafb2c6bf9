package gateway

import (
	"context"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// BenchmarkViewList is one tools/list of 2,000 tools in memory: every
// tool listed, and a session's view (search on, one server pinned) that
// the gateway narrows the page to.
func BenchmarkViewList(b *testing.B) {
	for _, withView := range []bool{false, true} {
		b.Run(fmt.Sprintf("view=%v", withView), func(b *testing.B) {
			reg := tool.NewRegistry()
			for i := range 2000 {
				t := goTool(fmt.Sprintf("mcp__s%d__tool_%d", i%50, i), textBody("x"))
				t.Origin.Server = fmt.Sprintf("s%d", i%50)
				if _, err := reg.Register(t); err != nil {
					b.Fatal(err)
				}
			}
			var opts Options
			if withView {
				v, err := toolview.New(reg, toolview.Config{Mode: toolview.ModeOn, Pinned: []string{"mcp__s1__*"}})
				if err != nil {
					b.Fatal(err)
				}
				defer v.Close()
				opts.NewView = func() View { return v.NewSession() }
			}
			g := New(reg, opts)
			defer g.Close()
			ct, st := mcp.NewInMemoryTransports()
			ctx, stop := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- g.ServeTransport(ctx, st) }()
			defer func() { stop(); <-served }()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.ListTools(ctx, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
