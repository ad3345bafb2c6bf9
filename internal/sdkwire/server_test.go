package sdkwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

func TestRawResult(t *testing.T) {
	const content = `[{"type":"video","b":2,"a":"<&>"}]`
	res := RawResult(nil, true, json.RawMessage(content), nil)
	res.SetMeta(mcp.Meta{"k": "v"}) // what the SDK does on newer protocols
	if got := res.(*rawCallResult).GetMeta()["k"]; got != "v" {
		t.Errorf("_meta set on the raw result did not reach the embedded one: %v", got)
	}
	b, err := serverwire.MarshalUnescaped(res) // as the SDK marshals results
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"k":"v"},"content":` + content + `,"isError":true,"resultType":"complete"}`
	if string(b) != want {
		t.Errorf("marshaled\n %s\nwant\n %s", b, want)
	}
	b, err = serverwire.MarshalUnescaped(RawResult(nil, false, json.RawMessage(`[]`), json.RawMessage(`{"n":1.50}`)))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[],"resultType":"complete","structuredContent":{"n":1.50}}`; string(b) != want {
		t.Errorf("marshaled\n %s\nwant\n %s", b, want)
	}
}

func TestLineFilter(t *testing.T) {
	type rejection struct {
		ID   string
		Code int64
		Msg  string
	}
	msg := `{"jsonrpc":"2.0","method":"a"}`
	head := `{"jsonrpc":"2.0","method":"`
	exact := head + strings.Repeat("a", 80-len(head)-2) + `"}` // 80 bytes
	tests := []struct {
		name, in string
		passed   string
		rejected []rejection
	}{
		{"messages pass, trimmed, blank lines skipped", msg + "\n  \n\t" + `{"jsonrpc":"2.0","id":1,"result":{}}` + " \r\n",
			msg + "\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", nil},
		{"last line without newline", msg, msg + "\n", nil},
		{"batch", "[" + msg + "," + msg + "]\n", "[" + msg + "," + msg + "]\n", nil},
		{"invalid JSON", "{oops\n" + msg, msg + "\n", []rejection{{"", jsonrpc.CodeParseError, "Parse error: the message is not valid JSON"}}},
		{"two values", "{} {}\n", "", []rejection{{"", jsonrpc.CodeParseError, "Parse error: the message is not valid JSON"}}},
		{"empty batch", "[]\n", "", []rejection{{"", jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch"}}},
		{"bad batch member keeps its id, the rest pass", "[" + msg + `,{"id":"x"}]` + "\n", "[" + msg + "]\n",
			[]rejection{{`"x"`, jsonrpc.CodeInvalidRequest, "Invalid Request: *"}}},
		{"not an object", "7\n", "", []rejection{{"", jsonrpc.CodeInvalidRequest, "Invalid Request: *"}}},
		{"too long, spanning chunks", strings.Repeat("x", 90) + "\n" + msg + "\n", msg + "\n",
			[]rejection{{"", jsonrpc.CodeInvalidRequest, "Invalid Request: message longer than 80 bytes"}}},
		{"exactly the limit", exact + "\n", exact + "\n", nil},
		{"an id answered under another is refused", `{"jsonrpc":"2.0","id":1.5,"method":"a"}` + "\n" + `{"jsonrpc":"2.0","id":18446744073709551617,"method":"a"}` + "\n", "",
			[]rejection{{"1.5", jsonrpc.CodeInvalidRequest, "Invalid Request: id 1.5 cannot be answered exactly; an id is a string or an integer from -2^53 to 2^53"},
				{"18446744073709551617", jsonrpc.CodeInvalidRequest, "Invalid Request: id 18446744073709551617 cannot be answered exactly; an id is a string or an integer from -2^53 to 2^53"}}},
		{"a batch loses only its inexact member", "[" + msg + `,{"jsonrpc":"2.0","id":1e2,"method":"a"}]` + "\n", "[" + msg + "]\n",
			[]rejection{{"1e2", jsonrpc.CodeInvalidRequest, "Invalid Request: id 1e2 cannot be answered exactly; an id is a string or an integer from -2^53 to 2^53"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []rejection
			// A tiny bufio buffer exercises lines longer than one chunk.
			f := NewLineFilter(bufio.NewReaderSize(strings.NewReader(tt.in), 16), 80, func(id json.RawMessage, why *jsonrpc.Error) {
				got = append(got, rejection{string(id), why.Code, why.Message})
			})
			passed, err := io.ReadAll(smallReads{f})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.passed, string(passed)); diff != "" {
				t.Errorf("passed to the SDK (-want +got):\n%s", diff)
			}
			for i := range min(len(got), len(tt.rejected)) {
				// "*": the rest is jsonrpc.DecodeMessage's error.
				if prefix, ok := strings.CutSuffix(tt.rejected[i].Msg, "*"); ok && strings.HasPrefix(got[i].Msg, prefix) && len(got[i].Msg) > len(prefix) {
					got[i].Msg = tt.rejected[i].Msg
				}
			}
			if diff := cmp.Diff(tt.rejected, got); diff != "" {
				t.Errorf("rejected (-want +got):\n%s", diff)
			}
		})
	}

	// Any reader: wrapped in a bufio.Reader; the source's error comes after
	// the last line.
	boom := errors.New("boom")
	f := NewLineFilter(io.MultiReader(strings.NewReader(msg+"\n"), iotestErr{boom}), 80, nil)
	passed, err := io.ReadAll(f)
	if string(passed) != msg+"\n" || !errors.Is(err, boom) {
		t.Errorf("read %q, %v; want the line, then the source's error", passed, err)
	}
}

// A batch over MaxBatch is refused without being taken apart: a line of
// a client's small elements ("[0,0,…]") cost a slice and a copy per
// element, some twenty times the line in memory.
func TestLineFilterLongBatchNotDecoded(t *testing.T) {
	line := "[" + strings.Repeat("0,", 100*MaxBatch) + "0]\n"
	var why *jsonrpc.Error
	allocs := testing.AllocsPerRun(3, func() {
		f := NewLineFilter(strings.NewReader(line), len(line), func(_ json.RawMessage, e *jsonrpc.Error) { why = e })
		if n, err := f.Read(make([]byte, 64)); n != 0 || err != io.EOF {
			t.Fatalf("Read = %d, %v; want the batch held back, then EOF", n, err)
		}
	})
	if want := batchTooLong(100*MaxBatch + 1); why == nil || why.Code != want.Code || why.Message != want.Message {
		t.Errorf("rejected with %v, want %v", why, want)
	}
	if allocs > 100 {
		t.Errorf("refusing a batch of %d elements took %.0f allocations, want a few", 100*MaxBatch+1, allocs)
	}
}

// smallReads reads through a small buffer, as the SDK's decoder may.
type smallReads struct{ r io.Reader }

func (s smallReads) Read(p []byte) (int, error) {
	return s.r.Read(p[:min(len(p), 7)])
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

// writeCloser records writes and whether it was closed.
type writeCloser struct {
	bytes.Buffer
	closed bool
}

func (w *writeCloser) Close() error { w.closed = true; return nil }

func TestLockedWriter(t *testing.T) {
	var out writeCloser
	w := NewLockedWriter(&out)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				w.Write([]byte(strings.Repeat(string(rune('a'+i)), 20) + "\n"))
			}
		})
	}
	wg.Wait()
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if len(line) != 20 || strings.Count(line, line[:1]) != 20 {
			t.Fatalf("interleaved write: %q", line)
		}
	}
	if err := w.Close(); err != nil || !out.closed {
		t.Errorf("Close = %v, closed %v", err, out.closed)
	}
}

