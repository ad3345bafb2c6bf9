package mcptest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// TestHTTPHeadersRecorded: every request of a session (handshake, list,
// call, close) is recorded with the headers the client sent.
func TestHTTPHeadersRecorded(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		name := map[bool]string{false: "stateful", true: "stateless"}[stateless]
		t.Run(name, func(t *testing.T) {
			hs := NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), HTTPOptions{Stateless: stateless})
			if !strings.HasPrefix(hs.URL, "http://127.0.0.1:") || !strings.HasSuffix(hs.URL, "/mcp") {
				t.Errorf("URL = %q, want http://127.0.0.1:PORT/mcp", hs.URL)
			}
			if hs.Raw() != nil {
				t.Error("Raw() of an SDK server is not nil")
			}
			cs := ConnectHTTP(t, hs.URL, nil, http.Header{"Authorization": {"Bearer e2e-test-token"}})
			CheckCall(t, cs, FixtureCall{Tool: "greet", Args: map[string]any{"name": "web"}, Want: Blocks(TextBlock("Hello, web!"))})
			cs.Close()
			hs.Close()
			hs.Close() // idempotent

			headers := hs.Headers()
			if len(headers) < 2 {
				t.Fatalf("recorded %d requests, want at least a handshake and a call", len(headers))
			}
			for i, h := range headers {
				if got := h.Get("Authorization"); got != "Bearer e2e-test-token" {
					t.Errorf("request %d Authorization = %q", i, got)
				}
			}
			// Headers returns a copy.
			headers[0].Set("Authorization", "changed")
			if got := hs.Headers()[0].Get("Authorization"); got != "Bearer e2e-test-token" {
				t.Errorf("Headers() shares storage: got %q after changing the copy", got)
			}
		})
	}
}

func TestRawHTTPThroughSDKClient(t *testing.T) {
	script := SampleRawScript()
	script.Results["videoonly"] = json.RawMessage(`{"content":[{"type":"video"}]}`)
	hs := NewRawHTTPServer(t, script)
	if hs.Raw() == nil {
		t.Fatal("Raw() of a raw server is nil")
	}
	cs := ConnectHTTP(t, hs.URL, nil, http.Header{"X-Test": {"raw"}})
	if diff := cmp.Diff([]string{"a", "b", "c"}, ToolNames(t, cs)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	CheckCall(t, cs, FixtureCall{Tool: "a", Want: Blocks(TextBlock("hello"))})

	// A result the SDK cannot decode is an error for its client; the raw
	// server still sent it (see TestRawHTTPWire for the bytes).
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "videoonly"}); err == nil || !strings.Contains(err.Error(), `unrecognized content type "video"`) {
		t.Errorf("CallTool(video) = %v, want the SDK's unrecognized content type error", err)
	}
	var werr *jsonrpc.Error
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "boom"})
	if !errors.As(err, &werr) || werr.Code != -32000 || werr.Message != "boom" {
		t.Errorf("CallTool(boom) = %v, want the scripted JSON-RPC error -32000 boom", err)
	}
	for i, h := range hs.Headers() {
		if h.Get("X-Test") != "raw" {
			t.Errorf("request %d lacks X-Test: %v", i, h)
		}
	}
}

func TestRawHTTPWire(t *testing.T) {
	hs := NewRawHTTPServer(t, SampleRawScript())
	post := func(body string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Post(hs.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatalf("POST: %v", err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading the reply: %v", err)
		}
		return resp, string(b)
	}

	resp, body := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"video"}}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("call: status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var got any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("reply %q: %v", body, err)
	}
	want := reply(1.0, map[string]any{"content": []any{map[string]any{"type": "video", "url": "x"}, 42.0, nil}})
	if diff := cmp.Diff(any(want), got); diff != "" {
		t.Errorf("raw result over HTTP (-want +got):\n%s", diff)
	}

	resp, body = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if resp.StatusCode != http.StatusAccepted || body != "" {
		t.Errorf("notification: status %d body %q, want 202 and no body", resp.StatusCode, body)
	}

	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, err := http.NewRequest(method, hs.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodPost {
			t.Errorf("%s: status %d Allow %q, want 405 and Allow POST", method, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	if n := len(hs.Headers()); n != 4 {
		t.Errorf("recorded %d requests, want 4", n)
	}
}

func TestRawHTTPListChange(t *testing.T) {
	script := SampleRawScript()
	script.ListChangeOnCall = map[string][]mcppeer.RawPage{"a": {{Tools: []json.RawMessage{mcppeer.RawTool("d", "tool d")}}}}
	hs := NewRawHTTPServer(t, script)
	cs := ConnectHTTP(t, hs.URL, nil, nil)
	CheckCall(t, cs, FixtureCall{Tool: "a", Want: Blocks(TextBlock("hello"))})
	// No stream carries the notification over HTTP, but the list changed.
	if diff := cmp.Diff([]string{"d"}, ToolNames(t, cs)); diff != "" {
		t.Errorf("tools after the change (-want +got):\n%s", diff)
	}
}

type failingBody struct{}

func (failingBody) Read([]byte) (int, error) { return 0, errors.New("body lost") }

func TestRawHTTPBodyError(t *testing.T) {
	srv := mcppeer.NewRawServer(mcppeer.RawScript{})
	rec := &recorder{header: http.Header{}}
	req, err := http.NewRequest(http.MethodPost, "http://x/mcp", failingBody{})
	if err != nil {
		t.Fatal(err)
	}
	srv.ServeHTTP(rec, req)
	if rec.status != http.StatusBadRequest || !strings.Contains(rec.body.String(), "body lost") {
		t.Errorf("status %d body %q, want 400 naming the read error", rec.status, rec.body.String())
	}
}

// recorder is a minimal http.ResponseWriter (httptest.ResponseRecorder
// would do too; this keeps the status of the first WriteHeader).
type recorder struct {
	header http.Header
	status int
	body   strings.Builder
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
