package sdkwire

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
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/projection"
)

// LeanConn is a newline-delimited JSON-RPC connection over a pair of pipes,
// like the one mcp.IOTransport (and so mcp.CommandTransport) makes, with the
// same reading of the stream (assumptions 12 and 13 of the package doc) but
// without its per-message cost: the SDK's connection frames each message
// with a json.Decoder on a goroutine of its own, then decodes it twice more
// with a fresh 32 KiB-buffer decoder each time (first as a batch, then as a
// message). LeanConn frames on the caller's goroutine with a bufio.Reader,
// checks with json.Valid and reads the envelope with the projection's
// scanner; see BenchmarkRead for what that saves.
//
// What it reads as the SDK does (FuzzLeanConn compares it with the SDK's
// connection on the same bytes):
//   - JSON values separated by whitespace; a value may span lines (the
//     stdio transport forbids it, the SDK's decoder accepts it);
//   - a value followed at once by anything but a line end fails the
//     connection ("invalid trailing data");
//   - a message nested deeper than the SDK's limit, a non-"2.0" version,
//     a response without id: the SDK's errors;
//   - batches, with the SDK's checks (an empty batch, a repeated id).
//
// Where it differs, on purpose:
//   - batches are refused once the handshake (initialize, or the newer
//     server/discover) negotiated protocol 2025-06-18 or later, which
//     dropped JSON-RPC batching. The SDK's server-side connection refuses
//     them so; its client-side connection is never told the version and
//     accepts them (TestContractClientBatches pins that);
//   - MaxLineLength bounds the bytes of one message's lines but the end of
//     its last ("\n" or "\r\n"), where the SDK's bound also counts its
//     decoder's read-ahead.
type LeanConn struct {
	r       *bufio.Reader
	maxLine int
	pending []byte            // bytes read past the last message, to read first
	queue   []jsonrpc.Message // rest of a batch; Read is never concurrent with itself

	mu        sync.Mutex
	version   string              // negotiated protocol version; "" until known
	handshake map[jsonrpc.ID]bool // initialize and server/discover calls awaiting their response
	awaiting  atomic.Bool         // handshake is not empty

	batchMu sync.Mutex
	batches map[jsonrpc.ID]*msgBatch // requests of incoming batches not answered yet

	// wturn holds a token while a frame is being written, so frames never
	// interleave, even when the Write that began one has returned.
	wturn chan struct{}
	w     io.Writer
	cut   writeDeadliner // w, when its writes can be cut short; else nil
	wbuf  []byte         // the frame being written; guarded by wturn
	cutAt func()         // cuts the write in flight short, then tells fired
	fired chan struct{}

	closeOnce sync.Once
	closeFn   func() error
	closeErr  error
}

var _ mcp.Connection = (*LeanConn)(nil)

// batchlessVersion is the first protocol version without JSON-RPC batching.
const batchlessVersion = "2025-06-18"

// NewLeanConn returns a connection reading messages from r and writing them
// to w. maxLine bounds one inbound message in bytes as
// mcp.IOTransport.MaxLineLength does: 0 means mcp.DefaultMaxLineLength, a
// negative value no bound. Close calls closeFn once and returns its result;
// a read error wrapping os.ErrClosed reads as io.EOF (closed on request).
func NewLeanConn(r io.Reader, w io.Writer, maxLine int, closeFn func() error) *LeanConn {
	switch {
	case maxLine == 0:
		maxLine = mcp.DefaultMaxLineLength
	case maxLine < 0:
		maxLine = math.MaxInt
	}
	// A small read buffer: an idle connection costs 4 KiB, and a longer
	// line (a tools/list page) is collected in a slice that grows with it.
	c := &LeanConn{r: bufio.NewReaderSize(r, 4<<10), w: w, wturn: make(chan struct{}, 1), maxLine: maxLine, closeFn: closeFn}
	if d, ok := w.(writeDeadliner); ok && d.SetWriteDeadline(time.Time{}) == nil {
		c.cut, c.fired = d, make(chan struct{}, 1)
		c.cutAt = func() {
			c.cut.SetWriteDeadline(time.Unix(1, 0))
			c.fired <- struct{}{}
		}
	}
	return c
}

// writeDeadliner is a writer whose writes a deadline cuts short: an
// os.File of a pipe, as a child's stdin is.
type writeDeadliner interface {
	SetWriteDeadline(t time.Time) error
}

// SessionID returns "": stdio connections have no session id.
func (c *LeanConn) SessionID() string { return "" }

// Close calls the close function once.
func (c *LeanConn) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.closeFn() })
	return c.closeErr
}

