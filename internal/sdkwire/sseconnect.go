package sdkwire

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LifetimeConnect gives a transport whose connection lives on its Connect
// context (mcp.SSEClientTransport's GET stream, assumption 19) the
// lifetime Life instead: Connect's own context bounds only the connecting,
// and when it ends first End is called, which must end Life.
type LifetimeConnect struct {
	mcp.Transport
	Life context.Context
	End  func(error)
}

// Connect connects on Life, calling End if ctx ends before it returns;
// then it fails, even when the connecting itself got through first (End
// ends Life, and with it the connection, in a goroutine of its own).
func (t *LifetimeConnect) Connect(ctx context.Context) (mcp.Connection, error) {
	stop := context.AfterFunc(ctx, func() { t.End(context.Cause(ctx)) })
	conn, err := t.Transport.Connect(t.Life)
	if !stop() && err == nil {
		conn.Close()
		return nil, context.Cause(ctx)
	}
	return conn, err
}
