package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A POST whose body is not a JSON-RPC message or batch is answered 400
// with the SDK decoder's words, on a session, on a POST that would open
// one and on a stateless gateway alike: a body screen found valid JSON is
// decoded without a second check, and one it did not fails as before.
func TestHTTPMalformedPayload(t *testing.T) {
	bodies := []struct{ body, answer string }{
		{`this is not JSON`, "malformed payload: unmarshaling jsonrpc message: json: expected 'true' but found invalid token: this is not JSON\n"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, "malformed payload: unmarshaling jsonrpc message: unexpected EOF\n"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},]`, "malformed payload: unmarshaling jsonrpc message: json: unexpected trailing comma after object field: ]\n"},
		{`{} {}`, "malformed payload: invalid message version tag \"\"; expected \"2.0\"\n"},
		{` [] `, "malformed payload: empty batch\n"},
		{`[1]`, "malformed payload: unmarshaling jsonrpc message: json: cannot unmarshal \"1\" into Go value of type jsonrpc2.wireDecode\n"},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, "malformed payload: parse error: invalid ID type map[string]interface {}\n"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":2,"method":"ping"}]`, "malformed payload: invalid message version tag \"1.0\"; expected \"2.0\"\n"},
	}
	check := func(t *testing.T, s *httpSession) {
		for _, b := range bodies {
			status, answer := postFor(t, context.Background(), s, b.body)
			if status != http.StatusBadRequest || answer != b.answer {
				t.Errorf("POST %s: %d %q, want 400 %q", b.body, status, answer, b.answer)
			}
		}
	}
	reg := tool.NewRegistry()
	t.Run("session", func(t *testing.T) {
		check(t, openHTTPSession(t, serveHTTP(t, newGateway(t, reg, Options{}), Options{})))
	})
	t.Run("no session yet", func(t *testing.T) {
		check(t, &httpSession{t: t, endpoint: serveHTTP(t, newGateway(t, reg, Options{}), Options{}) + "/mcp"})
	})
	t.Run("stateless", func(t *testing.T) {
		check(t, &httpSession{t: t, endpoint: serveHTTP(t, newGateway(t, reg, Options{Stateless: true}), Options{Stateless: true}) + "/mcp"})
	})
}

// sdkReadBatch is how the SDK's handler decodes a POST's body, which
// readBatch does without a JSON decoder.
func sdkReadBatch(body []byte) ([]jsonrpc.Message, bool, error) {
	var raw []json.RawMessage
	if len(body) > 0 && isBatch(body) && json.Unmarshal(body, &raw) == nil {
		if len(raw) == 0 {
			return nil, true, errors.New("empty batch")
		}
		var msgs []jsonrpc.Message
		for _, m := range raw {
			msg, err := jsonrpc.DecodeMessage(m)
			if err != nil {
				return nil, true, err
			}
			msgs = append(msgs, msg)
		}
		return msgs, true, nil
	}
	msg, err := jsonrpc.DecodeMessage(body)
	return []jsonrpc.Message{msg}, false, err
}

// describeBatch describes readBatch's outcome.
func describeBatch(msgs []jsonrpc.Message, batch bool, err error) string {
	if err != nil {
		return fmt.Sprintf("batch %v, error %v", batch, err)
	}
	out := fmt.Sprintf("batch %v:", batch)
	for _, msg := range msgs {
		data, err := sdkwire.EncodeMessage(msg)
		out += fmt.Sprintf(" %s (%v)", data, err)
	}
	return out
}

var readBatchSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
	` [{"jsonrpc":"2.0","id":1,"method":"ping"} , {"jsonrpc":"2.0","method":"notifications/initialized"}] `,
	`[{"jsonrpc":"2.0","id":"a","result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}]`,
	`[]`, `[1]`, `[null]`, `null`, `[{"jsonrpc":"2.0","id":1,"method":"ping"},]`, `{} {}`, `this is not JSON`,
	`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"1.0","id":1,"method":"ping"}`, "\n{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}\n",
}

// FuzzReadBatch checks that readBatch decodes every body as the SDK's
// handler does, whether or not it is told the body is valid JSON (as
// screen tells it of the bodies it found valid).
func FuzzReadBatch(f *testing.F) {
	for _, s := range readBatchSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want := describeBatch(sdkReadBatch(body))
		if got := describeBatch(readBatch(body, false)); got != want {
			t.Fatalf("readBatch(%q):\n got %s\nSDK %s", body, got, want)
		}
		if !json.Valid(body) {
			return
		}
		if got := describeBatch(readBatch(body, true)); got != want {
			t.Fatalf("readBatch(%q), told it is valid:\n got %s\nSDK %s", body, got, want)
		}
	})
}

// BenchmarkReadBatch decodes a tools/call's body, screened (known valid)
// and not.
func BenchmarkReadBatch(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"mcp__bench__echo","arguments":{"message":"hi"},"_meta":{"progressToken":12}}}`)
	for _, valid := range []bool{true, false} {
		b.Run(fmt.Sprintf("valid=%v", valid), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := readBatch(body, valid); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
