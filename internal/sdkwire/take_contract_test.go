package sdkwire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// Contract tests of requests taken beneath the server session
// (assumption 25; parity checks P1 and P2).

// leanStdio is the stdio transport of a server session over LeanConn.
func leanStdio(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	return &LeanTransport{R: in, W: out, Close: func() error { return errors.Join(in.Close(), out.Close()) }}
}

// callLine is a tools/call request line.
func callLine(id, params string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
}

// Parity check P1: on a session opened with initialize below 2026-07-28 the
// SDK sends a raw-content result as CallResultJSON makes it, nothing added;
// at 2026-07-28 it adds resultType, so TakesCalls refuses such a session.
func TestParityTakenCallResult(t *testing.T) {
	results := []struct {
		isError             bool
		content, structured string
	}{
		{content: `[{"type":"text","text":"plain"}]`},
		{isError: true, content: `[ {"type":"video", "z":1,"a":1.50} , {"type":"text","text":"<b>&amp;</b>\u2028"} ]`, structured: `{"h" : "<i>&</i>\u2028", "n":[1.50, {}]}`},
		{content: `[]`, structured: `[1,"&"]`},
		{isError: true, content: `[{"type":"text","text":"x"}]`, structured: `"<s>"`},
	}
	var current atomic.Int64
	srv := newServer(nil)
	srv.AddReceivingMiddleware(rawResultMiddleware(func() (bool, string, string) {
		r := results[current.Load()]
		return r.isError, r.content, r.structured
	}))
	for _, version := range []string{"2025-11-25", "2025-03-26", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ss, peer := serveStdio(t, srv, leanStdio)
			peer.initialize(version)
			if got, want := TakesCalls(ss), version != "2026-07-28"; got != want {
				t.Fatalf("TakesCalls = %v, want %v", got, want)
			}
			for i, r := range results {
				current.Store(int64(i))
				line := peer.call(callLine("7", `{"name":"raw"}`), "7")
				var structured json.RawMessage
				if r.structured != "" {
					structured = json.RawMessage(r.structured)
				}
				id, _ := jsonrpc.MakeID(float64(7))
				want, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: serverwire.CallResultJSON(r.isError, json.RawMessage(r.content), structured)})
				if err != nil {
					t.Fatal(err)
				}
				if same := string(line) == string(want); same != TakesCalls(ss) {
					t.Errorf("result %d: the SDK sent\n%s\nCallResultJSON makes\n%s", i, line, want)
				}
			}
		})
	}
}

// call sends a request line and returns the response line with id.
func (p *stdioPeer) call(line, id string) []byte {
	p.t.Helper()
	p.send(line)
	return p.response(id)
}

// Parity check P2: the SDK hands a tools/call handler the params
// ReadCallParams reads: the name, the arguments byte for byte, the _meta
// decoded.
func TestParityCallParams(t *testing.T) {
	got := make(chan *mcp.CallToolParamsRaw, 1)
	srv := newServer(nil)
	srv.AddTool(&mcp.Tool{Name: "rec", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			got <- req.Params
			return &mcp.CallToolResult{}, nil
		})
	_, peer := serveStdio(t, srv, leanStdio)
	peer.initialize("2025-11-25")
	for _, params := range []string{
		`{"name":"rec"}`,
		`{"name":"rec","arguments":{ "a" : [1, 2.50, 1e3] ,"b":"\u00e9<", "c":{}}}`,
		`{"arguments":{},"name":"rec","_meta":{"progressToken":5,"traceparent":"00-ab-cd-01","n":{"deep":[true,null,1.5]},"s":"\u00e9"}}`,
		` { "name" : "rec" , "arguments" : { } , "_meta" : { } } `,
		`{"name":"rec","_meta":{"progressToken":"tok","progressToken":"last"}}`,
	} {
		p, ok := serverwire.ReadCallParams(json.RawMessage(strings.TrimSpace(params)))
		if !ok {
			t.Errorf("ReadCallParams refused %s", params)
			continue
		}
		peer.call(callLine("1", params), "1")
		sdk := awaitSignal(t, got, "the handler's params")
		if p.Name != sdk.Name || string(p.Arguments) != string(sdk.Arguments) {
			t.Errorf("%s: read name %q arguments %s; the SDK's handler got %q %s", params, p.Name, p.Arguments, sdk.Name, sdk.Arguments)
		}
		if diff := cmp.Diff(map[string]any(sdk.Meta), p.Meta); diff != "" {
			t.Errorf("%s: _meta (-SDK +read):\n%s", params, diff)
		}
	}
}

