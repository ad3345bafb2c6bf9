package sdkwire

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerCapabilityTransport adds server capabilities go-sdk has no field
// for (the 2025-11-25 "tasks" capability) to the result its server writes
// for initialize (assumption 30). It wraps the server side of a transport
// whose one connection carries a whole session (stdio, in-memory).
type ServerCapabilityTransport struct {
	Transport mcp.Transport
	// Add are capabilities set on result.capabilities, by name; a
	// capability the server set already is left as it is.
	Add map[string]json.RawMessage
}

// Connect connects the wrapped transport.
func (t *ServerCapabilityTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &serverCapConn{Connection: conn, add: t.Add}, nil
}

// SupportsProtocolVersion keeps the wrapped transport's answer visible to
// the SDK.
func (t *ServerCapabilityTransport) SupportsProtocolVersion(version string) bool {
	return supportsVersion(t.Transport, version)
}

type serverCapConn struct {
	mcp.Connection
	add map[string]json.RawMessage

	mu   sync.Mutex
	init map[jsonrpc.ID]bool // initialize requests read and not answered yet; guarded by mu
}

func (c *serverCapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "initialize" {
		c.mu.Lock()
		if c.init == nil {
			c.init = map[jsonrpc.ID]bool{}
		}
		c.init[req.ID] = true
		c.mu.Unlock()
	}
	return msg, err
}

func (c *serverCapConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && c.answersInit(resp.ID) && resp.Error == nil {
		resp.Result = withCapabilities(resp.Result, c.add)
	}
	return c.Connection.Write(ctx, msg)
}

// answersInit reports whether id is an initialize request's, and forgets it.
func (c *serverCapConn) answersInit(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.init[id] {
		return false
	}
	delete(c.init, id)
	return true
}

// withCapabilities returns result with add appended to its capabilities
// object, the rest byte for byte; result itself when it has none to add to.
func withCapabilities(result json.RawMessage, add map[string]json.RawMessage) json.RawMessage {
	var top struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(result, &top) != nil || len(top.Capabilities) < 2 || top.Capabilities[0] != '{' {
		return result
	}
	var have map[string]json.RawMessage
	if json.Unmarshal(top.Capabilities, &have) != nil {
		return result
	}
	at := bytes.Index(result, top.Capabilities)
	if at < 0 {
		return result // unreachable: the server writes compact JSON
	}
	caps := bytes.TrimSuffix(bytes.TrimSpace(top.Capabilities), []byte("}"))
	grown := append([]byte(nil), caps...)
	for _, name := range slices.Sorted(maps.Keys(add)) {
		if _, ok := have[name]; ok {
			continue
		}
		if len(grown) > 1 {
			grown = append(grown, ',')
		}
		key, _ := json.Marshal(name)
		grown = append(append(append(grown, key...), ':'), add[name]...)
	}
	grown = append(grown, '}')
	out := make([]byte, 0, len(result)+len(grown)-len(top.Capabilities))
	out = append(append(append(out, result[:at]...), grown...), result[at+len(top.Capabilities):]...)
	return out
}
