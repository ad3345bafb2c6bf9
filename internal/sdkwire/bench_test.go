package sdkwire

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pageConn is an in-process server that answers initialize and every
// tools/list with a fixed page, without framing or encoding costs, so a
// benchmark of ListTools measures the client side only.
type pageConn struct {
	page []byte
	in   chan jsonrpc.Message
	done chan struct{}
}

func (c *pageConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }
func (c *pageConn) SessionID() string                               { return "" }
func (c *pageConn) Close() error {
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	return nil
}

func (c *pageConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *pageConn) Write(_ context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return nil
	}
	result := c.page
	if req.Method == "initialize" {
		result = []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"p","version":"0"}}`)
	}
	// A fresh copy per answer, as a connection decodes a fresh message.
	c.in <- &jsonrpc.Response{ID: req.ID, Result: append([]byte(nil), result...)}
	return nil
}

// catalogPage is a tools/list page of n catalog tools (as the bench's), of
// which every step-th carries an x-mcp-header annotation (0: none).
func catalogPage(n, step int) []byte {
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		hdr := ""
		if step > 0 && i%step == 0 {
			hdr = `,"x-mcp-header":"Shard"`
		}
		fmt.Fprintf(&b, `{"name":"tool_%05d","description":"Searches shard %d of the archive and returns the matching records.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"What to look for"%s},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"],"additionalProperties":false}}`, i, i, hdr)
	}
	b.WriteString(`],"nextCursor":"next"}`)
	return []byte(b.String())
}

// BenchmarkListPage is one 100-tool tools/list page through a real client
// session and CaptureTransport: what discovery costs beneath the bridge's
// own parsing, per page. pass hands the SDK every tool (what the bridge did
// before tool-less pages); header-only hands it the x-mcp-header tools,
// with none, one in ten, or all of the page's tools carrying one.
func BenchmarkListPage(b *testing.B) {
	for _, tc := range []struct {
		name string
		mode Mode
		step int
	}{
		{"pass/none", PassResult, 0},
		{"header-only/none", HeaderToolsPage, 0},
		{"header-only/1in10", HeaderToolsPage, 10},
		{"header-only/all", HeaderToolsPage, 1},
		{"pass/all", PassResult, 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			server := &pageConn{page: catalogPage(100, tc.step), in: make(chan jsonrpc.Message, 1), done: make(chan struct{})}
			table := NewTable(0)
			cs, err := newClient(nil).Connect(context.Background(), &CaptureTransport{Transport: server, Table: table}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				slot := NewSlot(tc.mode)
				if _, err := cs.ListTools(WithSlot(context.Background(), slot), &mcp.ListToolsParams{Cursor: "c"}); err != nil {
					b.Fatal(err)
				}
				table.Forget(slot)
			}
		})
	}
}

// stripTools is how the bridge handed the SDK a page before this package:
// the page without its tools, its cursor and TTL only.
func stripTools(result json.RawMessage) json.RawMessage {
	var page struct {
		NextCursor json.RawMessage `json:"nextCursor"`
		TTLMs      json.RawMessage `json:"ttlMs"`
	}
	if json.Unmarshal(result, &page) != nil {
		return result
	}
	empty := []byte(`{"tools":[]`)
	if len(page.NextCursor) > 0 {
		empty = append(append(empty, `,"nextCursor":`...), page.NextCursor...)
	}
	if len(page.TTLMs) > 0 {
		empty = append(append(empty, `,"ttlMs":`...), page.TTLMs...)
	}
	return append(empty, '}')
}

// BenchmarkPageRewrite compares the page rewrite alone: the tool-less page
// of before and the header-only page of now.
func BenchmarkPageRewrite(b *testing.B) {
	page := catalogPage(100, 0)
	b.Run("tool-less (before)", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for range b.N {
			stripTools(page)
		}
	})
	b.Run("header-only", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for range b.N {
			headerToolsPage(page)
		}
	})
}
