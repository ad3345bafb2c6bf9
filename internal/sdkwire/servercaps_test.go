package sdkwire

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Assumption 30: the capabilities ServerCapabilityTransport adds reach the
// client in the initialize result, a capability the server set itself is
// kept, and the session goes on.
func TestContractServerCapabilityAdded(t *testing.T) {
	st, ct := mcp.NewInMemoryTransports()
	add := map[string]json.RawMessage{
		"tasks": json.RawMessage(`{"list":{},"requests":{"tools":{"call":{}}}}`),
		"tools": json.RawMessage(`{"replaced":true}`),
	}
	ss, err := newServer(nil).Connect(context.Background(), &ServerCapabilityTransport{Transport: st, Add: add}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	rec := &recordingTransport{Transport: ct}
	cs, err := newClient(nil).Connect(context.Background(), rec, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
		ServerInfo   json.RawMessage            `json:"serverInfo"`
	}
	if err := json.Unmarshal(rec.first(), &init); err != nil {
		t.Fatal(err)
	}
	if got := string(init.Capabilities["tasks"]); got != string(add["tasks"]) {
		t.Errorf("capabilities.tasks = %s, want %s", got, add["tasks"])
	}
	if got := string(init.Capabilities["tools"]); got == string(add["tools"]) || got == "" {
		t.Errorf("capabilities.tools = %s, want the server's own", got)
	}
	if len(init.ServerInfo) == 0 {
		t.Error("serverInfo lost")
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err != nil || text(t, res) != "echo" {
		t.Errorf("a call after: %v", err)
	}
}

// withCapabilities leaves a result without a capabilities object as it is.
func TestWithCapabilitiesLeavesOthers(t *testing.T) {
	add := map[string]json.RawMessage{"tasks": json.RawMessage(`{}`)}
	for _, in := range []string{`{}`, `{"capabilities":null}`, `{"capabilities":[]}`, `[1]`} {
		if got := string(withCapabilities(json.RawMessage(in), add)); got != in {
			t.Errorf("withCapabilities(%s) = %s", in, got)
		}
	}
	if got := string(withCapabilities(json.RawMessage(`{"capabilities":{},"x":1}`), add)); got != `{"capabilities":{"tasks":{}},"x":1}` {
		t.Errorf("empty capabilities grown to %s", got)
	}
}

// recordingTransport keeps the results its connection reads.
type recordingTransport struct {
	Transport mcp.Transport
	mu        sync.Mutex
	results   []json.RawMessage
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, t: t}, nil
}

func (t *recordingTransport) first() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.results) == 0 {
		return nil
	}
	return t.results[0]
}

type recordingConn struct {
	mcp.Connection
	t *recordingTransport
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.t.mu.Lock()
		c.t.results = append(c.t.results, append(json.RawMessage(nil), resp.Result...))
		c.t.mu.Unlock()
	}
	return msg, err
}

// Assumption 14, for tools/list: the result a receiving middleware
// returns as ToolsWithExecution reaches the client with execution on the
// named tools alone and the SDK's own fields kept, on either protocol,
// and the client decodes it.
func TestContractToolsWithExecution(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} { // "": negotiated, 2026-07-28
		srv := newServer(nil)
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if list, ok := res.(*mcp.ListToolsResult); ok && err == nil {
					return ToolsWithExecution(list, map[string]bool{"geo": true}, json.RawMessage(`{"taskSupport":"optional"}`)), nil
				}
				return res, err
			}
		})
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := &recordingTransport{Transport: ct}
		cs, err := newClient(nil).Connect(context.Background(), rec, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil || len(res.Tools) != 2 {
			t.Fatalf("%q: ListTools = %v, %v", version, res, err)
		}
		rec.mu.Lock()
		raw := rec.results[len(rec.results)-1]
		rec.mu.Unlock()
		var got struct {
			ResultType string `json:"resultType"`
			Tools      []struct {
				Name      string          `json:"name"`
				Execution json.RawMessage `json:"execution"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		for _, tl := range got.Tools {
			if want := map[string]string{"geo": `{"taskSupport":"optional"}`}[tl.Name]; string(tl.Execution) != want {
				t.Errorf("%q: tool %s has execution %s, want %q", version, tl.Name, tl.Execution, want)
			}
		}
		if version == "" && got.ResultType != "complete" {
			t.Errorf("2026-07-28: resultType %q lost: %s", got.ResultType, raw)
		}
		cs.Close()
		ss.Close()
	}
}
