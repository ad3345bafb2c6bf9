package sdkwire

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// Server-side work beneath the SDK (assumptions 14, 15 and 17 of the
// package doc; the stdio reader, assumption 16, is in linefilter.go): a
// tools/call result whose content goes on the wire as raw bytes, the count
// of requests a session's connection has read and not yet answered, and
// the requests whose handlers park until cancelled.

// RawResult returns what a receiving middleware that answers a
// tools/call of session itself returns for the result whose content
// array is content: a result the SDK marshals as a CallToolResult with
// isError and structuredContent (absent when nil), with content's bytes in
// place of typed content, so blocks reach the client byte for byte
// (unknown fields, key order, number digits). The SDK stamps _meta on it
// (assumption 14); the resultType its own tools/call dispatch would stamp
// (on a session TakesCalls refuses, assumption 26) is stamped here.
func RawResult(session *mcp.ServerSession, isError bool, content, structured json.RawMessage) mcp.Result {
	typed := &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{}}
	if structured != nil {
		typed.StructuredContent = structured
	}
	return &rawCallResult{CallToolResult: typed, content: content, complete: session == nil || !TakesCalls(session)}
}

// InputRequiredResult returns what a receiving middleware that answers a
// tools/call itself returns to ask its client for input (multi round-trip,
// protocol 2026-07-28): "resultType":"input_required" with inputRequests
// (a JSON object of {method, params} by key, as written) and requestState,
// the opaque state the client echoes when it calls again. The SDK stamps
// _meta on it and the client's multi round-trip middleware answers it
// (assumption 32).
func InputRequiredResult(inputRequests json.RawMessage, state string) mcp.Result {
	return &rawCallResult{CallToolResult: &mcp.CallToolResult{RequestState: state}, inputRequests: inputRequests}
}

// InputRequiredJSONPerRequest is InputRequiredResult as the SDK's server
// writes it for a 2026-07-28 request: _meta naming the server
// (serverInfo, serverwire.ServerInfoJSON), for a call answered beneath
// the SDK's dispatch (the take of a stateless POST's session).
func InputRequiredJSONPerRequest(inputRequests json.RawMessage, state string, serverInfo json.RawMessage) (json.RawMessage, error) {
	r := &rawCallResult{CallToolResult: &mcp.CallToolResult{RequestState: state}, inputRequests: inputRequests}
	r.SetMeta(map[string]any{mcp.MetaKeyServerInfo: serverInfo})
	return r.MarshalJSON()
}

// rawCallResult is a CallToolResult whose content is marshaled from raw
// bytes. Embedding keeps it an mcp.Result whose unexported methods are the
// embedded value's, so the SDK stamps _meta on that value.
type rawCallResult struct {
	*mcp.CallToolResult
	content  json.RawMessage
	complete bool // stamp "resultType":"complete"
	// inputRequests, when set, makes it an input-required result: no
	// content, these requests instead.
	inputRequests json.RawMessage
}

// MarshalJSON marshals the SDK's result and swaps in the raw content.
func (r *rawCallResult) MarshalJSON() ([]byte, error) {
	typed, err := json.Marshal(r.CallToolResult)
	if err != nil {
		return nil, fmt.Errorf("marshaling tools/call result: %w", err) // unreachable: every field holds valid JSON
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(typed, &members); err != nil {
		return nil, fmt.Errorf("re-reading tools/call result: %w", err) // unreachable: the SDK marshals an object
	}
	members["content"] = r.content
	if r.inputRequests != nil {
		delete(members, "content")
		members["inputRequests"] = r.inputRequests
		members["resultType"] = json.RawMessage(`"input_required"`)
	} else if r.complete {
		members["resultType"] = json.RawMessage(`"complete"`)
	}
	return serverwire.MarshalUnescaped(members)
}

// CountingTransport wraps the server side of a transport whose one
// connection carries a whole session (stdio, in-memory; not Streamable
// HTTP, whose handler makes the connections) and counts the requests of
// Method read from its connection and not yet answered on it. A request
// whose id one in flight has is not counted: the SDK's session leaves it
// unanswered, and so does a TakingTransport above. The server
// session reads every request through the connection's Read and writes its
// response through its Write, and ServerSession.Close drops the replies it
// has not written yet (assumption 15): so a graceful shutdown waits for the
// count to drop before it closes the session.
type CountingTransport struct {
	Transport mcp.Transport
	// Method is the method of the requests counted, such as "tools/call".
	Method string
	// Count is told of every change: +1 when a request starts counting, -1
	// when it stops, because its response was written (or failed to be) or
	// the connection closed (it can never be answered then). It runs on the
	// session's goroutines, an increment under the connection's lock, so it
	// must not block or use the connection. nil counts nothing.
	Count func(delta int)
}

// Connect connects the wrapped transport and counts on its connection.
func (t *CountingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	count := t.Count
	if count == nil {
		count = func(int) {}
	}
	return &countingConn{Connection: c, method: t.Method, count: count, ids: make(map[jsonrpc.ID]struct{})}, nil
}

// SupportsProtocolVersion keeps the wrapped transport's answer visible to
// the SDK; a transport without one supports every version.
func (t *CountingTransport) SupportsProtocolVersion(version string) bool {
	return supportsVersion(t.Transport, version)
}

// supportsVersion is transport's answer to the SDK's version check, true
// when it has none.
func supportsVersion(transport mcp.Transport, version string) bool {
	if s, ok := transport.(mcp.ProtocolVersionSupporter); ok {
		return s.SupportsProtocolVersion(version)
	}
	return true
}

// countingConn counts the requests of one method read and not yet
// answered.
type countingConn struct {
	mcp.Connection
	method string
	count  func(delta int)

	mu  sync.Mutex
	ids map[jsonrpc.ID]struct{} // unanswered requests; nil after Close
}

// Read reads the next message and starts counting a request of the method.
func (c *countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == c.method {
		c.mu.Lock()
		if _, dup := c.ids[req.ID]; !dup && c.ids != nil {
			c.ids[req.ID] = struct{}{}
			// Under the lock, so Close cannot uncount it first.
			c.count(+1)
		}
		c.mu.Unlock()
	}
	return msg, err
}

// Write writes a message; a response, once written (or failed), stops the
// counting of its request.
func (c *countingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		_, counted := c.ids[resp.ID]
		delete(c.ids, resp.ID)
		c.mu.Unlock()
		if counted {
			c.count(-1)
		}
	}
	return err
}

// Close closes the connection; its unanswered requests will never be
// answered, so they stop counting.
func (c *countingConn) Close() error {
	err := c.Connection.Close()
	c.mu.Lock()
	left := len(c.ids)
	c.ids = nil
	c.mu.Unlock()
	for range left {
		c.count(-1)
	}
	return err
}

// ParksUntilCancelled reports whether the SDK's handler of a request of
// method parks until its context is cancelled and answers only then:
// subscriptions/listen (protocol 2026-07-28), which holds a client's
// notification stream open. ServerSession.Close waits for every handler to
// return, and cancels only the listens it knew of when it began: one that
// arrives while the session closes parks, and Close with it, for good
// (assumption 17). A server that closes sessions therefore runs such a
// handler under a context of its own, from a receiving middleware, and
// cancels it before Close.
func ParksUntilCancelled(method string) bool {
	return method == "subscriptions/listen"
}
