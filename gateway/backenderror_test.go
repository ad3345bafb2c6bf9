package gateway

import (
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A backend's JSON-RPC error is the client's answer as sent, wrapped or
// not; the SDK's "rejected by transport" (sdkwire.ErrRejected, matched by
// its code whatever its message), and a cause that is no JSON-RPC error,
// are not.
func TestBackendErrorAnswers(t *testing.T) {
	asked := &jsonrpc.Error{Code: -32021, Message: "elicitation required"}
	for what, c := range map[string]struct {
		cause error
		want  *jsonrpc.Error
	}{
		"a backend's error":              {asked, asked},
		"a backend's error, wrapped":     {fmt.Errorf("calling: %w", asked), asked},
		"rejected by transport":          {fmt.Errorf("writing: %w", sdkwire.ErrRejected), nil},
		"rejected, in the SDK's words":   {&jsonrpc.Error{Code: -32005, Message: "connection closed"}, nil},
		"no JSON-RPC error":              {errors.New("broken pipe"), nil},
		"no error at all (a plain fail)": {nil, nil},
	} {
		if got := backendError(tool.Result{Cause: c.cause}); got != c.want {
			t.Errorf("%s: %v, want %v", what, got, c.want)
		}
	}
}
