package sdkwire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestScreenFrame(t *testing.T) {
	req := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }
	batch := func(n int, id string) string {
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = req(id)
		}
		return "[" + strings.Join(msgs, ",") + "]"
	}
	const inexact = " cannot be answered exactly; an id is a string or an integer from -2^53 to 2^53"
	tests := []struct {
		name, frame string
		want        *Refusal
	}{
		{"integer id", req("7"), nil},
		{"string id", req(`"1.5"`), nil},
		{"notification", `{"jsonrpc":"2.0","method":"ping"}`, nil},
		{"largest exact ids", req("9007199254740992") + "\n", nil},
		{"negative exact id", req("-9007199254740992"), nil},
		{"invalid JSON is the SDK's", `{"id":1.5`, nil},
		{"fraction", req("1.5"), &Refusal{ID: json.RawMessage("1.5"), Err: &jsonrpc.Error{Code: -32600, Message: "Invalid Request: id 1.5" + inexact}}},
		{"2^64+1", req("18446744073709551617"), &Refusal{ID: json.RawMessage("18446744073709551617"), Err: &jsonrpc.Error{Code: -32600, Message: "Invalid Request: id 18446744073709551617" + inexact}}},
		{"2^53+1", req("9007199254740993"), &Refusal{ID: json.RawMessage("9007199254740993"), Err: &jsonrpc.Error{Code: -32600, Message: "Invalid Request: id 9007199254740993" + inexact}}},
		{"exponent", req("1e3"), &Refusal{ID: json.RawMessage("1e3"), Err: &jsonrpc.Error{Code: -32600, Message: "Invalid Request: id 1e3" + inexact}}},
		{"integral fraction", req("1.0"), &Refusal{ID: json.RawMessage("1.0"), Err: &jsonrpc.Error{Code: -32600, Message: "Invalid Request: id 1.0" + inexact}}},
		{"a name the SDK also reads as id", `{"jsonrpc":"2.0","\u0049D":2.5,"method":"ping"}`, &Refusal{ID: json.RawMessage("2.5"), Err: &jsonrpc.Error{Code: -32600, Message: "Invalid Request: id 2.5" + inexact}}},
		{"long ids are cut in the message", req(strings.Repeat("9", 60)), &Refusal{ID: json.RawMessage(strings.Repeat("9", 60)), Err: &jsonrpc.Error{Code: -32600, Message: "Invalid Request: id " + strings.Repeat("9", 40) + "…" + inexact}}},
		{"batch at the limit", batch(MaxBatch, "1"), nil},
		{"batch over the limit", " " + batch(MaxBatch+1, "1"), &Refusal{Err: &jsonrpc.Error{Code: -32600, Message: "Invalid Request: a batch of 1001 messages is over the limit of 1000"}}},
		{"batch of 40,000", batch(40000, "1"), &Refusal{Err: &jsonrpc.Error{Code: -32600, Message: "Invalid Request: a batch of 40000 messages is over the limit of 1000"}}},
		{"batch with an inexact id", "[" + req("1") + "," + req("0.5") + "]", &Refusal{ID: json.RawMessage("0.5"), Err: &jsonrpc.Error{Code: -32600, Message: "Invalid Request: id 0.5" + inexact}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ScreenFrame([]byte(tt.frame))); diff != "" {
				t.Errorf("ScreenFrame (-want +got):\n%s", diff)
			}
		})
	}
}

// Screen refuses what ScreenFrame refuses and reports whether the frame is
// valid JSON, which is what lets a caller decode it with DecodeValid.
func TestScreenReportsValidity(t *testing.T) {
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		` [{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n",
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`[]`,
		`{"id":1.5`,
		`this is not JSON`,
		`{} {}`,
		``,
	} {
		ref, valid := Screen([]byte(frame))
		if valid != json.Valid([]byte(frame)) {
			t.Errorf("Screen(%q) reports valid %v, json.Valid %v", frame, valid, !valid)
		}
		if diff := cmp.Diff(ScreenFrame([]byte(frame)), ref); diff != "" {
			t.Errorf("Screen(%q) refuses unlike ScreenFrame (-ScreenFrame +Screen):\n%s", frame, diff)
		}
	}
}