// Write writes msg as one line; a response that completes a batch of
// requests is written with the batch's other responses as one array, as the
// SDK's connection does. When ctx ends before the peer has read the line
// (a child that stopped reading its stdin) and w's writes take a deadline
// (an os.File of a pipe), Write returns ctx's error and the line is
// written on, whole, before any other (assumption 43).
func (c *LeanConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.expectIfHandshake(msg, true)
	c.noteHandshake(msg, false) // a server's answer to its client's handshake
	var data []byte
	var err error
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if batch, inBatch := c.updateBatch(resp); inBatch {
			if batch == nil {
				return nil // the batch is not complete yet
			}
			data, err = marshalBatch(batch)
		}
	}
	if data == nil && err == nil {
		data, err = EncodeMessage(msg)
	}
	if err != nil {
		return fmt.Errorf("marshaling message: %v", err)
	}
	select {
	case c.wturn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.wbuf = append(append(c.wbuf[:0], data...), '\n')
	if ctx.Done() == nil || c.cut == nil {
		_, err = c.w.Write(c.wbuf)
		c.wrote()
		return err
	}
	return c.writeCut(ctx)
}

// writeCut writes the frame in wbuf, cut short when ctx ends: a peer that
// does not read holds the line, not the caller past its deadline (the SDK
// sends a call, and its notifications/cancelled, expecting Write to end
// with ctx). The rest of the line is written on, in the background,
// before any other. On the caller's goroutine, without one of its own:
// a goroutine a write slowed every call of serve --stdio
// (BenchmarkStdioCallLean in package gateway).
func (c *LeanConn) writeCut(ctx context.Context) error {
	stop := context.AfterFunc(ctx, c.cutAt)
	n, err := c.w.Write(c.wbuf)
	if stop() {
		c.wrote()
		return err
	}
	<-c.fired // its deadline is set: unset it after
	c.cut.SetWriteDeadline(time.Time{})
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		c.wrote()
		return err // the line went whole (or failed of itself) as ctx ended
	}
	go func() {
		_, _ = c.w.Write(c.wbuf[n:])
		c.wrote()
	}()
	return ctx.Err()
}

// maxKeptWriteBuffer bounds the write buffer kept between frames.
const maxKeptWriteBuffer = 64 << 10

// wrote ends the write of the frame in wbuf and lets the next begin. The
// buffer a large frame grew is let go: kept, it would hold the largest
// frame ever written for the connection's life.
func (c *LeanConn) wrote() {
	if cap(c.wbuf) > maxKeptWriteBuffer {
		c.wbuf = nil
	}
	<-c.wturn
}

// Read returns the next message.
func (c *LeanConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.read(ctx)
	if err != nil {
		// The SDK's decoding errors quote the peer ("invalid message
		// version tag"), and end the session with that text.
		return nil, cutError(err)
	}
	return msg, nil
}

// read is Read, its errors uncut.
func (c *LeanConn) read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	frame, err := c.nextFrame()
	if err != nil {
		return nil, err
	}
	// The SDK tries every frame as a batch first: an array, or null (an
	// empty batch).
	if frame[0] == '[' || string(frame) == "null" {
		return c.readBatch(frame)
	}
	msg, err := decodeValid(frame)
	if err != nil {
		return nil, notMessage(frame, err)
	}
	c.expectIfHandshake(msg, false) // a client's handshake, read by a server
	c.noteHandshake(msg, true)
	return msg, nil
}

// expectIfHandshake expects the answer to msg when it is a handshake call
// (initialize or server/discover), whichever side sends it: the client
// writes it (written true) and reads the answer, the server reads it and
// writes the answer.
func (c *LeanConn) expectIfHandshake(msg jsonrpc.Message, written bool) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && (req.Method == "initialize" || req.Method == "server/discover") {
		c.expectHandshake(req.ID, written)
	}
}

// LeanTransport is an mcp.Transport whose one connection is a LeanConn
// over R and W: the stdio transport of a server session without the SDK's
// per-message decoding cost. Close closes the session's input.
type LeanTransport struct {
	R       io.Reader
	W       io.Writer
	MaxLine int
	Close   func() error
}

// Connect returns the LeanConn.
func (t *LeanTransport) Connect(context.Context) (mcp.Connection, error) {
	return NewLeanConn(t.R, t.W, t.MaxLine, t.Close), nil
}

// FrameError is the read error of a line that holds no JSON-RPC message,
// such as a banner or a log line a server printed on its stdout. Its text
// is the SDK's error for the line; Line is the line's start (at most
// MaxFrameErrorLine bytes), as read, for the reader to quote.
type FrameError struct {
	Line []byte
	Err  error
}

// MaxFrameErrorLine bounds the start of the line a FrameError keeps.
const MaxFrameErrorLine = 256

func (e *FrameError) Error() string { return e.Err.Error() }
func (e *FrameError) Unwrap() error { return e.Err }

