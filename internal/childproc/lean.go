package childproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// leanConn is the connection Transport.Connect returns: newline-delimited
// JSON-RPC, like mcp.IOTransport's, but without its per-message cost. The
// SDK decodes every JSON value with a fresh segmentio decoder that
// allocates a 32 KiB buffer (internal/json.Unmarshal), and IOTransport's
// connection does so twice per incoming message (readBatch first tries the
// line as a batch array, then jsonrpc2.DecodeMessage decodes it, a third
// time for a request's method), after a json.Decoder and a goroutine
// handoff have framed it. leanConn frames lines with a bufio.Reader on the
// SDK's own read goroutine, validates with the non-allocating json.Valid
// and picks the envelope apart without a decoder; anything unusual (a
// batch, an escaped key, an error object, a non-"2.0" version) goes to the
// SDK's jsonrpc.DecodeMessage, so results and errors match the SDK's.
type leanConn struct {
	r       *bufio.Reader
	maxLine int
	queue   []jsonrpc.Message // rest of a batch; Read is never concurrent with itself

	wmu  sync.Mutex
	w    io.Writer
	wbuf []byte // guarded by wmu

	closeOnce sync.Once
	closeFn   func() error
	closeErr  error
}

var _ mcp.Connection = (*leanConn)(nil)

func newLeanConn(r io.Reader, w io.Writer, maxLine int, closeFn func() error) *leanConn {
	switch {
	case maxLine == 0:
		maxLine = mcp.DefaultMaxLineLength
	case maxLine < 0:
		maxLine = math.MaxInt // no bound, as in mcp.IOTransport
	}
	// A small read buffer: an idle connection costs 4 KiB, and a longer
	// line (a tools/list page) is collected in a slice that grows with it.
	return &leanConn{r: bufio.NewReaderSize(r, 4<<10), w: w, maxLine: maxLine, closeFn: closeFn}
}

func (c *leanConn) SessionID() string { return "" }

func (c *leanConn) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.closeFn() })
	return c.closeErr
}

func (c *leanConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = append(append(c.wbuf[:0], data...), '\n')
	_, err = c.w.Write(c.wbuf)
	return err
}

func (c *leanConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	for {
		line, err := c.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			continue // blank line between messages
		}
		if line[0] == '[' {
			msgs, err := decodeBatch(line)
			if err != nil {
				return nil, err
			}
			c.queue = msgs[1:]
			return msgs[0], nil
		}
		return decodeLean(line)
	}
}

// readLine returns the next line, trimmed, in a fresh slice (the message
// keeps pointing into it).
func (c *leanConn) readLine() ([]byte, error) {
	var long []byte
	for {
		part, err := c.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, part...)
			if len(long) > c.maxLine {
				return nil, fmt.Errorf("inbound JSON-RPC frame exceeds %d bytes", c.maxLine)
			}
			continue
		}
		if err != nil && (len(part) == 0 || !errors.Is(err, io.EOF)) {
			if errors.Is(err, os.ErrClosed) {
				err = io.EOF // closed on request
			}
			return nil, err
		}
		if long != nil {
			part = append(long, part...)
		}
		part = bytes.TrimSpace(part)
		if len(part) > c.maxLine {
			return nil, fmt.Errorf("inbound JSON-RPC frame exceeds %d bytes", c.maxLine)
		}
		if long == nil {
			part = bytes.Clone(part)
		}
		return part, nil
	}
}

// decodeBatch decodes a batch line with the SDK (rare; older protocols).
func decodeBatch(line []byte) ([]jsonrpc.Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, fmt.Errorf("decoding a JSON-RPC batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("empty JSON-RPC batch")
	}
	msgs := make([]jsonrpc.Message, len(raws))
	for i, raw := range raws {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, err
		}
		msgs[i] = m
	}
	return msgs, nil
}

// decodeLean decodes one message without a JSON decoder: json.Valid, then
// the top-level members by their raw keys. Whatever it does not handle
// itself it hands to jsonrpc.DecodeMessage, so results match the SDK's.
func decodeLean(line []byte) (jsonrpc.Message, error) {
	if !json.Valid(line) || line[0] != '{' {
		return jsonrpc.DecodeMessage(line) // the SDK's error message
	}
	var version, id, method, params, result []byte
	ok := true
	for key, val := range members(line) {
		switch string(key) {
		case `"jsonrpc"`:
			version = val
		case `"id"`:
			id = val
		case `"method"`:
			method = val
		case `"params"`:
			params = val
		case `"result"`:
			result = val
		case `"error"`:
			ok = false // rare: let the SDK decode the error object
		default:
			if bytes.IndexByte(key, '\\') >= 0 {
				ok = false // an escaped key might spell one of ours
			}
		}
	}
	if !ok || string(version) != `"2.0"` || bytes.IndexByte(method, '\\') >= 0 || bytes.IndexByte(id, '\\') >= 0 {
		return jsonrpc.DecodeMessage(line)
	}
	var rid jsonrpc.ID
	switch {
	case id == nil || string(id) == "null":
	case id[0] == '"':
		rid, _ = jsonrpc.MakeID(string(id[1 : len(id)-1]))
	default:
		f, err := strconv.ParseFloat(string(id), 64)
		if err != nil {
			return jsonrpc.DecodeMessage(line)
		}
		rid, _ = jsonrpc.MakeID(f) // a float64 always makes an ID, as in the SDK
	}
	if method != nil {
		if method[0] != '"' {
			return jsonrpc.DecodeMessage(line)
		}
		return &jsonrpc.Request{ID: rid, Method: string(method[1 : len(method)-1]), Params: nullToNil(params)}, nil
	}
	if !rid.IsValid() {
		return jsonrpc.DecodeMessage(line)
	}
	return &jsonrpc.Response{ID: rid, Result: nullToNil(result)}, nil
}

// nullToNil keeps the SDK's reading of an absent member; a present null
// stays as the bytes "null", as the SDK's RawMessage decoding gives.
func nullToNil(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return b
}

// members yields the raw key (quotes included) and raw value of each
// member of the JSON object obj, which must be valid JSON.
func members(obj []byte) func(yield func(key, val []byte) bool) {
	return func(yield func(key, val []byte) bool) {
		i := skipWS(obj, 1)
		for i < len(obj) && obj[i] == '"' {
			kEnd := skipValue(obj, i)
			key := obj[i:kEnd]
			i = skipWS(obj, kEnd)
			i = skipWS(obj, i+1) // the colon
			vEnd := skipValue(obj, i)
			if !yield(key, obj[i:vEnd]) {
				return
			}
			i = skipWS(obj, vEnd)
			if i < len(obj) && obj[i] == ',' {
				i = skipWS(obj, i+1)
			}
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the valid JSON value starting at i.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(b)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipValue(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return j
			}
			j++
		}
		return j
	}
}
