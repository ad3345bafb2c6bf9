package sdkwire

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// Parity check P8: a stateful session's POST carrying the id of a request
// still in flight is refused before it is served, with 400 and the error
// the gateway writes for it; a batch is refused for any one of its ids.
func TestParityDuplicateIDRefused(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	srv := newServer(nil)
	holdTool(srv, entered, release)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	t.Cleanup(ts.Close)
	session := rawInitialize(t, ts.URL, "2025-11-25")
	held := make(chan struct{})
	go func() {
		defer close(held)
		resp := rawSend(t, ts.URL, session, "2025-11-25", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold"}}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	awaitSignal(t, entered, "the call to reach its handler")
	id, _ := jsonrpc.MakeID(float64(7))
	want, err := serverwire.ResponseJSON(id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "duplicate in-flight request ID 7"})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
		`[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]`,
	} {
		version := "2025-11-25"
		if body[0] == '[' {
			version = "2025-03-26" // the last version with batches
		}
		resp := rawSend(t, ts.URL, session, version, body)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" || string(got) != string(want) {
			t.Errorf("POST %s with 7 in flight: %s %q %q, want 400 application/json %s", body, resp.Status, resp.Header.Get("Content-Type"), got, want)
		}
	}
	close(release)
	<-held
}

// Parity check P10: on a stdio session, a request whose id is that of a
// request in flight goes unanswered, whatever its method, and the id
// serves again once the first request was answered. The SDK's session
// leaves it so; a TakingTransport does the same whichever path has the
// id, a call it took or one it left to the SDK.
func TestParityRepeatedIDUnanswered(t *testing.T) {
	bySDK, taken := callLine("7", `{"name":"hold"}`), callLine("7", `{"name":"taken"}`)
	repeats := []string{
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"none"}}`,
		callLine("7", `{"name":"echo"}`),
	}
	for _, tc := range []struct {
		name          string
		taking        bool
		first, repeat string
	}{
		{"the SDK's session", false, bySDK, bySDK},
		{"a taken call first", true, taken, taken},
		{"a call left to the SDK first", true, bySDK, taken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entered, release := make(chan struct{}, 10), make(chan struct{})
			srv := newServer(nil)
			holdTool(srv, entered, release)
			var peer *stdioPeer
			if tc.taking {
				_, peer, _ = takingServer(t, srv, func(ctx context.Context, _ *mcp.ServerSession, _ serverwire.CallParams) (json.RawMessage, error) {
					entered <- struct{}{}
					select {
					case <-release:
					case <-ctx.Done():
					}
					return textResult("held"), nil
				})
			} else {
				_, peer = serveStdio(t, srv, func(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
					return &mcp.IOTransport{Reader: in, Writer: out}
				})
			}
			peer.initialize("2025-11-25")
			peer.send(tc.first)
			awaitSignal(t, entered, "the first call to start")
			for _, line := range append(repeats, tc.repeat) {
				peer.send(line)
			}
			peer.unansweredUntil("7", `"after"`)
			close(release)
			if got := peer.response("7"); !strings.Contains(string(got), `"text":"held"`) {
				t.Fatalf("the first call answered %s", got)
			}
			peer.unansweredUntil("7", `"later"`)
			if n := len(entered); n != 0 {
				t.Errorf("%d repeated calls ran", n)
			}
			for _, line := range repeats {
				peer.call(line, "7") // answered, each frees the id for the next
			}
		})
	}
}

// unansweredUntil pings with id and fails on any response with id
// repeated before the ping's.
func (p *stdioPeer) unansweredUntil(repeated, id string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	for {
		line := awaitSignal(p.t, p.lines, "the response to ping "+id)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(line, &m)
		switch {
		case m.Method != "":
		case string(m.ID) == repeated:
			p.t.Errorf("the repeated id %s was answered: %s", repeated, line)
		case string(m.ID) == id:
			return
		}
	}
}
