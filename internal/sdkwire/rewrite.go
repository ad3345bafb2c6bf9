package sdkwire

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Requests the SDK has no method for (assumption 26 of the package doc).
//
// go-sdk v1.8.0 sends only the methods it knows, and tasks (tasks/get,
// tasks/result, tasks/cancel, and tools/call with a "task" field) are not
// among them. A CallTool made with a Slot that carries a Rewrite is the
// vehicle: its request is rewritten as it is written, beneath the SDK, and
// its result captured (CapturedCall), so the SDK decodes nothing of it and
// its JSON-RPC id, cancellation and session stay the SDK's own.

// Rewrite changes one request on its way to the wire.
type Rewrite struct {
	// Method replaces the request's method; empty keeps it.
	Method string
	// Params are fields set on the request's params object, replacing
	// those of the same name. With Replace, they are the params, but for
	// the _meta the SDK wrote (on protocol 2026-07-28 it carries the
	// protocol version and client capabilities every request needs).
	Params  map[string]json.RawMessage
	Replace bool
}

// NewRewriteSlot returns a CapturedCall slot whose request is rewritten
// by rw before it is written.
func NewRewriteSlot(rw Rewrite) *Slot {
	return &Slot{mode: CapturedCall, rewrite: &rw}
}

// apply rewrites req in place.
func (rw *Rewrite) apply(req *jsonrpc.Request) error {
	fields := map[string]json.RawMessage{}
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &fields); err != nil {
			return fmt.Errorf("rewriting %s: params are not an object: %w", req.Method, err)
		}
	}
	if rw.Replace {
		meta, ok := fields["_meta"]
		fields = map[string]json.RawMessage{}
		if ok {
			fields["_meta"] = meta
		}
	}
	for k, v := range rw.Params {
		fields[k] = v
	}
	params, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("rewriting %s: %w", req.Method, err)
	}
	if rw.Method != "" {
		req.Method = rw.Method
	}
	req.Params = params
	return nil
}

// rewriteHeaders makes the headers of a rewritten POST name its new method
// (protocol 2026-07-28 requires Mcp-Method to match the body): a method
// that is no longer tools/call names no tool and mirrors no argument.
func rewriteHeaders(h http.Header, method string) {
	if h.Get("Mcp-Method") == "" || h.Get("Mcp-Method") == method {
		return
	}
	h.Set("Mcp-Method", method)
	h.Del("Mcp-Name")
	for k := range h {
		if strings.HasPrefix(k, "Mcp-Param-") {
			h.Del(k)
		}
	}
}

// sentRewritten applies the rewrite of ctx's slot, if any, to msg.
func sentRewritten(ctx context.Context, msg jsonrpc.Message) (bool, error) {
	req, ok := msg.(*jsonrpc.Request)
	slot := SlotFrom(ctx)
	if !ok || !req.IsCall() || slot == nil || slot.rewrite == nil {
		return false, nil
	}
	return true, slot.rewrite.apply(req)
}
