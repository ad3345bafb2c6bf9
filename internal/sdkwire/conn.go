package sdkwire

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CaptureTransport captures raw results at the message level, for
// transports whose connections carry no SDK-private state the wrapper would
// hide: stdio (LeanConn, mcp.IOTransport, mcp.CommandTransport) and
// in-memory. Never wrap mcp.StreamableClientTransport this way: its
// connection has private hooks the client session finds by type assertion
// (assumption 5); use CaptureRoundTripper there.
type CaptureTransport struct {
	Transport mcp.Transport
	Table     *Table
}

// Connect connects the wrapped transport.
func (t *CaptureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: conn, table: t.Table}, nil
}

// captureConn records captured calls as they are written (assumption 1: the
// call's ctx reaches Write) and fills their slots as responses are read
// (assumption 2: the SDK decodes the message Read returns).
type captureConn struct {
	mcp.Connection
	table *Table
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if _, err := sentRewritten(ctx, msg); err != nil {
		return err
	}
	c.table.Sent(ctx, msg)
	err := c.Connection.Write(ctx, msg)
	c.table.Written(msg)
	return err
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err == nil {
			c.table.Received(msg)
			if c.table.consumed(msg) {
				continue
			}
		}
		return msg, err
	}
}