// takingServer serves srv on stdio through a TakingTransport that takes
// the tools/call requests of the tool named "taken", answering with what
// body returns; the body gets the session.
func takingServer(t *testing.T, srv *mcp.Server, body func(context.Context, *mcp.ServerSession, serverwire.CallParams) (json.RawMessage, error)) (*mcp.ServerSession, *stdioPeer, *TakingTransport) {
	t.Helper()
	var session atomic.Pointer[mcp.ServerSession]
	var taking *TakingTransport
	ss, peer := serveStdio(t, srv, func(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
		taking = &TakingTransport{Transport: leanStdio(in, out), Take: func(req *jsonrpc.Request) TakenCall {
			p, ok := serverwire.ReadCallParams(req.Params)
			if req.Method != "tools/call" || !ok || p.Name != "taken" {
				return nil
			}
			return func(ctx context.Context) (json.RawMessage, error) { return body(ctx, session.Load(), p) }
		}}
		return taking
	})
	session.Store(ss)
	return ss, peer, taking
}

// textResult is a tools/call result of one text block.
func textResult(text string) json.RawMessage {
	b, _ := json.Marshal(text)
	return serverwire.CallResultJSON(false, json.RawMessage(`[{"type":"text","text":`+string(b)+`}]`), nil)
}

// Assumption 25: a request the connection answers itself leaves the
// session working: the body's progress notification and elicitation go
// through the session (the notification before the response, the client's
// answer back to the body), the SDK serves the other requests, and a
// notifications/cancelled for a taken call cancels it.
func TestContractTakenCalls(t *testing.T) {
	srv := newServer(nil)
	_, peer, _ := takingServer(t, srv, func(ctx context.Context, ss *mcp.ServerSession, p serverwire.CallParams) (json.RawMessage, error) {
		if p.Meta["wait"] == true {
			<-ctx.Done()
			return textResult("cancelled: " + context.Cause(ctx).Error()), nil
		}
		if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.Meta["progressToken"], Progress: 1}); err != nil {
			return nil, err
		}
		res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`)})
		if err != nil {
			return nil, &jsonrpc.Error{Code: 1, Message: err.Error()}
		}
		return textResult(res.Action + " " + res.Content["n"].(string)), nil
	})
	peer.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"0"}}}`)
	peer.response(`"init"`)
	peer.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	peer.send(callLine("1", `{"name":"taken","_meta":{"progressToken":"pt"}}`))
	var lines []string
	for len(lines) < 3 {
		line := awaitSignal(t, peer.lines, "the taken call's traffic")
		lines = append(lines, string(line))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) == nil && m.Method == "elicitation/create" {
			peer.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"action":"accept","content":{"n":"Ada"}}}`)
		}
	}
	if !strings.Contains(lines[0], `"method":"notifications/progress"`) || !strings.Contains(lines[0], `"progressToken":"pt"`) ||
		!strings.Contains(lines[1], `"method":"elicitation/create"`) ||
		lines[2] != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"accept Ada"}]}}` {
		t.Errorf("the taken call's lines:\n%s", strings.Join(lines, "\n"))
	}
	if line := peer.call(callLine("2", `{"name":"echo"}`), "2"); !strings.Contains(string(line), `"text":"echo"`) {
		t.Errorf("the SDK's call: %s", line)
	}
	peer.send(callLine(`"w"`, `{"name":"taken","_meta":{"wait":true}}`))
	peer.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w","reason":"no"}}`)
	if line := peer.response(`"w"`); !strings.Contains(string(line), `"text":"cancelled: the client cancelled the request"`) {
		t.Errorf("the cancelled call: %s", line)
	}
}

