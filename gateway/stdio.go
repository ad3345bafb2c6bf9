package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// ServeStdio serves one client on in and out (newline-delimited JSON-RPC,
// as MCP's stdio transport, e.g. os.Stdin and os.Stdout) like
// ServeTransport; the client leaves by closing in. A line that is not a
// JSON-RPC message is answered with a JSON-RPC error (-32700 for invalid
// JSON, -32600 otherwise) and the session goes on, where the SDK's own
// stdio reader would end the session at the first such line.
func (g *Gateway) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return g.ServeTransport(ctx, stdioTransport(in, out))
}

// stdioTransport is the server transport of a stdio session on in and out.
func stdioTransport(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	w := sdkwire.NewLockedWriter(out) // the replies never cut into the SDK's frames
	r := &lineFilter{src: in, in: bufio.NewReader(in), out: w, max: mcp.DefaultMaxLineLength}
	// A lean connection reads what the filter admits (the SDK's own stdio
	// connection would decode each message three times over).
	return &sdkwire.LeanTransport{R: r, W: w, MaxLine: mcp.DefaultMaxLineLength, Close: func() error {
		return errors.Join(r.Close(), w.Close())
	}}
}

// lineFilter is the reading side of a stdio session: the SDK reads the
// lines that are JSON-RPC messages (or batches) through an
// sdkwire.LineFilter, and the gateway answers every other line itself.
type lineFilter struct {
	src    io.Closer
	in     *bufio.Reader
	out    io.Writer
	max    int                 // longest line accepted, in bytes
	filter *sdkwire.LineFilter // made by the first Read
}

func (f *lineFilter) Read(p []byte) (int, error) {
	if f.filter == nil {
		f.filter = sdkwire.NewLineFilter(f.in, f.max, f.reply)
	}
	return f.filter.Read(p)
}

func (f *lineFilter) Close() error { return f.src.Close() }

// reply answers a line the filter held back with a JSON-RPC error
// response; id is echoed when it is a string or a number, else null. A
// failed write is the session's to notice on its next frame.
func (f *lineFilter) reply(id json.RawMessage, why *jsonrpc.Error) {
	f.out.Write(append(errorFrame(id, why), '\n'))
}
