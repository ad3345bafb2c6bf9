package mcpclient

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client honours the ttlMs of its list results (protocol 2026-07-28):
// a re-sync within the TTL (as after a reopened stream) sends no list
// request, a list_changed re-lists that list alone at once, and once the
// TTL has passed a re-sync fetches every list again. Counted at a real
// go-sdk server, on a fake clock.
func TestListsHonourTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		counts := map[string]int{}
		srv := mcp.NewServer(&mcp.Implementation{Name: "ttl", Version: "1"}, &mcp.ServerOptions{
			SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
				c.TTLMs, c.CacheScope = 60_000, "public"
			},
		})
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				mu.Lock()
				counts[method]++
				mu.Unlock()
				return next(ctx, method, req)
			}
		})
		noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}
		srv.AddTool(&mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object"}}, noop)
		srv.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
		srv.AddResource(&mcp.Resource{URI: "ttl://r", Name: "r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
		var sessions []*mcp.ServerSession
		reg := newRegistry()
		s, err := Start(stdioConfig("ttl"), Options{Registry: reg, NewTransport: func() (mcp.Transport, error) {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(context.Background(), st, nil)
			sessions = append(sessions, ss)
			return ct, err
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			s.Close()
			for _, ss := range sessions {
				ss.Close()
			}
		}()
		if err := s.WaitReady(context.Background()); err != nil {
			t.Fatal(err)
		}
		if v := s.Status().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("negotiated %q, want 2026-07-28", v)
		}
		lists := func() map[string]int {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			out := map[string]int{}
			for _, m := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
				out[m] = counts[m]
			}
			return out
		}
		check := func(when string, want map[string]int) {
			t.Helper()
			if diff := cmp.Diff(want, lists()); diff != "" {
				t.Errorf("%s: list requests (-want +got):\n%s", when, diff)
			}
		}
		check("after startup", map[string]int{"tools/list": 1, "prompts/list": 1, "resources/list": 1, "resources/templates/list": 1})

		resync := func() {
			gen, err := s.current()
			if err != nil {
				t.Fatal(err)
			}
			gen.requestResync(allKinds)
			time.Sleep(time.Second) // past minResyncInterval
		}
		resync()
		check("a re-sync within the TTL", map[string]int{"tools/list": 1, "prompts/list": 1, "resources/list": 1, "resources/templates/list": 1})
		if reg.Len() != 1 {
			t.Errorf("%d tools after a re-sync from the cache, want 1", reg.Len())
		}

		srv.AddTool(&mcp.Tool{Name: "b", InputSchema: map[string]any{"type": "object"}}, noop)
		time.Sleep(time.Second) // the SDK debounces list_changed
		check("tools/list_changed within the TTL", map[string]int{"tools/list": 2, "prompts/list": 1, "resources/list": 1, "resources/templates/list": 1})
		if reg.Len() != 2 {
			t.Errorf("%d tools after list_changed, want 2", reg.Len())
		}

		time.Sleep(time.Minute)
		resync()
		check("a re-sync after the TTL", map[string]int{"tools/list": 3, "prompts/list": 2, "resources/list": 2, "resources/templates/list": 2})
	})
}
