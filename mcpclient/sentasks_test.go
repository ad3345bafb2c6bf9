package mcpclient

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// retained is what s keeps of the server's requests for their written
// form and their calls.
func retained(s *Server) int {
	s.sent.mu.Lock()
	defer s.sent.mu.Unlock()
	s.related.mu.Lock()
	defer s.related.mu.Unlock()
	n := 0
	for _, a := range s.sent.list {
		n += len(a.key) + len(a.raw)
	}
	for _, a := range s.related.list {
		n += len(a.key)
	}
	return n
}

// A server sending 16 elicitations, each four times the largest kept as
// written, that no one answers leaves the bridge holding next to nothing
// of them (16 MiB of them took over the call's time limit under the race
// detector on a busy machine).
func TestRefusedElicitationsNotRetained(t *testing.T) {
	huge := strings.Repeat("q", 4*maxSentAskBytes)
	srv := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for range maxSentAsks {
			_, _ = req.Session.Elicit(ctx, &mcp.ElicitParams{Message: huge, RequestedSchema: json.RawMessage(`{"type":"object"}`)})
		}
		return textResult("asked"), nil
	})
	cfg := stdioConfig("big")
	cfg.ProtocolVersion = "2025-11-25"
	h := mustStart(t, cfg, Options{Elicit: true, NewTransport: inMemory(t, srv)})
	if res := h.call("mcp__big__big", `{}`); res.Text() != "asked" {
		t.Fatalf("big: %q", res.Text())
	}
	if n := retained(h.srv); n > 64<<10 {
		t.Errorf("%d bytes of 16 refused elicitations of %d bytes retained", n, len(huge))
	}
}

// An elicitation is kept as written only when elicitation is offered, and
// not over the size the bridge keeps of one (the consumer gets it as
// decoded); the ties of requests to their calls
// keep a digest of each, whatever its size.
func TestLargeRequestsKeptSmall(t *testing.T) {
	var sent sentAsks
	small := json.RawMessage(`{"mode":"form","message":"?"}`)
	sent.note(tool.AskElicit, small)
	if len(sent.list) != 0 {
		t.Error("an elicitation kept while elicitation is not offered")
	}
	sent.offered.Store(true)
	big, _ := json.Marshal(mcp.ElicitParams{Message: strings.Repeat("q", 4<<20), RequestedSchema: map[string]any{"type": "object"}})
	sent.note(tool.AskElicit, big)
	if len(sent.list) != 0 {
		t.Errorf("an elicitation of %d bytes kept as written", len(big))
	}
	var related relatedAsks
	slot := sdkwire.NewSlot(sdkwire.PassResult)
	related.note(tool.AskElicit, big, slot)
	if len(related.list) != 1 || len(related.list[0].key) > 64 {
		t.Fatalf("the tie of a 4 MiB request: %d kept", len(related.list))
	}
	var p mcp.ElicitParams
	_ = json.Unmarshal(big, &p)
	decoded, _ := json.Marshal(&p)
	if call, tied := related.take(tool.AskElicit, decoded); !tied || call != slot {
		t.Error("the 4 MiB request is not tied to its call")
	}
}
