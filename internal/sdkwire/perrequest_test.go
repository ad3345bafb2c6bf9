//lint:file-ignore SA1019 MCP 2026-07-28 deprecates logging and roots (SEP-2577) but keeps them working for at least a year; a 2026-07-28 session still logs and refuses roots.

package sdkwire

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// postPerRequest posts a 2026-07-28 tools/call of name with the _meta
// members meta to url.
func postPerRequest(t *testing.T, url string, id int, name, meta string) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + name + `","arguments":{},"_meta":{` + meta + `}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", serverwire.PerRequestVersion)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// Parity check P7: over stateless Streamable HTTP, a 2026-07-28 tools/call
// whose _meta ReadPerRequestCall reads is served on a session made for it
// alone whose initialize params are what the _meta says (the version,
// clientInfo's name, the capabilities as ReadPerRequestCall decodes them), log
// messages sent from the _meta's level up (none without), every request
// to the client refused with PerRequestAskError; a RawResult reaches the
// client as CallResultJSONPerRequest names the server (ServerInfoJSON),
// on an SSE stream without priming or event ids; an error the handler
// maps to an HTTP status (ErrorStatus) is one application/json body with
// that status, after the SSE headers, any other on the stream.
func TestParityPerRequestStateless(t *testing.T) {
	got := make(chan probeSeen, 1)
	impl := &mcp.Implementation{Name: "contract <&>", Version: "0"}
	srv := mcp.NewServer(impl, nil)
	srv.AddTool(&mcp.Tool{Name: "probe", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, nil // answered by the middleware
	})
	srv.AddReceivingMiddleware(perRequestProbe(got))
	url := httpServer(t, srv, true)
	for i, tt := range []struct{ name, meta, level, fail, caps string }{
		{name: "", meta: ""},
		{name: "cli", meta: `,"io.modelcontextprotocol/clientInfo":{"name":"cli","version":"1"},"io.modelcontextprotocol/logLevel":"info"`, level: "info"},
		{meta: `,"fail":"params"`, fail: "params"},
		{meta: `,"fail":"internal"`, fail: "internal"},
		{caps: `{"roots":{"listChanged":true}}`},
		{caps: `{"roots":{}}`},
		{caps: `{"sampling":{"context":{},"tools":{}},"elicitation":{"form":{},"url":{}}}`},
		{caps: `{"elicitation":{}}`},
	} {
		if tt.caps == "" {
			tt.caps = `{}`
		}
		meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + tt.caps + tt.meta
		p, client, ok := serverwire.ReadPerRequestCall(json.RawMessage(`{"name":"probe","_meta":{` + meta + `}}`))
		if !ok || client.Version != serverwire.PerRequestVersion || client.Client != tt.name || client.LogLevel != tt.level || p.Name != "probe" {
			t.Fatalf("%d: ReadPerRequestCall = %+v, %+v, %v", i, p, client, ok)
		}
		resp := postPerRequest(t, url, i, "probe", meta)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		s := <-got
		if p := s.params; p == nil || p.ProtocolVersion != serverwire.PerRequestVersion || clientNameOf(p) != client.Client || !reflect.DeepEqual(p.Capabilities, client.Capabilities) {
			t.Errorf("%d: the session's initialize params are %+v (capabilities %+v), ReadPerRequestCall's capabilities %+v", i, s.params, s.params.Capabilities, client.Capabilities)
		}
		if want := serverwire.PerRequestAskError("roots/list", serverwire.PerRequestVersion).Error(); s.askErr != want {
			t.Errorf("%d: ListRoots failed with %q, want %q", i, s.askErr, want)
		}
		want, wantStatus, h := perRequestAnswer(i, client.LogLevel, probeFailure(tt.fail), impl)
		if string(body) != want || resp.StatusCode != wantStatus {
			t.Errorf("%d: the response is %d\n%s\nwant %d\n%s", i, resp.StatusCode, body, wantStatus, want)
		}
		for key := range h {
			if resp.Header.Get(key) != h.Get(key) {
				t.Errorf("%d: header %s = %q, want %q", i, key, resp.Header.Get(key), h.Get(key))
			}
		}
	}
}

// probeSeen is what perRequestProbe saw of a call's session.
type probeSeen struct {
	params *mcp.InitializeParams
	askErr string
}

// perRequestProbe answers tools/call for TestParityPerRequestStateless:
// it sends a log message of every level, asks for roots, reports the
// session's initialize params and the ask's error on got, and fails as
// the call's _meta "fail" says (probeFailure), else answers a RawResult.
func perRequestProbe(got chan<- probeSeen) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			ss := req.GetSession().(*mcp.ServerSession)
			for _, level := range logLevels {
				ss.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(level), Data: level})
			}
			_, err := ss.ListRoots(ctx, nil)
			s := probeSeen{params: ss.InitializeParams()}
			if err != nil {
				s.askErr = err.Error()
			}
			got <- s
			fail, _ := req.GetParams().(*mcp.CallToolParamsRaw).Meta["fail"].(string)
			if err := probeFailure(fail); err != nil {
				return nil, err
			}
			return RawResult(ss, true, json.RawMessage(`[{"type":"text","text":"<ok>"}]`), json.RawMessage(`{"h":"<i>"}`)), nil
		}
	}
}

// probeFailure is the error perRequestProbe fails with for fail, nil for
// none.
func probeFailure(fail string) error {
	switch fail {
	case "params":
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad <params>"}
	case "internal":
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "broke"}
	}
	return nil
}

// perRequestAnswer is the body, status and headers the SDK answers
// perRequestProbe's call i with: the log messages from level up as SSE
// events, then the result (or wantErr) as one more, or after them as one
// JSON body with the error's status when the SDK maps it to one.
func perRequestAnswer(i int, level string, wantErr error, impl *mcp.Implementation) (string, int, http.Header) {
	id, _ := jsonrpc.MakeID(float64(i))
	var frames []byte
	for _, l := range logLevels {
		if serverwire.LogPasses(l, level) {
			note, _ := serverwire.NotificationJSON("notifications/message", &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(l), Data: l})
			frames = serverwire.AppendEvent(frames, "message", "", note)
		}
	}
	var result json.RawMessage
	if wantErr == nil {
		result = serverwire.CallResultJSONPerRequest(true, json.RawMessage(`[{"type":"text","text":"<ok>"}]`), json.RawMessage(`{"h":"<i>"}`), serverwire.ServerInfoJSON(impl))
	}
	message, _ := serverwire.ResponseJSON(id, result, wantErr)
	h := http.Header{}
	serverwire.SetResponseHeaders(h, false)
	if status := serverwire.ErrorStatus(wantErr); status != 0 {
		h.Set("Content-Type", "application/json")
		return string(frames) + string(message), status, h
	}
	return string(serverwire.AppendEvent(frames, "message", "", message)), http.StatusOK, h
}

// clientNameOf is the name p's clientInfo gives, "" without one.
func clientNameOf(p *mcp.InitializeParams) string {
	if p.ClientInfo == nil {
		return ""
	}
	return p.ClientInfo.Name
}
