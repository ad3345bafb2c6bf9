//lint:file-ignore SA1019 MCP 2026-07-28 deprecates sampling and roots (SEP-2577) but keeps them working; 2025-11-25 servers use them.

package mcpclient

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// relatedAsks ties the server's requests to the calls they came with.
// Over Streamable HTTP a server sends the requests a call causes on that
// call's response stream (sdkwire Table.OnRelatedRequest), the only place
// protocol 2025-11-25 says which call a request belongs to. The SDK hands
// a handler the request decoded and without its id, so a request is
// found again by the encoding of its decoded params; when requests of
// different calls encode alike, none of them is tied (the safe side: a
// request is never handed to a call it may not belong to).
type relatedAsks struct {
	mu   sync.Mutex
	list []relatedAsk // the latest maxSentAsks
}

type relatedAsk struct {
	key  askDigest // of the method and the encoding of the decoded params
	call *sdkwire.Slot
}

// relatedParams are the params types the SDK decodes the requests into
// that the bridge answers.
var relatedParams = map[string]func() any{
	tool.AskElicit: func() any { return new(mcp.ElicitParams) },
	tool.AskSample: func() any { return new(mcp.CreateMessageWithToolsParams) },
	tool.AskRoots:  func() any { return new(mcp.ListRootsParams) },
}

// askDigest is the key of a request of the server kept for a while: a
// digest of its method and its params as decoded, so that a key costs as
// little whatever the request's size (up to the frame limit).
type askDigest [sha256.Size]byte

// digest is the key of a request of method whose params, decoded as the
// SDK decodes them, encode as decoded.
func digest(method string, decoded []byte) askDigest {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write(decoded)
	return askDigest(h.Sum(nil))
}

// note ties a request read on call's stream to call; it runs on the
// reading goroutine.
func (r *relatedAsks) note(method string, params json.RawMessage, call *sdkwire.Slot) {
	newParams, ok := relatedParams[method]
	if !ok {
		return
	}
	p := newParams()
	if len(params) > 0 && json.Unmarshal(params, p) != nil {
		return
	}
	decoded, err := json.Marshal(p)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, relatedAsk{digest(method, decoded), call})
	if len(r.list) > maxSentAsks {
		r.list = slices.Delete(r.list, 0, 1)
	}
}

// take returns the call a request of method with params encoding as
// decoded came with, and forgets that tie; tied is false when no call or
// more than one could have sent it.
func (r *relatedAsks) take(method string, decoded []byte) (call *sdkwire.Slot, tied bool) {
	key := digest(method, decoded)
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.IndexFunc(r.list, func(a relatedAsk) bool { return a.key == key })
	if i < 0 {
		return nil, false
	}
	call = r.list[i].call
	if slices.ContainsFunc(r.list, func(a relatedAsk) bool { return a.key == key && a.call != call }) {
		return nil, false
	}
	r.list = slices.Delete(r.list, i, i+1)
	return call, true
}

// markCall records, for the call of ctx (see callers.enter), the slot of
// its tools/call: the requests tied to that slot are the call's.
func markCall(ctx context.Context, slot *sdkwire.Slot) {
	if cl, ok := ctx.Value(callerKey{}).(*caller); ok {
		cl.call.Store(slot)
	}
}
