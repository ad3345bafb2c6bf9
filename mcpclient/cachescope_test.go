package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// cacheServer serves two counting resources on protocol 2026-07-28, each
// read fresh for 60 s: cache://private only for the requesting user,
// cache://public for anyone.
func cacheServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "cache", Version: "1"}, nil)
	var reads atomic.Int64
	for _, scope := range []string{"private", "public"} {
		uri := "cache://" + scope
		srv.AddResource(&mcp.Resource{URI: uri, Name: scope}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{
				Cacheable: mcp.Cacheable{TTLMs: 60000, CacheScope: scope},
				Contents:  []*mcp.ResourceContents{{URI: uri, Text: fmt.Sprint("read ", reads.Add(1))}},
			}, nil
		})
	}
	return srv
}

// One connection serves every consumer (every gateway session and
// identity): a private result is never answered from the SDK's cache,
// while the TTL and scope still reach the consumer as sent. A public one
// may be.
func TestPrivateReadNotShared(t *testing.T) {
	hs := mcptest.NewHTTPServer(t, cacheServer(), mcptest.HTTPOptions{Stateless: true})
	h := mustStart(t, Config{ServerName: "cache", Transport: TransportStreamableHTTP, URL: hs.URL}, Options{})
	if v := h.srv.Status().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	read := func(uri string) (text string, c mcp.Cacheable) {
		t.Helper()
		res, err := h.reg.ReadResource(context.Background(), "cache", uri)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(res.Wire, &c); err != nil {
			t.Fatalf("%s: %v", res.Wire, err)
		}
		return res.Content[0].Text, c
	}
	first, c1 := read("cache://private")
	second, c2 := read("cache://private")
	if first == second {
		t.Errorf("two reads of a private resource both got %q: the second was answered from a cache shared by every consumer", first)
	}
	for _, c := range []mcp.Cacheable{c1, c2} {
		if c != (mcp.Cacheable{TTLMs: 60000, CacheScope: "private"}) {
			t.Errorf("private read carries %+v, want the server's ttlMs and cacheScope", c)
		}
	}
	pub1, c3 := read("cache://public")
	pub2, _ := read("cache://public")
	if pub1 != pub2 || c3 != (mcp.Cacheable{TTLMs: 60000, CacheScope: "public"}) {
		t.Errorf("public reads %q, %q with %+v: want one read, cached, as sent", pub1, pub2, c3)
	}
}
