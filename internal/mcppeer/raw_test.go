package mcppeer_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func decode(t *testing.T, b []byte) any {
	t.Helper()
	if b == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("reply %q is not JSON: %v", b, err)
	}
	return v
}

func reply(id any, result any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": result}
}

func rpcError(id any, code float64, message string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}}
}

func toolsJSON(t *testing.T, names ...string) []any {
	var out []any
	for _, n := range names {
		out = append(out, decode(t, mcppeer.RawTool(n, "tool "+n)))
	}
	return out
}

func initResult(version, name string) map[string]any {
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
		"serverInfo":      map[string]any{"name": name, "version": "1.0.0"},
	}
}

func TestRawWire(t *testing.T) {
	endless := mcptest.SampleRawScript()
	endless.Endless = true
	repeat := mcptest.SampleRawScript()
	repeat.Pages[1].NextCursor = mcppeer.RawCursor(1)
	forced := mcppeer.RawScript{ServerName: "odd", ProtocolVersion: "1999-01-01"}
	emptyEndless := mcppeer.RawScript{Endless: true}

	tests := []struct {
		name   string
		script mcppeer.RawScript
		in     string
		want   any
	}{
		{"initialize echoes a known version", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`,
			reply(1.0, initResult("2025-03-26", "raw-server"))},
		{"initialize answers 2025-11-25 to an unknown version", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":"s","method":"initialize","params":{"protocolVersion":"2026-07-28"}}`,
			reply("s", initResult("2025-11-25", "raw-server"))},
		{"initialize without params", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":2,"method":"initialize"}`,
			reply(2.0, initResult("2025-11-25", "raw-server"))},
		{"initialize with forced version and name", forced, `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`,
			reply(3.0, initResult("1999-01-01", "odd"))},
		{"ping", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":4,"method":"ping"}`, reply(4.0, map[string]any{})},
		{"discover is not found", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{}}`,
			rpcError(5.0, -32601, "method not found: server/discover")},
		{"unknown method", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":6,"method":"resources/list"}`,
			rpcError(6.0, -32601, "method not found: resources/list")},
		{"initialized notification is ignored", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
		{"null id is a notification", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":null,"method":"ping"}`, nil},
		{"a client's response is ignored", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":7,"result":{}}`, nil},
		{"a client's error response is ignored", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}`, nil},
		{"a request needs a method", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":7}`,
			rpcError(7.0, -32600, "invalid request: no method")},
		{"parse error", mcptest.SampleRawScript(), `{"jsonrpc":`, rpcError(nil, -32700, "parse error: unexpected end of JSON input")},
		{"batch is not supported", mcptest.SampleRawScript(), `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
			rpcError(nil, -32600, "invalid request: json: cannot unmarshal array into Go value of type mcppeer.rawRequest")},
		{"list page 0", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{}}`,
			reply(8.0, map[string]any{"tools": toolsJSON(t, "a", "b"), "nextCursor": "page-1"})},
		{"list page 1 is the last", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"page-1"}}`,
			reply(9.0, map[string]any{"tools": toolsJSON(t, "c")})},
		{"list unknown cursor", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"cursor":"page-2"}}`,
			rpcError(10.0, -32602, `tools/list: unknown cursor "page-2"`)},
		{"list foreign cursor", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"cursor":"xyz"}}`,
			rpcError(11.0, -32602, `tools/list: unknown cursor "xyz"`)},
		{"list bad params", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":12,"method":"tools/list","params":[1]}`,
			rpcError(12.0, -32602, "tools/list: bad params: json: cannot unmarshal array into Go value of type struct { Cursor *string \"json:\\\"cursor\\\"\" }")},
		{"list with no pages", mcppeer.RawScript{}, `{"jsonrpc":"2.0","id":13,"method":"tools/list"}`,
			reply(13.0, map[string]any{"tools": []any{}})},
		{"list repeated cursor", repeat, `{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{"cursor":"page-1"}}`,
			reply(14.0, map[string]any{"tools": toolsJSON(t, "c"), "nextCursor": "page-1"})},
		{"endless last page goes on", endless, `{"jsonrpc":"2.0","id":15,"method":"tools/list","params":{"cursor":"page-1"}}`,
			reply(15.0, map[string]any{"tools": toolsJSON(t, "c"), "nextCursor": "page-2"})},
		{"endless past the pages", endless, `{"jsonrpc":"2.0","id":16,"method":"tools/list","params":{"cursor":"page-999"}}`,
			reply(16.0, map[string]any{"tools": toolsJSON(t, "c"), "nextCursor": "page-1000"})},
		{"endless without pages", emptyEndless, `{"jsonrpc":"2.0","id":17,"method":"tools/list","params":{"cursor":"page-5"}}`,
			reply(17.0, map[string]any{"tools": []any{}, "nextCursor": "page-6"})},
		{"call a scripted result", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"a","arguments":{}}}`,
			reply(18.0, map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello"}}})},
		{"call an unknown block type", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"video"}}`,
			reply(19.0, map[string]any{"content": []any{map[string]any{"type": "video", "url": "x"}, 42.0, nil}})},
		{"call a legacy result", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"legacy"}}`,
			reply(20.0, map[string]any{"toolResult": map[string]any{"ok": true}})},
		{"call a scripted error", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"boom"}}`,
			map[string]any{"jsonrpc": "2.0", "id": 21.0, "error": map[string]any{"code": -32000.0, "message": "boom", "data": map[string]any{"why": "scripted"}}}},
		{"call an unknown tool", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"nope"}}`,
			rpcError(22.0, -32602, `tools/call: unknown tool "nope"`)},
		{"call without a name", mcptest.SampleRawScript(), `{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{}}`,
			rpcError(23.0, -32602, "tools/call: params must be an object with a tool name")},
		{"call with bad results JSON", mcppeer.RawScript{Results: map[string]json.RawMessage{"x": json.RawMessage(`{`)}},
			`{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"x"}}`,
			rpcError(24.0, -32603, `mcptest raw server: the scripted result for tool "x" is not valid JSON: json: error calling MarshalJSON for type json.RawMessage: unexpected end of JSON input`)},
		{"call with bad error data", mcppeer.RawScript{Errors: map[string]mcppeer.RawError{"x": {Data: json.RawMessage(`{`)}}},
			`{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"x"}}`,
			rpcError(25.0, -32603, `mcptest raw server: the scripted error for tool "x" does not marshal: json: error calling MarshalJSON for type json.RawMessage: unexpected end of JSON input`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := mcppeer.NewRawServer(tc.script).Handle([]byte(tc.in))
			if diff := cmp.Diff(tc.want, decode(t, got)); diff != "" {
				t.Errorf("reply to %s (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// startRaw serves srv on in-process pipes and returns the client's ends;
// Serve's result arrives on the returned channel.
func startRaw(ctx context.Context, srv *mcppeer.RawServer) (pipeEnds, <-chan error) {
	p := newPipes()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, p.serverR, p.serverW) }()
	return p, done
}

// TestRawServeStream drives Serve over a byte stream by hand: replies come
// back in order, blank lines are skipped, and a scripted list change is
// announced after the reply that caused it.
func TestRawServeStream(t *testing.T) {
	script := mcptest.SampleRawScript()
	script.ListChangeOnCall = map[string][]mcppeer.RawPage{"a": {{Tools: []json.RawMessage{mcppeer.RawTool("d", "tool d")}}}}
	srv := mcppeer.NewRawServer(script)
	p, done := startRaw(context.Background(), srv)
	lines := bufio.NewScanner(p.clientR)
	next := func() any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("no reply line: %v", lines.Err())
		}
		return decode(t, lines.Bytes())
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(p.clientW, s); err != nil {
			t.Fatalf("writing %q: %v", s, err)
		}
	}

	send("\n  \n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	if diff := cmp.Diff(any(reply(1.0, map[string]any{})), next()); diff != "" {
		t.Errorf("ping reply (-want +got):\n%s", diff)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}` + "\n")
	next() // the call's result
	if diff := cmp.Diff(any(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}), next()); diff != "" {
		t.Errorf("after the call (-want +got):\n%s", diff)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	p.clientW.Close() // the last line has no newline: it is still served
	if diff := cmp.Diff(any(reply(3.0, map[string]any{"tools": toolsJSON(t, "d")})), next()); diff != "" {
		t.Errorf("list after the change (-want +got):\n%s", diff)
	}
	if err := waitFor(t, done, "Serve to end at EOF"); err != nil {
		t.Errorf("Serve at EOF = %v, want nil", err)
	}
	p.clientR.Close()
}

