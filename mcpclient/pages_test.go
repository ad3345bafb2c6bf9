package mcpclient

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// pagedServer is a bridge server connected in memory (2026-07-28) to a
// go-sdk server that lists two tools one per page, whose cursors carry a
// nonce per listing, counting its tools/list requests.
type pagedServer struct {
	lists atomic.Int32
	srv   *Server
	gen   *generation
	log   *mcptest.Log
}

// startPaged starts a pagedServer whose pages have a ttlMs of ttl, in a
// synctest bubble, and waits for it to be ready.
func startPaged(t *testing.T, ttl time.Duration) *pagedServer {
	t.Helper()
	p := &pagedServer{log: mcptest.NewLog()}
	srv := mcp.NewServer(&mcp.Implementation{Name: "nonce", Version: "1"}, &mcp.ServerOptions{
		PageSize: 1,
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = int(ttl.Milliseconds()), "public"
		},
	})
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	for _, name := range []string{"a", "b"} {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, noop)
	}
	var listing int
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/list" {
				return next(ctx, method, req)
			}
			p.lists.Add(1)
			if params := req.(*mcp.ListToolsRequest).Params; params == nil || params.Cursor == "" {
				listing++
			} else {
				params.Cursor, _, _ = strings.Cut(params.Cursor, "#")
			}
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.ListToolsResult); ok && r.NextCursor != "" {
				r.NextCursor += fmt.Sprintf("#%d", listing)
			}
			return res, err
		}
	})
	s := startInBubble(t, "nonce", srv, p.log.Logger())
	if v := s.Status().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	p.srv = s
	var err error
	if p.gen, err = s.current(); err != nil {
		t.Fatal(err)
	}
	return p
}

// resync re-syncs the tools n times, each past minResyncInterval.
func (p *pagedServer) resync(n int) {
	for range n {
		p.gen.requestResync(kindTools)
		time.Sleep(time.Second)
	}
	synctest.Wait()
}

// A server whose cursors change from one listing to the next (a nonce per
// listing) does not grow the raw pages kept for the SDK's cache: at most
// the pages of two listings are kept, whatever the number of re-syncs
// (every later page was kept under its new cursor for the connection's
// life, a catalog's size again at each re-sync).
func TestListedPagesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startPaged(t, 0)
		const resyncs = 50
		p.resync(resyncs)
		if n := p.lists.Load(); n != 2*(resyncs+1) {
			t.Fatalf("%d tools/list requests, want %d: the re-syncs did not all list", n, 2*(resyncs+1))
		}
		if n := p.srv.src.Len(); n != 2 {
			t.Errorf("%d tools registered, want 2", n)
		}
		if n := len(p.gen.pages.cur) + len(p.gen.pages.prev); n > 4 {
			t.Errorf("%d raw pages kept after %d listings of 2 pages, want at most two listings' (4)", n, resyncs+1)
		}
	})
}

// Pages the SDK answers from its cache, listing after listing while their
// ttlMs lasts, are found each time: the previous listing's pages carry
// over into the listing that used them.
func TestListedPagesFromCacheKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startPaged(t, time.Hour)
		p.resync(3)
		if n := p.lists.Load(); n != 2 {
			t.Errorf("%d tools/list requests, want the 2 of the first listing: the others are the SDK cache's", n)
		}
		if p.log.HasRecord(slog.LevelError, "tool re-sync failed") {
			t.Errorf("a re-sync from the SDK's cache failed:\n%s", p.log.Text())
		}
		if n := p.srv.src.Len(); n != 2 {
			t.Errorf("%d tools registered, want 2", n)
		}
	})
}

// The reason the SDK gives for dropping a tool is not kept past the page
// that dropped it, also when nothing took it: a page that lists a name
// twice, once with invalid x-mcp-header annotations, is refused after the
// SDK dropped one of the two, and a server naming the pair anew at each
// listing grew the kept reasons at every re-sync, for the connection's
// life.
func TestToolDropReasonsNotKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := mcptest.NewLog()
		srv := mcp.NewServer(&mcp.Implementation{Name: "dup", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "seed", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
		var listing int
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method != "tools/list" {
					return next(ctx, method, req)
				}
				if listing++; listing == 1 {
					return next(ctx, method, req)
				}
				name := fmt.Sprintf("dup%d", listing)
				return &mcp.ListToolsResult{Tools: []*mcp.Tool{
					{Name: name, InputSchema: map[string]any{"type": "object", "properties": map[string]any{"region": map[string]any{"type": "string", "x-mcp-header": "Region"}}}},
					{Name: name, InputSchema: map[string]any{"type": "object", "properties": map[string]any{"scope": map[string]any{"type": "object", "x-mcp-header": "Scope"}}}},
				}}, nil
			}
		})
		s := startInBubble(t, "dup", srv, log.Logger())
		gen, err := s.current()
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			gen.requestResync(kindTools)
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if listing < 3 {
			t.Fatalf("%d listings, want the re-syncs' too", listing)
		}
		if reason := gen.drops.Take("dup2"); reason != "" {
			t.Errorf("the first re-sync's drop of dup2 is still kept after %d listings: %q", listing, reason)
		}
	})
}

// startInBubble starts a bridge to srv, in memory, inside a synctest
// bubble, waits until it is ready, and closes both when t ends.
func startInBubble(t *testing.T, name string, srv *mcp.Server, logger *slog.Logger) *Server {
	t.Helper()
	mem := newMemServer(t, srv)
	s, err := Start(stdioConfig(name), Options{Registry: newRegistry(), Logger: logger, NewTransport: mem.transport})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		mem.crash(1)
		synctest.Wait()
	})
	if err := s.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}
