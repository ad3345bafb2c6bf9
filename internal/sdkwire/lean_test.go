package sdkwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// decodeSeeds are messages of every shape, for the fuzz targets and the
// table tests.
var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`,
	`{"id":7,"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":"abc","result":{"x":[1,{"y":"}"}]}}`,
	`{ "jsonrpc" : "2.0" , "id" : 2.0 , "result" : null }`,
	`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}`,
	`{"jsonrpc":"2.0","id":5,"method":"ping","params":null}`,
	`{"jsonrpc":"2.0","id":5,"method":""}`,
	`{"jsonrpc":"2.0","id":5,"method":null}`,
	`{"jsonrpc":"2.0","id":5,"method":"ro\"ots/list"}`,
	`{"jsonrpc":"2.0","id":"a\"b","result":{}}`,
	`{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"nope"}}`,
	`{"jsonrpc":"2.0","\u0069d":9,"result":{}}`,
	`{"jsonrpc":"2.0","id":9,"other":"x","result":{}}`,
	`{"jsonrpc":"2.0","id":9,"result":{},"result":[1, 2]}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":true,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e400,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e-400,"result":{}}`,
	`{"jsonrpc":"2.0","id":-0,"result":{}}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":99999999999999999999,"result":{}}`,
	`{"jsonrpc":"2.0","id":{},"result":{}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xffb\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}",
	`{"jsonrpc":"2.0","id":1,"result":{},"x":1e999}`,
	`{"JSONRPC":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","ID":1,"result":{}}`,
	`{}`,
	`[1]`,
	`null`,
	`"x"`,
	`{"jsonrpc":"2.0",`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`,
}

// connSeeds are streams for FuzzLeanConn and TestLeanConnMatchesSDK.
var connSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","method":"x"}` + "\n",
	`{"jsonrpc":"2.0","id":1,"result":{}}` + "\r\n\r\n  \n" + `{"jsonrpc":"2.0","id":2,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}} ` + "\n",
	`{"jsonrpc":"2.0","id":1,"result":{}}` + "\t",
	`{"jsonrpc":"2.0","id":1,"result":{}}x` + "\n",
	`{"jsonrpc":"2.0","id":1,"result":{}}{"jsonrpc":"2.0","id":2,"result":{}}` + "\n",
	`{"jsonrpc":"2.0","id":1,"result":{}}` + "\r" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n",
	`{"jsonrpc":"2.0",` + "\n" + `"id":1,` + "\r\n" + `"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n",
	"  \t" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n",
	`[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","method":"ping","id":4}]` + "\n",
	`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]` + "\n",
	`[{"jsonrpc":"2.0","method":"p","id":1}]` + "\n" + `[{"jsonrpc":"2.0","method":"p","id":1}]` + "\n",
	`[{"jsonrpc":"2.0","method":"p","id":1},{"jsonrpc":"2.0","method":"q","id":1}]` + "\n",
	"[]\n",
	"null\n",
	"[1,\n",
	`[{"jsonrpc":"1"}]` + "\n",
	"{\n",
	"123\n",
	"123",
	"\v{}\n",
	`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":`,
	"[" + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + "]\n",
}

// describe spells out everything a decoded message carries, nil and empty
// apart.
func describe(m jsonrpc.Message) string {
	raw := func(b json.RawMessage) string {
		if b == nil {
			return "<nil>"
		}
		return fmt.Sprintf("%q", b)
	}
	switch m := m.(type) {
	case nil:
		return "<nil>"
	case *jsonrpc.Request:
		return fmt.Sprintf("request id=%#v method=%q params=%s", m.ID.Raw(), m.Method, raw(m.Params))
	case *jsonrpc.Response:
		return fmt.Sprintf("response id=%#v result=%s error=%#v", m.ID.Raw(), raw(m.Result), m.Error)
	default:
		return fmt.Sprintf("%T", m)
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// FuzzDecodeMessage checks that decodeMessage decodes every input exactly
// as jsonrpc.DecodeMessage does: the same message, or the same error; that
// DecodeValid does too, for every valid input; and that the raw members of
// a decoded message are valid JSON.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := jsonrpc.DecodeMessage(data)
		got, gotErr := decodeMessage(data)
		if errText(gotErr) != errText(wantErr) {
			t.Fatalf("decoding %q: error %q, SDK %q", data, errText(gotErr), errText(wantErr))
		}
		if describe(got) != describe(want) {
			t.Fatalf("decoding %q:\n got %s\nSDK %s", data, describe(got), describe(want))
		}
		if json.Valid(data) {
			got, gotErr := DecodeValid(data)
			if errText(gotErr) != errText(wantErr) || describe(got) != describe(want) {
				t.Fatalf("DecodeValid(%q): %s, error %q; SDK %s, error %q", data, describe(got), errText(gotErr), describe(want), errText(wantErr))
			}
		}
		// What a decoded message carries raw is valid JSON (assumption 12:
		// Table.Received walks results without validating them again).
		var raws []json.RawMessage
		switch m := want.(type) {
		case *jsonrpc.Request:
			raws = append(raws, m.Params)
		case *jsonrpc.Response:
			raws = append(raws, m.Result)
		}
		for _, raw := range raws {
			if raw != nil && !json.Valid(raw) {
				t.Fatalf("decoding %q: the SDK kept invalid JSON %q", data, raw)
			}
		}
	})
}

