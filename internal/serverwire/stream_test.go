package serverwire

import (
	"errors"
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
