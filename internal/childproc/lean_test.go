package childproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestDecodeLean checks the experimental decoder against the SDK's on every
// shape: the same message, or an error where the SDK gives one.
func TestDecodeLean(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`,
		`{"id":7,"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":"abc","result":{"x":[1,{"y":"}"}]}}`,
		`{ "jsonrpc" : "2.0" , "id" : 2.0 , "result" : null }`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":5,"method":"ro\"ots/list"}`,
		`{"jsonrpc":"2.0","id":"a\"b","result":{}}`,
		`{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"nope"}}`,
		`{"jsonrpc":"2.0","\u0069d":9,"result":{}}`,
		`{"jsonrpc":"2.0","id":9,"other":"x","result":{}}`,
		`{"jsonrpc":"1.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`{"jsonrpc":"2.0","id":true,"result":{}}`,
		`{"jsonrpc":"2.0","id":1e400,"result":{}}`,
		`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
		`[1]`,
		`{"jsonrpc":"2.0",`,
	} {
		t.Run(line, func(t *testing.T) {
			want, wantErr := jsonrpc.DecodeMessage([]byte(line))
			got, gotErr := decodeLean([]byte(line))
			if (wantErr != nil) != (gotErr != nil) {
				t.Fatalf("decodeLean error %v, SDK error %v", gotErr, wantErr)
			}
			if wantErr != nil {
				return
			}
			if diff := cmp.Diff(encode(t, want), encode(t, got)); diff != "" {
				t.Errorf("(-SDK +lean):\n%s", diff)
			}
		})
	}
}

func encode(t *testing.T, m jsonrpc.Message) string {
	t.Helper()
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLeanConn(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":3,"result":{"text":"` + strings.Repeat("x", 100<<10) + `"}}`
	input := "\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		`[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","method":"ping","id":4}]` + "\n" +
		long + "\n" + `{"jsonrpc":"2.0","id":5,"result":{}}` // no final newline
	var written bytes.Buffer
	closed := 0
	c := newLeanConn(strings.NewReader(input), &written, 0, func() error { closed++; return errors.New("closed") })
	ctx := context.Background()
	var ids []string
	for {
		msg, err := c.Read(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			ids = append(ids, "resp "+string(mustJSON(t, m.ID.Raw())))
		case *jsonrpc.Request:
			ids = append(ids, m.Method+" "+string(mustJSON(t, m.ID.Raw())))
		}
	}
	if diff := cmp.Diff([]string{"resp 1", "resp 2", "ping 4", "resp 3", "resp 5"}, ids); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
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
	if _, err := newLeanConn(pr, io.Discard, 0, pr.Close).Read(ctx); !errors.Is(err, io.EOF) {
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
		{"bad batch", "[1,\n", 0, "decoding a JSON-RPC batch"},
		{"empty batch", "[]\n", 0, "empty JSON-RPC batch"},
		{"bad batch member", `[{"jsonrpc":"1"}]` + "\n", 0, "invalid message version tag"},
		{"bad message", "{\n", 0, "unmarshaling jsonrpc message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newLeanConn(strings.NewReader(tc.input), io.Discard, tc.max, func() error { return nil })
			_, err := c.Read(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMembers(t *testing.T) {
	obj := []byte(`{ "a" : [1, {"b": "]}"}] , "c":"x\"y", "d": -1.5e3 ,"e":{} }`)
	var got []string
	for k, v := range members(obj) {
		got = append(got, string(k)+"="+string(v))
		if string(k) == `"d"` {
			break
		}
	}
	want := []string{`"a"=[1, {"b": "]}"}]`, `"c"="x\"y"`, `"d"=-1.5e3`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Truncated values end at the end of the input.
	for _, in := range []string{`"abc`, `{"a":[1`, `123`} {
		if end := skipValue([]byte(in), 0); end != len(in) {
			t.Errorf("skipValue(%q) = %d, want %d", in, end, len(in))
		}
	}
}