// readAll reads c until an error, describing each message, then the error.
func readAll(c mcp.Connection) []string {
	var out []string
	for range 64 {
		msg, err := c.Read(context.Background())
		if err != nil {
			return append(out, "error: "+err.Error())
		}
		out = append(out, describe(msg))
	}
	return out
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(b []byte) (int, error) { return len(b), nil }
func (nopWriteCloser) Close() error                { return nil }

// sdkRead reads data through the SDK's connection for stdio.
func sdkRead(t *testing.T, data []byte) []string {
	c, err := (&mcp.IOTransport{Reader: io.NopCloser(bytes.NewReader(data)), Writer: nopWriteCloser{}}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return readAll(c)
}

func leanRead(data []byte) []string {
	return readAll(NewLeanConn(bytes.NewReader(data), io.Discard, 0, func() error { return nil }))
}

// FuzzLeanConn checks that LeanConn reads every stream as the SDK's stdio
// connection does: the same messages in the same order, then the same
// error (io.EOF at the clean end of the stream). Inputs are capped at 512 bytes, one read of the SDK's
// decoder: beyond it, whether the SDK sees the byte after a message (and so
// fails on trailing data) depends on where its reads happen to end.
func FuzzLeanConn(f *testing.F) {
	for _, s := range connSeeds {
		if len(s) <= 512 {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 512 {
			t.Skip()
		}
		want, got := sdkRead(t, data), leanRead(data)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("reading %q (-SDK +lean):\n%s", data, diff)
		}
	})
}

// TestLeanConnMatchesSDK runs the longer seeds too.
func TestLeanConnMatchesSDK(t *testing.T) {
	for _, s := range connSeeds {
		if diff := cmp.Diff(sdkRead(t, []byte(s)), leanRead([]byte(s))); diff != "" {
			t.Errorf("reading %.80q (-SDK +lean):\n%s", s, diff)
		}
	}
}

func TestLeanConn(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":3,"result":{"text":"` + strings.Repeat("x", 100<<10) + `"}}`
	input := "\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		long + "\n" + `{"jsonrpc":"2.0",` + "\n  " + `"id":5,"result":{}}` // spans lines, no final newline
	var written bytes.Buffer
	closed := 0
	c := NewLeanConn(strings.NewReader(input), &written, 0, func() error { closed++; return errors.New("closed") })
	ctx := context.Background()
	var got []string
	for {
		msg, err := c.Read(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		got = append(got, fmt.Sprint(msg.(*jsonrpc.Response).ID.Raw()))
	}
	if diff := cmp.Diff([]string{"1", "3", "5"}, got); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	req := &jsonrpc.Request{Method: "ping"}
	if err := c.Write(ctx, req); err != nil {
		t.Fatal(err)
	}
	if got, want := written.String(), `{"jsonrpc":"2.0","method":"ping"}`+"\n"; got != want {
		t.Errorf("written %q, want %q", got, want)
	}
	if c.SessionID() != "" {
		t.Error("SessionID is not empty")
	}
	if err1, err2 := c.Close(), c.Close(); err1 == nil || err1 != err2 || closed != 1 {
		t.Errorf("Close: %v then %v after %d closes; want the first result twice, one close", err1, err2, closed)
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pw.Close()
	pr.Close()
	if _, err := NewLeanConn(pr, io.Discard, 0, pr.Close).Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("Read of a closed pipe: %v, want io.EOF", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Read(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Read on a cancelled ctx: %v", err)
	}
	if err := c.Write(cancelled, req); !errors.Is(err, context.Canceled) {
		t.Errorf("Write on a cancelled ctx: %v", err)
	}
	if err := c.Write(ctx, &jsonrpc.Request{Method: "x", Params: json.RawMessage(`{`)}); err == nil {
		t.Error("writing an unencodable message succeeded")
	}
}

func TestLeanConnErrors(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		max         int
		want        string
	}{
		{"frame over the limit", strings.Repeat("x", 200) + "\n", 100, "exceeds 100 bytes"},
		{"long frame over the limit", strings.Repeat("x", 70<<10) + "\n", 65 << 10, "exceeds 66560 bytes"},
		{"very long frame over the limit", strings.Repeat("x", 140<<10) + "\n", 65 << 10, "exceeds 66560 bytes"},
		{"value spanning lines over the limit", "{\"a\":\n" + strings.Repeat(" ", 200) + "1}\n", 100, "exceeds 100 bytes"},
		{"bad batch", "[1,\n", 0, "unexpected EOF"},
		{"empty batch", "[]\n", 0, "empty batch"},
		{"bad batch member", `[{"jsonrpc":"1"}]` + "\n", 0, "invalid message version tag"},
		{"bad message", "{\n", 0, "unexpected EOF"},
		{"trailing data", "{} x\n", 0, "invalid trailing data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewLeanConn(strings.NewReader(tc.input), io.Discard, tc.max, func() error { return nil })
			_, err := c.Read(context.Background())
			if !contains(err, tc.want) {
				t.Errorf("Read: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A message of exactly MaxLineLength bytes is read, whatever its line
// end, as IOTransport reads it and as a LineFilter of that length admits
// it (the gateway's stdio session reads through both); one byte more is
// not.
func TestLeanConnReadsLineOfMaxLength(t *testing.T) {
	const maxLine = 512
	for _, end := range []string{"\n", "\r\n"} {
		line := paddedPing("1", maxLine)
		c := NewLeanConn(strings.NewReader(line+end+paddedPing("2", maxLine+1)+end), io.Discard, maxLine, func() error { return nil })
		if msg, err := c.Read(context.Background()); err != nil || msg.(*jsonrpc.Request).Method != "ping" {
			t.Errorf("line end %q: reading a message of %d bytes: %v, %v", end, maxLine, msg, err)
		}
		if _, err := c.Read(context.Background()); !contains(err, "exceeds 512 bytes") {
			t.Errorf("line end %q: reading a message of %d bytes: %v, want it over the limit", end, maxLine+1, err)
		}
		filtered := NewLineFilter(strings.NewReader(line+end), maxLine, func(id json.RawMessage, why *jsonrpc.Error) {
			t.Errorf("line end %q: the filter rejected a message of %d bytes: %v", end, maxLine, why)
		})
		c = NewLeanConn(filtered, io.Discard, maxLine, func() error { return nil })
		if _, err := c.Read(context.Background()); err != nil {
			t.Errorf("line end %q: reading through a LineFilter: %v", end, err)
		}
	}
}

// enteredWriter tells entered of each Write before it writes.
type enteredWriter struct {
	*os.File
	entered chan struct{}
}

func (w enteredWriter) Write(p []byte) (int, error) {
	w.entered <- struct{}{}
	return w.File.Write(p)
}

// A Write held up by a peer that does not read (a child's stdin: a pipe
// whose buffer the frame overflows) returns when its context ends, as the
// SDK expects of a connection (a call's deadline, the 5 s bound of a
// notifications/cancelled); the frame it left still reaches the peer
// whole, before the next one.
func TestLeanConnWriteEndsWithContext(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	entered := make(chan struct{}, 3)
	c := NewLeanConn(strings.NewReader(""), enteredWriter{pw, entered}, 0, pw.Close)
	defer c.Close()
	ctx, cancel := context.WithCancel(t.Context())
	first := `{"jsonrpc":"2.0","method":"first","params":"` + strings.Repeat("x", 1<<20) + `"}`
	done := make(chan error, 1)
	go func() {
		done <- c.Write(ctx, &jsonrpc.Request{Method: "first", Params: json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`)})
	}()
	awaitSignal(t, entered, "the first Write")
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Write whose context ended: %v, want context.Canceled", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Write still blocked after its context ended")
	}
	go func() { done <- c.Write(t.Context(), &jsonrpc.Request{Method: "second"}) }()
	lines := bufio.NewReaderSize(pr, 2<<20)
	for _, want := range []string{first, `{"jsonrpc":"2.0","method":"second"}`} {
		if line, err := lines.ReadString('\n'); err != nil || line != want+"\n" {
			t.Errorf("read %.80q…, %v; want %.80s…", line, err, want)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("second Write: %v", err)
	}
}

// The buffer a large frame grew is not kept between writes: a result of
// megabytes written once stayed allocated for the connection's life.
func TestLeanConnWriteBufferNotKept(t *testing.T) {
	c := NewLeanConn(strings.NewReader(""), io.Discard, 0, func() error { return nil })
	big := &jsonrpc.Response{Result: json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`)}
	big.ID, _ = jsonrpc.MakeID(float64(1))
	for _, ctx := range []context.Context{context.Background(), t.Context()} { // both ways of writing
		if err := c.Write(ctx, big); err != nil {
			t.Fatal(err)
		}
		if n := cap(c.wbuf); n > maxKeptWriteBuffer {
			t.Errorf("after a frame of 1 MiB, a write buffer of %d bytes is kept", n)
		}
	}
}

// A read error that quotes the peer (the SDK's "invalid message version
// tag", with the peer's tag in it) is cut: it ends the session, and its
// text is the error the connection was lost with.
func TestLeanConnReadErrorCut(t *testing.T) {
	line := `{"jsonrpc":"` + strings.Repeat("x", 1<<20) + `","id":1,"result":{}}` + "\n"
	_, err := NewLeanConn(strings.NewReader(line), io.Discard, 0, func() error { return nil }).Read(context.Background())
	if !contains(err, "invalid message version tag") || len(err.Error()) > textcut.PeerText {
		t.Errorf("Read: an error of %d bytes (%.80v), want the SDK's within %d", len(err.Error()), err, textcut.PeerText)
	}
}

// leanSession drives a LeanConn as a client session would: it writes the
// handshake call and reads the server's lines.
func leanSession(t *testing.T, server string, handshake *jsonrpc.Request) (*LeanConn, *bytes.Buffer) {
	t.Helper()
	var written bytes.Buffer
	c := NewLeanConn(strings.NewReader(server), &written, 0, func() error { return nil })
	if handshake != nil {
		if err := c.Write(context.Background(), handshake); err != nil {
			t.Fatal(err)
		}
	}
	return c, &written
}

// Batches are refused once the handshake negotiated 2025-06-18 or later
// (both handshakes), with the SDK's server-side wording.
func TestLeanConnBatchVersion(t *testing.T) {
	id1, _ := jsonrpc.MakeID(float64(1))
	batch := `[{"jsonrpc":"2.0","method":"notifications/x"}]` + "\n"
	for _, tc := range []struct {
		name, result string
		handshake    string
		wantErr      string
	}{
		{"no handshake", "", "", ""},
		{"initialize 2025-03-26", `{"protocolVersion":"2025-03-26","capabilities":{}}`, "initialize", ""},
		{"initialize 2024-11-05", `{"protocolVersion":"2024-11-05"}`, "initialize", ""},
		{"initialize 2025-06-18", `{"protocolVersion":"2025-06-18"}`, "initialize", "not supported in 2025-06-18 and later (request version: 2025-06-18)"},
		{"initialize 2025-11-25", `{"capabilities":{},"protocolVersion":"2025-11-25"}`, "initialize", "request version: 2025-11-25"},
		{"discover 2026-07-28", `{"supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{}}`, "server/discover", "request version: 2026-07-28"},
		{"escaped key", `{"protocol\u0056ersion":"2025-11-25"}`, "initialize", "request version: 2025-11-25"},
		{"another call", `{"protocolVersion":"2025-11-25"}`, "tools/list", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := ""
			var hs *jsonrpc.Request
			if tc.handshake != "" {
				hs = &jsonrpc.Request{ID: id1, Method: tc.handshake}
				server = `{"jsonrpc":"2.0","id":1,"result":` + tc.result + "}\n"
			}
			c, _ := leanSession(t, server+batch, hs)
			if tc.handshake != "" {
				if _, err := c.Read(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			_, err := c.Read(context.Background())
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && !contains(err, tc.wantErr) {
				t.Errorf("reading a batch: %v, want %q", err, tc.wantErr)
			}
		})
	}
	// An error response says nothing about the version.
	c, _ := leanSession(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`+"\n"+batch, &jsonrpc.Request{ID: id1, Method: "server/discover"})
	for range 2 {
		if _, err := c.Read(context.Background()); err != nil {
			t.Errorf("after a failed discover: %v", err)
		}
	}
}

// The responses to a batch of requests go out as one array once all are
// written, as the SDK's connection sends them.
func TestLeanConnBatchResponses(t *testing.T) {
	in := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"b","method":"ping"}]` + "\n"
	ctx := context.Background()
	c, written := leanSession(t, in, nil)
	var reqs []*jsonrpc.Request
	for range 3 {
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, msg.(*jsonrpc.Request))
	}
	for _, i := range []int{2, 0} {
		if err := c.Write(ctx, &jsonrpc.Response{ID: reqs[i].ID, Result: json.RawMessage(`{"<":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if written.Len() != 0 {
		t.Fatalf("wrote %q before the batch was complete", written)
	}
	// The notification counts as a request of the batch, as in the SDK.
	if err := c.Write(ctx, &jsonrpc.Response{ID: reqs[1].ID, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	want := `[{"jsonrpc":"2.0","id":1,"result":{"\u003c":1}},{"jsonrpc":"2.0","result":{}},{"jsonrpc":"2.0","id":"b","result":{"\u003c":1}}]` + "\n"
	if got := written.String(); got != want {
		t.Errorf("wrote\n%s\nwant\n%s", got, want)
	}
	// Unbatched responses go out alone.
	written.Reset()
	if err := c.Write(ctx, &jsonrpc.Response{ID: reqs[0].ID, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if got := written.String(); got != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Errorf("wrote %q", got)
	}
}

// Over a real session, LeanConn learns the version the SDK negotiated,
// through either handshake.
func TestLeanConnLearnsVersion(t *testing.T) {
	for _, pinned := range []string{"", "2025-11-25", "2025-03-26"} {
		t.Run("pinned "+pinned, func(t *testing.T) {
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			ss, err := newServer(nil).Connect(context.Background(), &mcp.IOTransport{Reader: sr, Writer: sw}, nil)
			if err != nil {
				t.Fatal(err)
			}
			lean := NewLeanConn(cr, cw, 0, func() error { cr.Close(); return cw.Close() })
			cs, err := newClient(nil).Connect(context.Background(), &connTransport{lean}, &mcp.ClientSessionOptions{ProtocolVersion: pinned})
			if err != nil {
				t.Fatal(err)
			}
			negotiated := cs.InitializeResult().ProtocolVersion
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err != nil {
				t.Fatal(err)
			}
			cs.Close()
			ss.Close()
			lean.mu.Lock()
			defer lean.mu.Unlock()
			if lean.version != negotiated {
				t.Errorf("LeanConn learned %q, the session negotiated %q", lean.version, negotiated)
			}
		})
	}
}

// connTransport hands out one connection.
type connTransport struct{ c mcp.Connection }

func (t *connTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

func BenchmarkRead(b *testing.B) {
	for _, size := range []int{100, 10_000} {
		line := `{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", size) + `"}],"isError":false}}` + "\n"
		in := strings.Repeat(line, 1000)
		for _, conn := range []string{"lean", "sdk"} {
			b.Run(fmt.Sprintf("%s/%dB", conn, size), func(b *testing.B) {
				b.SetBytes(int64(len(line)))
				b.ReportAllocs()
				ctx := context.Background()
				for i := 0; i < b.N; i += 1000 {
					var c mcp.Connection
					if conn == "lean" {
						c = NewLeanConn(strings.NewReader(in), io.Discard, 0, func() error { return nil })
					} else {
						c, _ = (&mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(in)), Writer: nopWriteCloser{}}).Connect(ctx)
					}
					for range min(1000, b.N-i) {
						if _, err := c.Read(ctx); err != nil {
							b.Fatal(err)
						}
					}
					c.Close()
				}
			})
		}
	}
}