// notMessage is err, the SDK's error for line, as a *FrameError.
func notMessage(line []byte, err error) error {
	line = bytes.TrimRight(line[:min(len(line), MaxFrameErrorLine)], "\r\n")
	return &FrameError{Line: bytes.Clone(line), Err: err}
}

// errTrailing is the SDK's error for a value followed by anything but a
// line end.
var errTrailing = errors.New("invalid trailing data at the end of stream")

// nextFrame returns the next JSON value of the stream, which json.Valid
// accepts, without surrounding whitespace.
func (c *LeanConn) nextFrame() ([]byte, error) {
	for {
		line, err := c.readLine()
		if err != nil {
			return nil, err
		}
		line = line[skipSpace(line, 0):]
		if len(line) == 0 {
			continue // blank line between messages
		}
		// A value on one line ends where the line does: a raw CR or LF
		// cannot appear inside one.
		end := len(line)
		if line[end-1] == '\n' {
			end--
		}
		if cr := bytes.IndexByte(line[:end], '\r'); cr >= 0 {
			end = cr
		}
		frame := line[:end]
		if !json.Valid(frame) {
			v, err := c.slowFrame(line)
			if err != nil {
				return nil, notMessage(line, err)
			}
			return v, nil
		}
		if last := frame[len(frame)-1]; last == ' ' || last == '\t' {
			return nil, notMessage(line, errTrailing)
		}
		if end < len(line) {
			c.keep(line[end+1:]) // after a CR: "{...}\r{...}\n" holds two
		}
		return frame, nil
	}
}

// slowFrame reads the value that starts line but does not end on it (it
// spans lines), or fails as the SDK does, with a json.Decoder over the rest
// of the stream: the SDK's own framing.
func (c *LeanConn) slowFrame(line []byte) ([]byte, error) {
	budget := &limitReader{r: c.r, n: c.maxLine - len(line), max: c.maxLine}
	dec := json.NewDecoder(io.MultiReader(bytes.NewReader(line), budget))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // line held the start of a value
		}
		return nil, err
	}
	rest, _ := io.ReadAll(dec.Buffered())
	if len(rest) > 0 && rest[0] != '\n' && rest[0] != '\r' {
		return nil, errTrailing
	}
	c.keep(rest)
	return raw, nil
}

// keep makes rest, bytes read past a value, the start of what is read next,
// unless it is only whitespace.
func (c *LeanConn) keep(rest []byte) {
	if skipSpace(rest, 0) < len(rest) {
		c.pending = rest[:len(rest):len(rest)] // appending copies
	}
}

// readLine returns the next line with its '\n' (without one at the end of
// the stream), in a slice of its own: messages point into it.
func (c *LeanConn) readLine() ([]byte, error) {
	line := c.pending
	c.pending = nil
	if len(line) > 0 && line[len(line)-1] == '\n' {
		return line, nil
	}
	for {
		part, err := c.r.ReadSlice('\n')
		// The bound counts the message, not its line end: IOTransport reads
		// a line of MaxLineLength bytes, and a LineFilter admits one.
		if len(line)+len(part)-len("\r\n") > c.maxLine {
			return nil, c.tooLong()
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			line = append(line, part...)
			continue
		}
		if err != nil && (len(part)+len(line) == 0 || !errors.Is(err, io.EOF)) {
			if errors.Is(err, os.ErrClosed) {
				err = io.EOF // closed on request
			}
			return nil, err
		}
		if line == nil {
			line = bytes.Clone(part)
		} else {
			line = append(line, part...)
		}
		if len(trimLineEnd(line)) > c.maxLine {
			return nil, c.tooLong()
		}
		return line, nil
	}
}

// tooLong is the error of a frame over the bound.
func (c *LeanConn) tooLong() error {
	return fmt.Errorf("inbound JSON-RPC frame exceeds %d bytes", c.maxLine)
}

// trimLineEnd returns line without its line end, "\n" or "\r\n".
func trimLineEnd(line []byte) []byte {
	if trimmed, ok := bytes.CutSuffix(line, []byte("\n")); ok {
		return bytes.TrimSuffix(trimmed, []byte("\r"))
	}
	return line
}

// limitReader reads from r until n bytes are left, then fails the frame.
type limitReader struct {
	r      io.Reader
	n, max int
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("inbound JSON-RPC frame exceeds %d bytes", l.max)
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= n
	if errors.Is(err, os.ErrClosed) {
		err = io.EOF
	}
	return n, err
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// readBatch reads a frame the SDK takes for a batch: the messages, the
// version check and the batch bookkeeping, in the SDK's order and with its
// errors.
func (c *LeanConn) readBatch(frame []byte) (jsonrpc.Message, error) {
	if tooDeep(frame) {
		// The SDK's batch decoding refuses it, and so does its message
		// decoding, which it tries next.
		_, err := jsonrpc.DecodeMessage(frame)
		return nil, err
	}
	var msgs []jsonrpc.Message
	if frame[0] == '[' {
		for raw := range projection.Elements(frame) {
			msg, err := decodeValid(raw)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, msg)
		}
	}
	if len(msgs) == 0 {
		return nil, errors.New("empty batch")
	}
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	if version >= batchlessVersion {
		return nil, fmt.Errorf("JSON-RPC batching is not supported in %s and later (request version: %s)", batchlessVersion, version)
	}
	c.queue = msgs[1:]
	if err := c.addBatch(msgs); err != nil {
		return nil, err
	}
	for _, msg := range msgs {
		c.expectIfHandshake(msg, false)
		c.noteHandshake(msg, true)
	}
	return msgs[0], nil
}

