package gateway

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// setCacheable decides the cache fields (protocol 2026-07-28) of the
// gateway's results. Its lists are its own, merged from every backend and
// shaped per session and identity (views, policy), and it tells a change
// with list_changed: they are private and immediately stale. A read
// keeps the backend's ttlMs and cacheScope as sent (see reader).
func setCacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	switch req.(type) {
	case *mcp.ListToolsRequest, *mcp.ListResourcesRequest, *mcp.ListResourceTemplatesRequest, *mcp.ListPromptsRequest:
		*c = mcp.Cacheable{TTLMs: 0, CacheScope: "private"}
	}
}
