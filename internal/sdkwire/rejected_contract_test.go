//lint:file-ignore SA1019 roots are deprecated in 2026-07-28 (SEP-2577) but work; the contract needs a request the server sends its client.

package sdkwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rejectingTransport's connection rejects every request the server sends
// its client with err.
type rejectingTransport struct {
	mcp.Transport
	err error
}

func (r rejectingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return rejectingConn{c, r.err}, err
}

type rejectingConn struct {
	mcp.Connection
	err error
}

func (c rejectingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		return fmt.Errorf("%w: not to this client", c.err)
	}
	return c.Connection.Write(ctx, msg)
}

// Assumption 40: a server connection's Write that fails with an error
// wrapping ErrRejected fails that message alone: the handler that sent
// it gets the error (errors.Is ErrRejected), and the session goes on
// serving its client. Any other write error breaks the session.
func TestContractRejectedWriteFailsAlone(t *testing.T) {
	srv := newServer(nil)
	asked := make(chan error, 2)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.ListRoots(ctx, nil)
			asked <- err
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "asked"}}}, nil
		})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), rejectingTransport{st, ErrRejected}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{})
	cs, err := client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 2 {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("call %d after a rejected write: %v", i, err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; text != "asked" {
			t.Errorf("call %d answered %q", i, text)
		}
		if err := <-asked; !errors.Is(err, ErrRejected) {
			t.Errorf("call %d: the rejected request's sender got %v, want an error matching ErrRejected", i, err)
		}
	}
}
