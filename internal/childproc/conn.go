package childproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// exitWait bounds how long a connection whose child closed its stdout
// waits for the child's exit status, to say how it ended.
const exitWait = time.Second

// quotedLine bounds the start of a line of stdout an error quotes.
const quotedLine = 120

// conn is the connection to a child, whose failures the child caused say
// so in its terms: a line on stdout that holds no JSON-RPC message is
// quoted as such (a banner or a log line: stdout is the protocol's alone),
// and a child gone before its first message, whether the connection met
// the end of its stdout or the closed pipe of its stdin first, exited
// before answering initialize, with its exit status.
type conn struct {
	*sdkwire.LeanConn
	p    *Process
	read atomic.Bool // a message came
}

// Read reads the next message.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.LeanConn.Read(ctx)
	if err != nil {
		return nil, c.why(err)
	}
	c.read.Store(true)
	return msg, nil
}

// Write writes msg.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	return c.why(c.LeanConn.Write(ctx, msg))
}

// why is err in the child's terms when the child caused it.
func (c *conn) why(err error) error {
	var fe *sdkwire.FrameError
	switch {
	case errors.As(err, &fe):
		return &causeError{err: err, msg: fmt.Sprintf("the server wrote on stdout a line that is not JSON-RPC: %q (%v); stdout carries the protocol alone: make the server log to stderr",
			textcut.Marked(string(fe.Line), quotedLine, "…"), fe.Err)}
	case err != nil && !c.read.Load() && !c.p.closing.Load() && (errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE)):
		return c.exitedEarly(err)
	}
	return err
}

// exitedEarly is err, the end of the child's stdout or stdin before its
// first message, as the child's exit; err itself when the child does not
// exit soon (it closed its stdout and lives on).
func (c *conn) exitedEarly(err error) error {
	select {
	case <-c.p.done:
	case <-time.After(exitWait):
		return err
	}
	exit := "exit status 0"
	if c.p.exitErr != nil {
		exit = c.p.exitErr.Error()
	}
	return &causeError{err: err, msg: fmt.Sprintf("the server exited before answering initialize (%s)", exit)}
}

// causeError is err said as what the child did; errors.Is still finds
// err (io.EOF, the end of the stream).
type causeError struct {
	err error
	msg string
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.err }
