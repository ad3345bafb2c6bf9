package sdkwire

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Assumption 29: on 2026-07-28 the SDK answers a second read of a private
// resource from its cache (the raw case, no slot); handed through a
// PassResult slot, a private result is read again each time and the slot
// keeps its ttlMs and cacheScope as sent, while a public one is still
// cached. Over pipes and over Streamable HTTP.
func TestContractPrivateNotCached(t *testing.T) {
	srv := newServer(nil)
	for _, scope := range []string{"private", "public"} {
		srv.AddResource(&mcp.Resource{URI: "cache://" + scope, Name: scope}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{
				Cacheable: mcp.Cacheable{TTLMs: 60_000, CacheScope: scope},
				Contents:  []*mcp.ResourceContents{{URI: "cache://" + scope, Text: scope}},
			}, nil
		})
	}
	url := httpServer(t, srv, true)
	for _, via := range []string{"pipe", "http"} {
		for _, tc := range []struct {
			scope     string
			slot      bool
			wantReads int32
		}{
			{"private", false, 1}, // the SDK alone shares it
			{"private", true, 2},
			{"public", true, 1},
		} {
			t.Run(via+" "+tc.scope, func(t *testing.T) {
				var reads atomic.Int32
				count := func(msg jsonrpc.Message) {
					if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "resources/read" {
						reads.Add(1)
					}
				}
				table := NewTable(0)
				var cs *mcp.ClientSession
				if via == "http" {
					base := rtFunc(func(req *http.Request) (*http.Response, error) {
						if req.Method == http.MethodPost && req.Header.Get("Mcp-Method") == "resources/read" {
							reads.Add(1)
						}
						return http.DefaultTransport.RoundTrip(req)
					})
					cs = connectHTTP(t, url, &CaptureRoundTripper{Base: base, Table: table}, nil)
				} else {
					cs = connectInMemory(t, srv, nil, nil, func(tr mcp.Transport) mcp.Transport {
						spy := &spyTransport{Transport: tr, write: func(_ context.Context, msg jsonrpc.Message) { count(msg) }}
						return &CaptureTransport{Transport: spy, Table: table}
					})
				}
				if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
					t.Fatalf("negotiated %q", v)
				}
				for range 2 {
					ctx := context.Background()
					slot := NewSlot(PassResult)
					if tc.slot {
						ctx = WithSlot(ctx, slot)
					}
					res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "cache://" + tc.scope})
					table.Forget(slot)
					if err != nil {
						t.Fatal(err)
					}
					if res.Contents[0].Text != tc.scope {
						t.Fatalf("read %q", res.Contents[0].Text)
					}
					if raw, ok := slot.Result(); ok {
						var c mcp.Cacheable
						if err := json.Unmarshal(raw, &c); err != nil {
							t.Fatal(err)
						}
						if diff := cmp.Diff(mcp.Cacheable{TTLMs: 60_000, CacheScope: tc.scope}, c); diff != "" {
							t.Errorf("the slot's cache fields (-want +got):\n%s", diff)
						}
					}
				}
				if n := reads.Load(); n != tc.wantReads {
					t.Errorf("%d resources/read requests for two reads, want %d", n, tc.wantReads)
				}
			})
		}
	}
}

func TestUncachedPrivate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"ttlMs":60000,"cacheScope":"private","contents":[]}`, `{"cacheScope":"private","contents":[],"ttlMs":0}`},
		{`{"ttlMs":1.5,"cacheScope":"private"}`, `{"cacheScope":"private","ttlMs":0}`},
		{`{"ttlMs":0,"cacheScope":"private"}`, ""},
		{`{"cacheScope":"private"}`, ""},
		{`{"ttlMs":60000,"cacheScope":"public","contents":[{"text":"private"}]}`, ""},
		{`{"ttlMs":60000,"cacheScope":"private"`, ""},
		{`{"ttlMs":"60000","cacheScope":"private"}`, ""},
		// The fields as the SDK's decoder reads them: exact names after
		// unescaping, the last of a repeated one.
		{`{"ttl\u004ds":60000,"cacheScope":"private"}`, `{"cacheScope":"private","ttlMs":0}`},
		{`{"ttlMs":60000,"cacheScope":"private","CacheScope":"public"}`, `{"CacheScope":"public","cacheScope":"private","ttlMs":0}`},
		{`{"ttlMs":60000,"TTLMs":0,"cacheScope":"private"}`, `{"TTLMs":0,"cacheScope":"private","ttlMs":0}`},
		{`{"ttlMs":0,"cacheScope":"private","ttlMs":60000}`, `{"cacheScope":"private","ttlMs":0}`},
	} {
		got, changed := uncachedPrivate(json.RawMessage(tc.in))
		if changed != (tc.want != "") || string(got) != tc.want {
			t.Errorf("uncachedPrivate(%s) = %s, %v; want %q", tc.in, got, changed, tc.want)
		}
	}
}
