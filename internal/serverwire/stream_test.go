package serverwire

import (
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestResponseJSON(t *testing.T) {
	id, _ := jsonrpc.MakeID("x")
	tests := []struct {
		err  error
		want string
	}{
		{nil, `{"jsonrpc":"2.0","id":"x","result":{"content":[]}}`},
		{&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool"}, `{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"unknown tool"}}`},
		{errors.New("broken"), `{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"broken"}}`},
	}
	for _, tt := range tests {
		got, err := ResponseJSON(id, []byte(`{"content":[]}`), tt.err)
		if err != nil || string(got) != tt.want {
			t.Errorf("ResponseJSON(%v) = %s, %v; want %s", tt.err, got, err, tt.want)
		}
	}
}

// SetResponseHeaders' values share one array: adding to one header
// leaves the others as they were.
func TestSetResponseHeadersKeepsEachValue(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		h := http.Header{}
		SetResponseHeaders(h, jsonResponse)
		want := http.Header{"Cache-Control": {"no-cache, no-transform"}, "Content-Type": {"text/event-stream"}, "Connection": {"keep-alive"}}
		if jsonResponse {
			want = http.Header{"Cache-Control": {"no-cache, no-transform"}, "Content-Type": {"application/json"}}
		}
		if !reflect.DeepEqual(h, want) {
			t.Fatalf("jsonResponse %v: headers %v, want %v", jsonResponse, h, want)
		}
		h.Add("Cache-Control", "private")
		h.Add("Content-Type", "x/y")
		want.Add("Cache-Control", "private")
		want.Add("Content-Type", "x/y")
		if !reflect.DeepEqual(h, want) {
			t.Errorf("jsonResponse %v: after adding, headers %v, want %v", jsonResponse, h, want)
		}
	}
}