// msgBatch tracks the requests of one incoming batch until all are
// answered; their responses then go out as one array.
type msgBatch struct {
	unresolved map[jsonrpc.ID]int
	responses  []*jsonrpc.Response
}

// addBatch starts tracking the requests of msgs, as the SDK's connection
// does: every *jsonrpc.Request counts, notifications included (so two
// notifications in one batch are a repeated id there too).
func (c *LeanConn) addBatch(msgs []jsonrpc.Message) error {
	var batch *msgBatch
	for _, msg := range msgs {
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			continue
		}
		if batch == nil {
			batch = &msgBatch{unresolved: make(map[jsonrpc.ID]int)}
		}
		if _, dup := batch.unresolved[req.ID]; dup {
			return fmt.Errorf("duplicate message ID %q", req.ID)
		}
		batch.unresolved[req.ID] = len(batch.responses)
		batch.responses = append(batch.responses, nil)
	}
	if batch == nil {
		return nil
	}
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	for id := range batch.unresolved {
		if _, seen := c.batches[id]; seen {
			return fmt.Errorf("%w: batch contains previously seen request %v", &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}, id.Raw())
		}
	}
	if c.batches == nil {
		c.batches = make(map[jsonrpc.ID]*msgBatch)
	}
	for id := range batch.unresolved {
		c.batches[id] = batch
	}
	return nil
}

// updateBatch records resp if it answers a batched request, reporting
// whether it does and, once the batch is complete, its responses.
func (c *LeanConn) updateBatch(resp *jsonrpc.Response) ([]*jsonrpc.Response, bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	batch, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	batch.responses[batch.unresolved[resp.ID]] = resp
	delete(batch.unresolved, resp.ID)
	delete(c.batches, resp.ID)
	if len(batch.unresolved) > 0 {
		return nil, true
	}
	return batch.responses, true
}

// marshalBatch encodes responses as one array, as the SDK does.
func marshalBatch(responses []*jsonrpc.Response) ([]byte, error) {
	raws := make([]json.RawMessage, len(responses))
	for i, resp := range responses {
		raw, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			return nil, fmt.Errorf("encoding batch message: %w", err)
		}
		raws[i] = raw
	}
	return json.Marshal(raws)
}

// expectHandshake notes an initialize or server/discover call, whose
// response says the negotiated protocol version: read when the call was
// written (the client's side), written when it was read (the server's).
func (c *LeanConn) expectHandshake(id jsonrpc.ID, written bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handshake == nil {
		c.handshake = make(map[jsonrpc.ID]bool)
	}
	c.handshake[id] = written
	c.awaiting.Store(true)
}

// noteHandshake learns the negotiated version from the response to a
// handshake call. A later handshake overrides an earlier one: the SDK
// falls back from server/discover to initialize.
func (c *LeanConn) noteHandshake(msg jsonrpc.Message, read bool) {
	if !c.awaiting.Load() {
		return
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if written, expected := c.handshake[resp.ID]; !expected || written != read {
		return
	}
	delete(c.handshake, resp.ID)
	c.awaiting.Store(len(c.handshake) > 0)
	if v := protocolVersionOf(resp.Result); resp.Error == nil && v != "" {
		c.version = v
	}
}

// protocolVersionOf returns the version a handshake result (valid JSON)
// negotiates, or "": an initialize result's protocolVersion, or the latest
// of a server/discover result's supportedVersions (the SDK goes on with
// discover only when it can speak one of 2026-07-28 or later, and falls
// back to initialize otherwise).
func protocolVersionOf(result json.RawMessage) string {
	if len(result) == 0 || result[0] != '{' {
		return ""
	}
	v := ""
	for key, val := range projection.Members(result) {
		switch {
		case val[0] == '"' && projection.KeyIs(key, "protocolVersion"):
			v = projection.DecodeString(val)
		case val[0] == '[' && projection.KeyIs(key, "supportedVersions"):
			for elem := range projection.Elements(val) {
				if elem[0] == '"' {
					v = max(v, projection.DecodeString(elem))
				}
			}
		}
	}
	return v
}
