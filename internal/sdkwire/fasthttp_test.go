package sdkwire

import (
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestPeekCall(t *testing.T) {
	tests := []struct {
		body string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, true},
		{`{"jsonrpc":"2.0","id":"a","method":"tools\/call","params":{"name":"echo"}}`, true},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}]`, false},
		{` {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, false},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call",`, false},
		{`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, false},
		{``, false},
	}
	for _, tt := range tests {
		req, ok := PeekCall([]byte(tt.body))
		if ok != tt.ok {
			t.Errorf("PeekCall(%s) = %v, want %v", tt.body, ok, tt.ok)
			continue
		}
		if ok && (req.Method != "tools/call" || !req.ID.IsValid() || string(req.Params) != `{"name":"echo"}`) {
			t.Errorf("PeekCall(%s) read %+v", tt.body, req)
		}
	}
}

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

func TestPeekResponse(t *testing.T) {
	tests := []struct {
		body string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":"a","result":{"roots":[]}}`, true},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}`, true},
		{`[{"jsonrpc":"2.0","id":"a","result":{}}]`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":`, false},
	}
	for _, tt := range tests {
		if _, ok := PeekResponse([]byte(tt.body)); ok != tt.ok {
			t.Errorf("PeekResponse(%s) = %v, want %v", tt.body, ok, tt.ok)
		}
	}
}
