package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// captureFixture is a table with one outstanding captured tools/call (id 7).
func captureFixture(t *testing.T) (*captureTable, *captureSlot) {
	t.Helper()
	table := newCaptureTable(0)
	slot := &captureSlot{replace: true}
	id, _ := jsonrpc.MakeID(float64(7))
	table.sent(withCapture(context.Background(), slot), &jsonrpc.Request{ID: id, Method: "tools/call"})
	return table, slot
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	return string(b)
}

// The SSE filter hands captured results to the slot, passes everything
// else through byte for byte, and copes with CRLF, multi-line data and
// lines longer than its buffer.
func TestSSEFilter(t *testing.T) {
	long := strings.Repeat("y", 100<<10)
	tests := []struct {
		name, in, want, captured string
	}{
		{
			name: "captured response",
			in:   "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"video\"}]}}\n\n",
			want: "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n", captured: `{"content":[{"type":"video"}]}`,
		},
		{
			name: "multi-line data and CRLF",
			in:   "data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":7,\"result\":{\"content\":[1]}}\r\n\r\n",
			want: "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n", captured: `{"content":[1]}`,
		},
		{
			name: "other messages pass through",
			in:   "retry: 500\n\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n: comment\n\n",
			want: "retry: 500\n\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n: comment\n\n",
		},
		{
			name: "long line",
			in:   "data: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"x\":\"" + long + "\"}}\n\n",
			want: "data: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"x\":\"" + long + "\"}}\n\n",
		},
		{
			name: "unterminated event",
			in:   "data: partial",
			want: "data: partial",
		},
		{
			name: "not JSON",
			in:   "data: hello\n\n",
			want: "data: hello\n\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table, slot := captureFixture(t)
			got := readAll(t, newSSEFilter(io.NopCloser(strings.NewReader(tc.in)), table, 1<<20))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stream (-want +got):\n%.2000s", diff)
			}
			raw, ok := slot.result()
			if ok != (tc.captured != "") || string(raw) != tc.captured {
				t.Errorf("captured %q (%v), want %q", raw, ok, tc.captured)
			}
		})
	}
}

// Responses without a waiting slot, errors and forgotten slots leave the
// message alone.
func TestCaptureTable(t *testing.T) {
	table, slot := captureFixture(t)
	id7, _ := jsonrpc.MakeID(float64(7))
	id9, _ := jsonrpc.MakeID(float64(9))
	if table.received(&jsonrpc.Request{Method: "notifications/x"}) {
		t.Error("a notification was rewritten")
	}
	if table.received(&jsonrpc.Response{ID: id9, Result: json.RawMessage(`{}`)}) {
		t.Error("an uncaptured response was rewritten")
	}
	if table.received(&jsonrpc.Response{ID: id7, Error: errors.New("boom")}) {
		t.Error("an error response was rewritten")
	}
	if _, ok := slot.result(); ok {
		t.Error("an error response filled the slot")
	}
	table2, slot2 := captureFixture(t)
	table2.forget(slot2)
	if table2.received(&jsonrpc.Response{ID: id7, Result: json.RawMessage(`{"content":[]}`)}) {
		t.Error("a forgotten slot still captured")
	}
	// Without a slot in the context, nothing is recorded.
	table.sent(context.Background(), &jsonrpc.Request{ID: id9, Method: "tools/call"})
	if len(table.pending) != 0 {
		t.Errorf("pending = %v", table.pending)
	}
}

// An event larger than the limit ends the stream with an error instead of
// being buffered whole.
func TestSSEFilterLimit(t *testing.T) {
	table, _ := captureFixture(t)
	in := "data: " + strings.Repeat("z", 10000) + "\n\n"
	_, err := io.ReadAll(newSSEFilter(io.NopCloser(strings.NewReader(in)), table, 1000))
	if err == nil || !strings.Contains(err.Error(), "exceeds 1000 bytes") {
		t.Errorf("err = %v", err)
	}
}
