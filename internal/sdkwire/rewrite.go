package sdkwire

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Requests the SDK has no method for (assumption 27 of the package doc).
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

// CapabilityTransport adds client capabilities go-sdk has no field for
// (the 2025-11-25 "tasks" capability) to the initialize request its
// client writes (assumption 28). Like CaptureTransport, it wraps only
// transports whose connections carry no SDK-private state.
type CapabilityTransport struct {
	Transport mcp.Transport
	// Add are capabilities set on params.capabilities, by name.
	Add map[string]json.RawMessage
}

// Connect connects the wrapped transport.
func (t *CapabilityTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &capabilityConn{Connection: conn, add: t.Add}, nil
}

type capabilityConn struct {
	mcp.Connection
	add map[string]json.RawMessage
}

func (c *capabilityConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.IsCall() {
		if err := addCapabilities(req, c.add); err != nil {
			return err
		}
	}
	return c.Connection.Write(ctx, msg)
}

// addCapabilities sets add on the params.capabilities of req.
func addCapabilities(req *jsonrpc.Request, add map[string]json.RawMessage) error {
	var params map[string]json.RawMessage
	if err := json.Unmarshal(req.Params, &params); err != nil {
		return fmt.Errorf("adding capabilities to initialize: %w", err)
	}
	caps := map[string]json.RawMessage{}
	if raw, ok := params["capabilities"]; ok {
		if err := json.Unmarshal(raw, &caps); err != nil {
			return fmt.Errorf("adding capabilities to initialize: %w", err)
		}
	}
	for k, v := range add {
		caps[k] = v
	}
	var err error
	if params["capabilities"], err = json.Marshal(caps); err != nil {
		return err
	}
	req.Params, err = json.Marshal(params)
	return err
}
