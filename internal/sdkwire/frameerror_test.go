package sdkwire

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// A line that holds no JSON-RPC message fails the read with the SDK's
// text, and the line's start, bounded, for the reader to quote.
func TestFrameErrorKeepsTheLine(t *testing.T) {
	long := strings.Repeat("x", 2*MaxFrameErrorLine)
	for in, line := range map[string]string{
		"hello from echoer\r\n":              "hello from echoer",
		"1 server up\n":                      "1 server up",
		`{"level":"info","msg":"up"}` + "\n": `{"level":"info","msg":"up"}`,
		long + "\n":                          long[:MaxFrameErrorLine],
	} {
		_, err := NewLeanConn(strings.NewReader(in), io.Discard, 0, func() error { return nil }).Read(context.Background())
		var fe *FrameError
		if !errors.As(err, &fe) || string(fe.Line) != line {
			t.Errorf("reading %.40q: %v, want a FrameError of %.40q", in, err, line)
		}
	}
}
