package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// startCacheBackend starts a 2026-07-28 backend with two counting
// resources read fresh for 60 s, cache://private (for the requesting user
// only) and cache://public, and lists it keeps public for 60 s too.
func startCacheBackend(t *testing.T, reg *tool.Registry) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "cache", Version: "1"}, &mcp.ServerOptions{
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			if c.TTLMs == 0 {
				c.TTLMs, c.CacheScope = 60_000, "public"
			}
		},
	})
	var reads atomic.Int64
	for _, scope := range []string{"private", "public"} {
		uri := "cache://" + scope
		srv.AddResource(&mcp.Resource{URI: uri, Name: scope}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{
				Cacheable: mcp.Cacheable{TTLMs: 60_000, CacheScope: scope},
				Contents:  []*mcp.ResourceContents{{URI: uri, Text: fmt.Sprint("read ", reads.Add(1))}},
			}, nil
		})
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	c := startMemBackend(t, reg, mcpclient.Config{ServerName: "cache", Transport: mcpclient.TransportStdio, Command: "unused"}, srv)
	if v := c.Status().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("backend negotiated %q, want 2026-07-28", v)
	}
}

type cacheFields struct {
	TTLMs      *int    `json:"ttlMs"`
	CacheScope *string `json:"cacheScope"`
	Contents   []struct {
		Text string `json:"text"`
	} `json:"contents"`
}

func (c cacheFields) String() string {
	s := "ttlMs "
	if c.TTLMs != nil {
		s += fmt.Sprint(*c.TTLMs)
	}
	s += " cacheScope "
	if c.CacheScope != nil {
		s += *c.CacheScope
	}
	return s
}

// A read carries the backend's ttlMs and cacheScope as sent, and two
// sessions reading a private resource each get their own read; the
// gateway's own lists, which differ by session and identity (views,
// policy), are private and immediately stale, whatever the backends say.
func TestGatewayCacheFields(t *testing.T) {
	reg := tool.NewRegistry()
	startCacheBackend(t, reg)
	g := newGateway(t, reg, Options{})
	a, b := connectRaw(t, g), connectRaw(t, g)
	read := func(c *rawClient, uri string) cacheFields {
		t.Helper()
		m := c.request("resources/read", `{"uri":"`+uri+`"}`)
		var f cacheFields
		if m.Error != nil || json.Unmarshal(m.Result, &f) != nil || len(f.Contents) != 1 {
			t.Fatalf("read %s: %+v %s", uri, m.Error, m.Result)
		}
		return f
	}
	pa, pb := read(a, "cache://private"), read(b, "cache://private")
	if pa.Contents[0].Text == pb.Contents[0].Text {
		t.Errorf("two sessions both got %q of the private resource: one was served the other's", pa.Contents[0].Text)
	}
	want := map[string]string{"private": "ttlMs 60000 cacheScope private", "public": "ttlMs 60000 cacheScope public"}
	got := map[string]string{"private": pb.String(), "public": read(a, "cache://public").String()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read cache fields (-want +got):\n%s", diff)
	}
	lists := map[string]string{}
	for _, method := range []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"} {
		m := a.request(method, `{}`)
		var f cacheFields
		if m.Error != nil || json.Unmarshal(m.Result, &f) != nil {
			t.Fatalf("%s: %+v %s", method, m.Error, m.Result)
		}
		lists[method] = f.String()
	}
	const private = "ttlMs 0 cacheScope private"
	wantLists := map[string]string{"tools/list": private, "resources/list": private, "resources/templates/list": private, "prompts/list": private}
	if diff := cmp.Diff(wantLists, lists); diff != "" {
		t.Errorf("list cache fields (-want +got):\n%s", diff)
	}
	// The same for a client on 2026-07-28, the protocol that defines them.
	c := connectInMemory(t, g)
	if v := c.session.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("client negotiated %q", v)
	}
	res, err := c.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Cacheable != (mcp.Cacheable{CacheScope: "private"}) {
		t.Errorf("tools/list at 2026-07-28 carries %+v, want private and stale", res.Cacheable)
	}
}
