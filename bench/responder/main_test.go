package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestServe(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2099-01-01"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		``,
		`not json`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"result":{}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"c"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t1"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"resources/list"}`, // no newline at the end
	}, "\n")
	var out strings.Builder
	start := time.Now()
	if err := serve(strings.NewReader(in), &out, 20*time.Millisecond, toolList(2)); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 40*time.Millisecond {
		t.Errorf("two initializes took %v, want at least 2×20ms", took)
	}
	want := []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: server/discover"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"responder","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"responder","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"tools":[{"name":"echo","description":"Returns the message, prefixed with \"Echo: \".","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}},{"name":"t1","description":"tool 1","inputSchema":{"type":"object"}}]}}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"unknown tool: t1"}}`,
		`{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"method not found: resources/list"}}`,
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	for _, line := range want {
		if !json.Valid([]byte(line)) {
			t.Errorf("invalid JSON: %s", line)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestServeWriteError(t *testing.T) {
	err := serve(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), failingWriter{}, 0, toolList(0))
	if err == nil || !strings.Contains(err.Error(), "writing a reply: broken pipe") {
		t.Errorf("serve: %v, want the write error", err)
	}
	if got := string(toolList(0)); got != `{"tools":[]}` {
		t.Errorf("toolList(0) = %s", got)
	}
}

// TestMainProgram runs main itself on files standing in for stdin and
// stdout.
func TestMainProgram(t *testing.T) {
	dir := t.TempDir()
	in, err := os.Create(filepath.Join(dir, "in"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	oldArgs, oldIn, oldOut := os.Args, os.Stdin, os.Stdout
	os.Args, os.Stdin, os.Stdout = []string{"responder", "-delay=0s", "-tools=1"}, in, out
	main()
	os.Args, os.Stdin, os.Stdout = oldArgs, oldIn, oldOut
	in.Close()
	out.Close()
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":1,"result":` + string(toolList(1)) + `}` + "\n"; string(b) != want {
		t.Errorf("main wrote %q, want %q", b, want)
	}
}

// TestHTTPHandler checks the HTTP floor's answers: each POST's request
// answered as on stdio, as JSON with a session id; a notification accepted
// without a body; the GET stream refused; a DELETE accepted.
func TestHTTPHandler(t *testing.T) {
	ts := httptest.NewServer(httpHandler(0, toolList(1)))
	defer ts.Close()
	for _, tc := range []struct {
		method, body string
		status       int
		want         string
	}{
		{http.MethodPost, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
			200, `{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`},
		{http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, ""},
		{http.MethodGet, "", 405, ""},
		{http.MethodDelete, "", 200, ""},
	} {
		req, err := http.NewRequest(tc.method, ts.URL+"/mcp", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || string(b) != tc.want {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.body, resp.StatusCode, b, tc.status, tc.want)
		}
		if tc.want != "" && (resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Mcp-Session-Id") == "") {
			t.Errorf("%s %s: headers %v, want JSON and a session id", tc.method, tc.body, resp.Header)
		}
	}
}