// Assumption 25, the end of a session: the session's Close returns while a
// taken call runs (Close does not wait for it: the SDK closes the
// connection under a lock the body's notifications take), the call is
// cancelled, and Wait returns once it has; when the client's input ends,
// taken calls are cancelled and their replies dropped, as the SDK drops
// its own.
func TestContractTakenCallsEnd(t *testing.T) {
	for _, end := range []string{"close", "eof"} {
		t.Run(end, func(t *testing.T) {
			entered := make(chan struct{}, 1)
			ended := make(chan error, 1)
			ss, peer, taking := takingServer(t, newServer(nil), func(ctx context.Context, ss *mcp.ServerSession, _ serverwire.CallParams) (json.RawMessage, error) {
				entered <- struct{}{}
				<-ctx.Done()
				// A notice after the end fails, without blocking.
				ended <- errors.Join(context.Cause(ctx), ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "x", Progress: 1}))
				return textResult("late"), nil
			})
			peer.initialize("2025-11-25")
			peer.send(callLine("1", `{"name":"taken"}`))
			awaitSignal(t, entered, "the taken call to start")
			closed := make(chan error, 1)
			if end == "close" {
				go func() { closed <- ss.Close() }()
			} else {
				peer.w.Close()
				go func() { closed <- ss.Wait() }()
			}
			awaitSignal(t, closed, "the session to end")
			err := awaitSignal(t, ended, "the taken call to end")
			want := map[string]string{"close": "the connection is closed", "eof": "EOF"}[end]
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("the taken call ended with %v, want the cause %q", err, want)
			}
			taking.Wait()
			select {
			case line := <-peer.lines:
				t.Errorf("the server wrote after the end: %s", line)
			default:
			}
		})
	}
}

// routeRecorder records, for each message its connection writes, the
// taken call TakenRequest finds in the Write's context.
type routeRecorder struct {
	mcp.Transport
	mu     sync.Mutex
	routes map[string]jsonrpc.ID // method (or "response") → taken call
}

func (r *routeRecorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return &routeConn{Connection: c, r: r}, err
}

type routeConn struct {
	mcp.Connection
	r *routeRecorder
}

func (c *routeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	key := "response"
	if req, ok := msg.(*jsonrpc.Request); ok {
		key = req.Method
	}
	id, _ := TakenRequest(ctx)
	c.r.mu.Lock()
	c.r.routes[key] = id
	c.r.mu.Unlock()
	return c.Connection.Write(ctx, msg)
}

// Assumption 39: what a taken call sends through the session (a progress
// notification, an elicitation) reaches Connection.Write with a context
// derived from the call's, so a connection that routes by request (an
// HTTP stream per POST) finds the call with TakenRequest; without Routes
// the context carries nothing.
func TestContractTakenCallRoutes(t *testing.T) {
	for _, routes := range []bool{true, false} {
		st, ct := mcp.NewInMemoryTransports()
		rec := &routeRecorder{Transport: st, routes: map[string]jsonrpc.ID{}}
		var session atomic.Pointer[mcp.ServerSession]
		taking := &TakingTransport{Transport: rec, Routes: routes, Take: func(req *jsonrpc.Request) TakenCall {
			if req.Method != "tools/call" {
				return nil
			}
			return func(ctx context.Context) (json.RawMessage, error) {
				ss := session.Load()
				if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "p", Progress: 1}); err != nil {
					return nil, err
				}
				if _, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "ok?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)}); err != nil {
					return nil, err
				}
				return textResult("done"), nil
			}
		}}
		ss, err := newServer(nil).Connect(context.Background(), taking, nil)
		if err != nil {
			t.Fatal(err)
		}
		session.Store(ss)
		client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
			}})
		cs, err := client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "any", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		cs.Close()
		ss.Wait()
		taking.Wait()
		rec.mu.Lock()
		for _, method := range []string{"notifications/progress", "elicitation/create"} {
			id, ok := rec.routes[method]
			if want := routes; !ok || id.IsValid() != want {
				t.Errorf("Routes %v: %s written with taken call %v (written: %v), want one: %v", routes, method, id.Raw(), ok, want)
			}
		}
		rec.mu.Unlock()
	}
}
