package sdkwire

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// encodeSeeds are messages EncodeMessage writes itself, and some it
// leaves to the SDK.
func encodeSeeds() []jsonrpc.Message {
	id := func(v any) jsonrpc.ID {
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			panic(err)
		}
		return id
	}
	return []jsonrpc.Message{
		&jsonrpc.Request{ID: id(float64(7)), Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`)},
		&jsonrpc.Request{ID: id(float64(0)), Method: "ping"},
		&jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage("{ }")},
		&jsonrpc.Request{ID: id(float64(-3)), Method: "m", Params: json.RawMessage(" {\n\"a\" : [1, 2,\t3], \"h\":\"<&>\\u2028\"}\n")},
		&jsonrpc.Request{ID: id("s<1>"), Method: "m"},
		&jsonrpc.Request{ID: id(float64(1)), Method: "a\"b"},
		&jsonrpc.Request{ID: id(float64(1)), Method: "é"},
		&jsonrpc.Request{ID: id(float64(1)), Method: "<&>"},
		&jsonrpc.Request{ID: id(float64(1)), Method: "m", Params: json.RawMessage(`{"a":`)},
		&jsonrpc.Response{ID: id(float64(9)), Result: json.RawMessage(`{"content":[{"type":"text","text":"Echo: hi"}]}`)},
		&jsonrpc.Response{ID: id(float64(9)), Result: json.RawMessage(" { \"content\" : [ ] , \"x\": \"<\" }")},
		&jsonrpc.Response{ID: id(float64(9)), Result: json.RawMessage(`null`)},
		&jsonrpc.Response{ID: id(float64(9))},
		&jsonrpc.Response{ID: id("r"), Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: id(float64(9)), Error: &jsonrpc.Error{Code: -32600, Message: "no"}},
		&jsonrpc.Response{ID: id(float64(9)), Result: json.RawMessage(`{}`), Error: errors.New("both")},
		&jsonrpc.Response{ID: id(float64(9)), Result: json.RawMessage(`{]`)},
	}
}

// Assumption 12: EncodeMessage gives jsonrpc.EncodeMessage's bytes, or
// its error.
func TestEncodeMessage(t *testing.T) {
	plain := 0
	for _, msg := range encodeSeeds() {
		want, wantErr := jsonrpc.EncodeMessage(msg)
		got, gotErr := EncodeMessage(msg)
		if string(got) != string(want) || errText(gotErr) != errText(wantErr) {
			t.Errorf("encoding %#v:\n got %s (%v)\nSDK %s (%v)", msg, got, gotErr, want, wantErr)
		}
		if _, ok := encodePlain(msg); ok {
			plain++
		}
	}
	if plain < 6 {
		t.Errorf("only %d of the seeds took the plain path", plain)
	}
}

func FuzzEncodeMessage(f *testing.F) {
	f.Add(int64(1), true, "tools/call", []byte(`{"name":"echo"}`), false)
	f.Add(int64(2), false, "", []byte(` {"content" : [] }`), true)
	f.Add(int64(3), true, "m", []byte(`{"a":"\u003c"}`), true)
	f.Fuzz(func(t *testing.T, n int64, withID bool, method string, raw []byte, response bool) {
		var id jsonrpc.ID
		if withID {
			id, _ = jsonrpc.MakeID(float64(n))
		}
		var msg jsonrpc.Message = &jsonrpc.Request{ID: id, Method: method, Params: raw}
		if response {
			msg = &jsonrpc.Response{ID: id, Result: raw}
		}
		want, wantErr := jsonrpc.EncodeMessage(msg)
		got, gotErr := EncodeMessage(msg)
		if string(got) != string(want) || errText(gotErr) != errText(wantErr) {
			t.Fatalf("encoding %#v:\n got %s (%v)\nSDK %s (%v)", msg, got, gotErr, want, wantErr)
		}
	})
}
