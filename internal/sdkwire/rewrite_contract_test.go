package sdkwire

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Assumption 26: a CallTool whose context carries a rewriting slot goes on
// the wire as the rewritten request (stdio and in-memory: at Write; HTTP:
// the POST's body and Mcp-Method header), its result reaches the slot and
// the SDK decodes none of it, and the session goes on.
func TestContractRewrittenRequest(t *testing.T) {
	var mu sync.Mutex
	var seen []*jsonrpc.Request
	take := &TakingTransport{Take: func(req *jsonrpc.Request) TakenCall {
		if !strings.HasPrefix(req.Method, "tasks/") {
			return nil
		}
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
		return func(context.Context) (json.RawMessage, error) {
			return json.RawMessage(`{"taskId":"t1","status":"working","weird":[1,{"x":null}]}`), nil
		}
	}}
	st, ct := mcp.NewInMemoryTransports()
	take.Transport = st
	ss, err := newServer(nil).Connect(context.Background(), take, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer take.Wait()
	defer ss.Close()
	table := NewTable(0)
	cs, err := newClient(nil).Connect(context.Background(), &CaptureTransport{Transport: ct, Table: table}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	slot := NewRewriteSlot(Rewrite{Method: "tasks/get", Params: map[string]json.RawMessage{"taskId": json.RawMessage(`"t1"`)}, Replace: true})
	_, err = cs.CallTool(WithSlot(context.Background(), slot), &mcp.CallToolParams{Name: "tasks/get"})
	table.Forget(slot)
	if !Captured(err) {
		t.Fatalf("CallTool = %v, want the captured error", err)
	}
	if got, _ := slot.Result(); string(got) != `{"taskId":"t1","status":"working","weird":[1,{"x":null}]}` {
		t.Errorf("slot holds %s", got)
	}
	mu.Lock()
	if len(seen) != 1 || !strings.Contains(string(seen[0].Params), `"taskId":"t1"`) || strings.Contains(string(seen[0].Params), `"name":"tasks/get"`) {
		t.Errorf("the server read %s %s", seen[0].Method, seen[0].Params)
	}
	mu.Unlock()

	// Fields are added to the params the SDK wrote, which stay.
	slot = NewRewriteSlot(Rewrite{Params: map[string]json.RawMessage{"task": json.RawMessage(`{"ttl":5}`)}})
	ctx := WithSlot(context.Background(), slot)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"a": 1}}); !Captured(err) {
		t.Fatalf("CallTool echo = %v, want the captured error", err)
	}
	if got, _ := slot.Result(); !strings.Contains(string(got), `"echo"`) {
		t.Errorf("echo's result: %s", got)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err != nil || text(t, res) != "echo" {
		t.Errorf("a plain call after: %v", err)
	}
}

// The same over Streamable HTTP, both protocols: the body and the
// Mcp-Method header name the new method (a 2026-07-28 server refuses a
// mismatch), the _meta the SDK wrote stays, and the answer (here the
// round tripper's own, as go-sdk's server refuses a method it lacks with
// 400) reaches the slot.
func TestContractRewrittenRequestHTTP(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "2025-11-25", true: "2026-07-28"}[stateless], func(t *testing.T) {
			url := httpServer(t, newServer(nil), stateless)
			table := NewTable(0)
			var body, method string
			spy := rtFunc(func(req *http.Request) (*http.Response, error) {
				if req.Method != http.MethodPost || req.Body == nil {
					return http.DefaultTransport.RoundTrip(req)
				}
				b, _ := io.ReadAll(req.Body)
				req.Body = io.NopCloser(bytes.NewReader(b))
				msg, err := jsonrpc.DecodeMessage(b)
				call, ok := msg.(*jsonrpc.Request)
				if err != nil || !ok || call.Method != "tasks/get" {
					return http.DefaultTransport.RoundTrip(req)
				}
				body, method = string(b), req.Header.Get("Mcp-Method")
				out, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: call.ID, Result: json.RawMessage(`{"taskId":"t1","status":"working"}`)})
				return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(out)), Request: req}, nil
			})
			cs := connectHTTP(t, url, &CaptureRoundTripper{Base: spy, Table: table}, nil)
			slot := NewRewriteSlot(Rewrite{Method: "tasks/get", Params: map[string]json.RawMessage{"taskId": json.RawMessage(`"t1"`)}, Replace: true})
			_, err := cs.CallTool(WithSlot(context.Background(), slot), &mcp.CallToolParams{Name: "geo", Arguments: map[string]any{"region": "x"}})
			table.Forget(slot)
			if !Captured(err) {
				t.Fatalf("CallTool = %v, want the captured error", err)
			}
			if got, _ := slot.Result(); string(got) != `{"taskId":"t1","status":"working"}` {
				t.Errorf("slot holds %s", got)
			}
			if !strings.Contains(body, `"taskId":"t1"`) || strings.Contains(body, `"region"`) {
				t.Errorf("POSTed %s", body)
			}
			if stateless && (method != "tasks/get" || !strings.Contains(body, `"_meta"`)) {
				t.Errorf("Mcp-Method %q, body %s", method, body)
			}
			if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err != nil || text(t, res) != "echo" {
				t.Errorf("a plain call after: %v", err)
			}
		})
	}
}

// Assumption 27: the capabilities CapabilityTransport adds reach the
// server in initialize, beside the SDK's own; over TakingTransport on the
// client side, a server's request is answered beneath the client session.
func TestContractCapabilityAdded(t *testing.T) {
	var mu sync.Mutex
	var initParams json.RawMessage
	srv := newServer(nil)
	st, ct := mcp.NewInMemoryTransports()
	spy := &spyTransport{Transport: st, read: func(msg jsonrpc.Message) {
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
			mu.Lock()
			initParams = req.Params
			mu.Unlock()
		}
	}}
	ssCh := make(chan *mcp.ServerSession, 1)
	go func() {
		ss, err := srv.Connect(context.Background(), spy, nil)
		if err != nil {
			t.Error(err)
		}
		ssCh <- ss
	}()
	take := &TakingTransport{
		Transport: &CapabilityTransport{Transport: ct, Add: map[string]json.RawMessage{"tasks": json.RawMessage(`{"requests":{"elicitation":{"create":{}}}}`)}},
		Take: func(req *jsonrpc.Request) TakenCall {
			if req.Method != "roots/list" {
				return nil
			}
			return func(context.Context) (json.RawMessage, error) {
				return json.RawMessage(`{"roots":[{"uri":"file:///taken","name":"taken"}]}`), nil
			}
		},
	}
	opts := &mcp.ClientOptions{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, opts).Connect(context.Background(), take, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	ss := <-ssCh
	defer take.Wait()
	defer cs.Close()
	defer ss.Close()
	mu.Lock()
	got := string(initParams)
	mu.Unlock()
	if !strings.Contains(got, `"tasks":{"requests":{"elicitation":{"create":{}}}}`) || !strings.Contains(got, `"roots"`) {
		t.Errorf("initialize params: %s", got)
	}
	//lint:ignore SA1019 roots/list is a request a 2025-11-25 server sends its client; any would do
	res, err := ss.ListRoots(context.Background(), nil)
	if err != nil || len(res.Roots) != 1 || res.Roots[0].URI != "file:///taken" {
		t.Fatalf("ListRoots = %+v, %v", res, err)
	}
}
