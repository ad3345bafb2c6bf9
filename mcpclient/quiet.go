package mcpclient

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// quietTransport keeps a server's log messages and progress notifications
// from the SDK, once the capture table under it has handed them to the
// bridge (connect: OnNotification). The SDK queues what it reads without
// bound for handlers that run one at a time, and the bridge sets none for
// these two; a server flooding them grew the queue by hundreds of MiB.
// Only for connections without SDK-private state (see
// sdkwire.CaptureTransport).
type quietTransport struct {
	mcp.Transport
}

func (t quietTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return quietConn{conn}, nil
}

type quietConn struct {
	mcp.Connection
}

// handledNotifications are the notifications the bridge handles as they
// are read, which the SDK never needs to see.
var handledNotifications = map[string]bool{"notifications/message": true, "notifications/progress": true}

func (c quietConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if req, ok := msg.(*jsonrpc.Request); err == nil && ok && !req.IsCall() && handledNotifications[req.Method] {
			continue
		}
		return msg, err
	}
}
