package gateway

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// The stdio line filter hands the SDK only JSON-RPC messages and answers
// everything else itself.
func TestLineFilter(t *testing.T) {
	tests := []struct {
		name, in        string
		passed, replies string
	}{
		{"messages pass", "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n  \n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n",
			"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", ""},
		{"last line without newline", `{"jsonrpc":"2.0","method":"a"}`, "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n", ""},
		{"batch", `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]` + "\n",
			`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]` + "\n", ""},
		{"invalid JSON", "{oops\n", "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the message is not valid JSON"}}` + "\n"},
		{"empty batch", "[]\n", "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: an empty batch"}}` + "\n"},
		{"bad batch member keeps its id, the rest pass", `[{"jsonrpc":"2.0","method":"a"},{"id":"x"}]` + "\n",
			`[{"jsonrpc":"2.0","method":"a"}]` + "\n", "-32600 \"x\""},
		{"only bad members", `[{"id":"x"},3]` + "\n", "", "-32600 \"x\""},
		{"object id is not echoed", `{"id":{"a":1}}` + "\n", "", "-32600 null"},
		{"an id answered under another is refused", `{"jsonrpc":"2.0","id":1.5,"method":"a"}` + "\n", "", "-32600 1.5"},
		{"too long", strings.Repeat("x", 90) + "\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n", "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: message longer than 80 bytes"}}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			// A tiny bufio buffer exercises lines longer than one chunk.
			f := &lineFilter{src: io.NopCloser(nil), in: bufio.NewReaderSize(strings.NewReader(tt.in), 16), out: &out, max: 80}
			passed, err := io.ReadAll(iotest{f})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.passed, string(passed)); diff != "" {
				t.Errorf("passed to the SDK (-want +got):\n%s", diff)
			}
			got := out.String()
			if strings.HasPrefix(tt.replies, "-32600 ") {
				wantID := strings.TrimPrefix(tt.replies, "-32600 ")
				if !strings.Contains(got, `"id":`+wantID+`,`) || !strings.Contains(got, `"code":-32600`) {
					t.Errorf("replies %q, want -32600 with id %s", got, wantID)
				}
				return
			}
			if diff := cmp.Diff(tt.replies, got); diff != "" {
				t.Errorf("replies (-want +got):\n%s", diff)
			}
		})
	}
}

// iotest reads through a small buffer, as the SDK's decoder may.
type iotest struct{ r io.Reader }

func (s iotest) Read(p []byte) (int, error) {
	if len(p) > 7 {
		p = p[:7]
	}
	return s.r.Read(p)
}

// Options.Stateless is for HTTP: a stdio session is one client's for as
// long as it lasts, stateless or not, so a call of its client parked for
// a backend's question (asked in the middle of the call, put to the
// client as an input-required result) is that session's. Another stdio
// session of the gateway cannot answer it, even with its requestState,
// and it is cancelled, and forgotten, when its session ends. Parked under
// no session, as a stateless HTTP request's, it was any session's without
// an Authorization header to answer, and it ran on past its session's end
// until QuestionWait passed.
func TestStdioStatelessParksPerSession(t *testing.T) {
	reg := tool.NewRegistry()
	ended := startConfirmBackend(t, reg, "2025-11-25")
	g := newGateway(t, reg, Options{Stateless: true})
	alice, served := connectStdio(t, g, manualSDK(t), nil)
	mallory, _ := connectStdio(t, g, manualSDK(t), nil)

	key, state := askedFor(t, alice, "deploy")
	if res, err := answerWith(mallory, "deploy", key, state); err == nil || !strings.Contains(err.Error(), "requestState is not one this gateway holds for this call") {
		t.Errorf("another stdio session answering with the call's requestState: %+v, %v; want the requestState refused", res, err)
	}
	if res, err := answerWith(alice, "deploy", key, state); err != nil || res.IsError || strings.Join(texts(res), "") != "accept deploy true" {
		t.Fatalf("the session's own answer: %+v, %v; want the call completed with it", res, err)
	}

	askedFor(t, alice, "delete")
	alice.Close()
	waitSignal(t, ended, "the backend's question ended with its session")
	if err := served.wait(t); err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
	waitFor(t, "the ended session's call unparked", func() bool { return len(g.ParkedCalls(nil)) == 0 })
}