func TestRawNotifyAndSetScript(t *testing.T) {
	srv := mcppeer.NewRawServer(mcppeer.RawScript{})
	p, done := startRaw(context.Background(), srv)
	defer func() {
		p.clientW.Close()
		waitFor(t, done, "Serve to end")
		p.clientR.Close()
	}()
	lines := bufio.NewScanner(p.clientR)

	// Notify only once Serve has registered the connection: a ping
	// round trip proves it.
	io.WriteString(p.clientW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	lines.Scan()
	srv.SetScript(mcppeer.RawScript{Pages: []mcppeer.RawPage{{Tools: []json.RawMessage{mcppeer.RawTool("new", "tool new")}}}})
	errc := make(chan error, 1)
	go func() { errc <- srv.NotifyToolsChanged() }()
	if !lines.Scan() || string(lines.Bytes()) != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Errorf("got %q, want a list_changed notification", lines.Text())
	}
	if err := waitFor(t, errc, "NotifyToolsChanged"); err != nil {
		t.Errorf("NotifyToolsChanged = %v", err)
	}
	io.WriteString(p.clientW, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	lines.Scan()
	if diff := cmp.Diff(any(reply(2.0, map[string]any{"tools": toolsJSON(t, "new")})), decode(t, lines.Bytes())); diff != "" {
		t.Errorf("list after SetScript (-want +got):\n%s", diff)
	}
}

func TestRawNotifyReportsWriteErrors(t *testing.T) {
	srv := mcppeer.NewRawServer(mcppeer.RawScript{})
	p, done := startRaw(context.Background(), srv)
	io.WriteString(p.clientW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	bufio.NewScanner(p.clientR).Scan()
	p.clientR.Close() // nobody reads: every write fails
	if err := srv.NotifyToolsChanged(); err == nil || !contains(err.Error(), "notifications/tools/list_changed") {
		t.Errorf("NotifyToolsChanged to a closed pipe = %v, want a wrapped write error", err)
	}
	p.clientW.Close()
	waitFor(t, done, "Serve to end")
}

func TestRawServeEnds(t *testing.T) {
	t.Run("ctx done unblocks a closable reader", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		p, done := startRaw(ctx, mcppeer.NewRawServer(mcppeer.RawScript{}))
		cancel()
		if err := waitFor(t, done, "Serve to end on cancel"); err != nil {
			t.Errorf("Serve after cancel = %v, want nil", err)
		}
		p.clientR.Close()
	})
	t.Run("ctx done sets a read deadline", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		server, client := net.Pipe()
		defer client.Close()
		defer server.Close()
		done := make(chan error, 1)
		go func() { done <- mcppeer.ServeRaw(ctx, server, server, mcppeer.RawScript{}) }()
		cancel()
		if err := waitFor(t, done, "Serve to end on cancel"); err != nil {
			t.Errorf("Serve after cancel = %v, want nil", err)
		}
	})
	t.Run("ctx done while a line waits", func(t *testing.T) {
		// The reader has a line but Serve is gone: the reader must not
		// block forever on handing it over.
		ctx, cancel := context.WithCancel(context.Background())
		r := &gatedReader{data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"), gate: make(chan struct{})}
		done := make(chan error, 1)
		go func() { done <- mcppeer.ServeRaw(ctx, r, io.Discard, mcppeer.RawScript{}) }()
		cancel()
		close(r.gate)
		if err := waitFor(t, done, "Serve to end"); err != nil {
			t.Errorf("Serve = %v, want nil", err)
		}
	})
	t.Run("read error", func(t *testing.T) {
		err := mcppeer.ServeRaw(context.Background(), errReader{}, io.Discard, mcppeer.RawScript{})
		if err == nil || !contains(err.Error(), "reading a request") || !contains(err.Error(), "disk on fire") {
			t.Errorf("Serve = %v, want a wrapped read error", err)
		}
	})
	t.Run("write error", func(t *testing.T) {
		p := newPipes()
		p.clientR.Close() // replies cannot be delivered
		done := make(chan error, 1)
		go func() { done <- mcppeer.ServeRaw(context.Background(), p.serverR, p.serverW, mcppeer.RawScript{}) }()
		io.WriteString(p.clientW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
		err := waitFor(t, done, "Serve to fail")
		if !errors.Is(err, io.ErrClosedPipe) || !contains(err.Error(), "writing a reply") {
			t.Errorf("Serve = %v, want a wrapped io.ErrClosedPipe", err)
		}
	})
}

// gatedReader returns its data only after gate closes, then EOF.
type gatedReader struct {
	data []byte
	gate chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.gate
	if len(g.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.data)
	g.data = g.data[n:]
	return n, nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

// TestRawThroughSDKClient: a go-sdk client falls back from server/discover
// to initialize, pages through tools/list, calls a tool and re-lists on
// list_changed.
func TestRawThroughSDKClient(t *testing.T) {
	script := mcptest.SampleRawScript()
	script.ListChangeOnCall = map[string][]mcppeer.RawPage{"a": {{Tools: []json.RawMessage{mcppeer.RawTool("d", "tool d")}}}}
	connections := []struct {
		name    string
		connect func(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession
	}{
		{"in-process", func(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
			p, done := startRaw(context.Background(), mcppeer.NewRawServer(script))
			cs, err := newClient(opts).Connect(context.Background(), &mcp.IOTransport{Reader: p.clientR, Writer: p.clientW}, nil)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			t.Cleanup(func() {
				cs.Close()
				if err := waitFor(t, done, "Serve to end"); err != nil {
					t.Errorf("Serve = %v", err)
				}
			})
			return cs
		}},
		{"child", func(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
			cs, _ := connectChild(t, opts, "raw", mcppeer.RawScriptEnv+"="+mcptest.WriteRawScript(t, script))
			return cs
		}},
	}
	for _, c := range connections {
		t.Run(c.name, func(t *testing.T) {
			onChange, changed := signal()
			cs := c.connect(t, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { onChange() },
			})
			if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
				t.Errorf("negotiated %q, want 2025-11-25 after the discover fallback", got)
			}
			if diff := cmp.Diff([]string{"a", "b", "c"}, mcptest.ToolNames(t, cs)); diff != "" {
				t.Errorf("tools over two pages (-want +got):\n%s", diff)
			}
			mcptest.CheckCall(t, cs, mcptest.FixtureCall{Tool: "a", Want: mcptest.Blocks(mcptest.TextBlock("hello"))})
			waitFor(t, changed, "list_changed after calling a")
			if diff := cmp.Diff([]string{"d"}, mcptest.ToolNames(t, cs)); diff != "" {
				t.Errorf("tools after the change (-want +got):\n%s", diff)
			}
			if err := cs.Ping(context.Background(), nil); err != nil {
				t.Errorf("Ping: %v", err)
			}
		})
	}
}