// stubConn is a connection that reads the messages queued in it and
// records what is written.
type stubConn struct {
	in      []jsonrpc.Message
	written []jsonrpc.Message
	closed  bool
}

func (c *stubConn) Read(context.Context) (jsonrpc.Message, error) {
	if len(c.in) == 0 {
		return nil, io.EOF
	}
	msg := c.in[0]
	c.in = c.in[1:]
	return msg, nil
}

func (c *stubConn) Write(_ context.Context, msg jsonrpc.Message) error {
	c.written = append(c.written, msg)
	return nil
}

func (c *stubConn) Close() error      { c.closed = true; return nil }
func (c *stubConn) SessionID() string { return "" }

type stubTransport struct {
	conn mcp.Connection
	err  error
}

func (t stubTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, t.err }

type versionTransport struct {
	stubTransport
	only string
}

func (v versionTransport) SupportsProtocolVersion(version string) bool { return version == v.only }

func TestCountingTransport(t *testing.T) {
	id := func(v any) jsonrpc.ID {
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	call := func(n int64, method string) *jsonrpc.Request {
		return &jsonrpc.Request{ID: id(float64(n)), Method: method}
	}
	stub := &stubConn{in: []jsonrpc.Message{
		call(1, "tools/call"),
		call(1, "tools/call"),                  // a duplicate id counts once
		call(2, "tools/list"),                  // another method
		&jsonrpc.Request{Method: "tools/call"}, // a notification
		call(3, "tools/call"),
		call(4, "tools/call"),
	}}
	var count, changes int
	tr := &CountingTransport{Transport: stubTransport{conn: stub}, Method: "tools/call", Count: func(d int) { count += d; changes++ }}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		if _, err := conn.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if count != 3 {
		t.Fatalf("count %d after reading calls 1, 3 and 4, want 3", count)
	}
	conn.Write(context.Background(), &jsonrpc.Response{ID: id(float64(2))})
	conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/progress"})
	conn.Write(context.Background(), &jsonrpc.Response{ID: id(float64(1))})
	conn.Write(context.Background(), &jsonrpc.Response{ID: id(float64(1))}) // answered already
	if count != 2 {
		t.Errorf("count %d after answering call 1, want 2", count)
	}
	conn.Close()
	if count != 0 || !stub.closed {
		t.Errorf("count %d after Close (closed %v), want 0", count, stub.closed)
	}
	stub.in = []jsonrpc.Message{call(5, "tools/call")}
	conn.Read(context.Background())
	if count != 0 || changes != 6 {
		t.Errorf("a call read after Close: count %d after %d changes, want 0 after 6", count, changes)
	}

	// Without Count, nothing is counted; a failed Connect fails.
	quiet := &CountingTransport{Transport: stubTransport{conn: &stubConn{in: []jsonrpc.Message{call(1, "tools/call")}}}, Method: "tools/call"}
	conn, _ = quiet.Connect(context.Background())
	conn.Read(context.Background())
	conn.Write(context.Background(), &jsonrpc.Response{ID: id(float64(1))})
	conn.Close()
	if _, err := (&CountingTransport{Transport: stubTransport{err: io.ErrClosedPipe}}).Connect(context.Background()); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("Connect = %v, want the wrapped transport's error", err)
	}

	plain := &CountingTransport{Transport: stubTransport{}}
	versioned := &CountingTransport{Transport: versionTransport{only: "2025-11-25"}}
	got := []bool{
		plain.SupportsProtocolVersion("2025-11-25"),
		versioned.SupportsProtocolVersion("2025-11-25"),
		versioned.SupportsProtocolVersion("2026-07-28"),
	}
	if diff := cmp.Diff([]bool{true, true, false}, got); diff != "" {
		t.Errorf("SupportsProtocolVersion (-want +got):\n%s", diff)
	}
}
