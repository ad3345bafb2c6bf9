package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one client on in and out (newline-delimited JSON-RPC,
// as MCP's stdio transport, e.g. os.Stdin and os.Stdout) like
// ServeTransport; the client leaves by closing in. A line that is not a
// JSON-RPC message is answered with a JSON-RPC error (-32700 for invalid
// JSON, -32600 otherwise) and the session goes on, where the SDK's own
// stdio reader would end the session at the first such line.
func (g *Gateway) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	w := &lockedWriter{w: out}
	r := &lineFilter{src: in, in: bufio.NewReader(in), out: w, max: mcp.DefaultMaxLineLength}
	return g.ServeTransport(ctx, &mcp.IOTransport{Reader: r, Writer: w})
}

// lockedWriter serializes writes, so the error replies of lineFilter never
// interleave with the SDK's frames (the SDK writes each frame in one call).
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// lineFilter is the reading side of a stdio session: it hands the SDK each
// line that is a JSON-RPC message (or batch) and answers any other line
// itself.
type lineFilter struct {
	src     io.Closer
	in      *bufio.Reader
	out     io.Writer
	max     int    // longest line accepted, in bytes
	pending []byte // the admitted line not yet read
	err     error  // the source's error, returned once pending is drained
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.readLine()
		f.err = err
		if line = bytes.TrimSpace(line); len(line) > 0 && f.admit(line) {
			f.pending = append(line, '\n')
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func (f *lineFilter) Close() error { return f.src.Close() }

// readLine returns the next line without its newline. A line longer than
// max is answered with an error and skipped (nil line).
func (f *lineFilter) readLine() ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := f.in.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > f.max+1 {
				tooLong, line = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			f.reply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: message longer than %d bytes", f.max))
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// admit reports whether line is a JSON-RPC message or a batch of them, and
// answers it with an error when it is not.
func (f *lineFilter) admit(line []byte) bool {
	if !json.Valid(line) {
		f.reply(nil, jsonrpc.CodeParseError, "Parse error: the message is not valid JSON")
		return false
	}
	msgs := []json.RawMessage{line}
	if line[0] == '[' {
		// A fresh slice: decoding into msgs would overwrite line's bytes.
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			f.reply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch")
			return false
		}
		msgs = batch
	}
	for _, m := range msgs {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			var probe struct {
				ID json.RawMessage `json:"id"`
			}
			json.Unmarshal(m, &probe) // a non-object leaves ID empty: answered with null
			f.reply(probe.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
			return false
		}
	}
	return true
}

// reply writes a JSON-RPC error response; id is echoed when it is a string
// or a number, else null. A failed write is the session's to notice on its
// next frame.
func (f *lineFilter) reply(id json.RawMessage, code int64, message string) {
	if len(id) == 0 || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		id = json.RawMessage("null")
	}
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	frame := mustJSON(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{code, message}})
	f.out.Write(append(frame, '\n'))
}
