package sdkwire

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
func captureFixture(t *testing.T, mode Mode, limit int64) (*Table, *Slot) {
	t.Helper()
	table := NewTable(limit)
	slot := NewSlot(mode)
	id, _ := jsonrpc.MakeID(float64(7))
	table.Sent(WithSlot(context.Background(), slot), &jsonrpc.Request{ID: id, Method: "tools/call"})
	return table, slot
}

func readString(t *testing.T, r io.Reader) string {
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
			want: "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":1000003,\"message\":\"mcpbridge: result captured beneath the SDK\"}}\n\n", captured: `{"content":[{"type":"video"}]}`,
		},
		{
			name: "multi-line data and CRLF",
			in:   "data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":7,\"result\":{\"content\":[1]}}\r\n\r\n",
			want: "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":1000003,\"message\":\"mcpbridge: result captured beneath the SDK\"}}\n\n", captured: `{"content":[1]}`,
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
			table, slot := captureFixture(t, CapturedCall, 0)
			got := readString(t, newSSEFilter(io.NopCloser(strings.NewReader(tc.in)), table, 1<<20, nil))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stream (-want +got):\n%.2000s", diff)
			}
			raw, ok := slot.Result()
			if ok != (tc.captured != "") || string(raw) != tc.captured {
				t.Errorf("captured %q (%v), want %q", raw, ok, tc.captured)
			}
		})
	}
}

// An event larger than the limit ends the stream with an error instead of
// being buffered whole.
func TestSSEFilterLimit(t *testing.T) {
	table, _ := captureFixture(t, CapturedCall, 0)
	in := "data: " + strings.Repeat("z", 10000) + "\n\n"
	_, err := io.ReadAll(newSSEFilter(io.NopCloser(strings.NewReader(in)), table, 1000, nil))
	if !contains(err, "exceeds the frame limit of 1000 bytes") {
		t.Errorf("err = %v", err)
	}
}

// Responses without a waiting slot, errors and forgotten slots leave the
// message alone.
func TestTable(t *testing.T) {
	table, slot := captureFixture(t, CapturedCall, 0)
	id7, _ := jsonrpc.MakeID(float64(7))
	id9, _ := jsonrpc.MakeID(float64(9))
	if table.Received(&jsonrpc.Request{Method: "notifications/x"}) {
		t.Error("a notification was rewritten")
	}
	// The peer's requests and notifications go to their hooks, as written.
	var seen []string
	table.OnNotification(func(m string, p json.RawMessage) { seen = append(seen, "notification "+m+" "+string(p)) })
	table.OnRequest(func(m string, p json.RawMessage) { seen = append(seen, "request "+m+" "+string(p)) })
	table.Received(&jsonrpc.Request{ID: id9, Method: "elicitation/create", Params: json.RawMessage(`{"z":1,"a":2}`)})
	table.Received(&jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{}`)})
	if got := strings.Join(seen, "; "); got != `request elicitation/create {"z":1,"a":2}; notification notifications/message {}` {
		t.Errorf("hooks saw %s", got)
	}
	if table.Received(&jsonrpc.Response{ID: id9, Result: json.RawMessage(`{}`)}) {
		t.Error("an uncaptured response was rewritten")
	}
	if table.Received(&jsonrpc.Response{ID: id7, Error: errors.New("boom")}) {
		t.Error("an error response was rewritten")
	}
	if _, ok := slot.Result(); ok {
		t.Error("an error response filled the slot")
	}
	table2, slot2 := captureFixture(t, CapturedCall, 0)
	table2.Forget(slot2)
	if table2.Received(&jsonrpc.Response{ID: id7, Result: json.RawMessage(`{"content":[]}`)}) {
		t.Error("a forgotten slot still captured")
	}
	// Without a slot in the context, nothing is recorded.
	table.Sent(context.Background(), &jsonrpc.Request{ID: id9, Method: "tools/call"})
	if len(table.pending) != 0 {
		t.Errorf("pending = %v", table.pending)
	}
}

// Each mode hands the SDK its own view of the result.
func TestTableModes(t *testing.T) {
	id7, _ := jsonrpc.MakeID(float64(7))
	page := `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c"}`
	for _, tc := range []struct {
		name    string
		mode    Mode
		limit   int64
		result  string
		changed bool
		sdk     string
		refused string
	}{
		{"pass", PassResult, 0, `{"content":[1]}`, false, `{"content":[1]}`, ""},
		{"captured call", CapturedCall, 0, `{"content":[1]}`, true, "captured", ""},
		{"over the limit", CapturedCall, 5, `{"content":[1]}`, true, "captured", "the tools/call result of 15 bytes exceeds the bridge's limit of 5 bytes"},
		{"header tools page", HeaderToolsPage, 0, page, true, `{"tools":[],"nextCursor":"c"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table, slot := captureFixture(t, tc.mode, tc.limit)
			resp := &jsonrpc.Response{ID: id7, Result: json.RawMessage(tc.result)}
			if got := table.Received(resp); got != tc.changed {
				t.Errorf("changed = %v", got)
			}
			sees := string(resp.Result)
			if Captured(resp.Error) && resp.Result == nil {
				sees = "captured"
			}
			if sees != tc.sdk {
				t.Errorf("the SDK sees %s (error %v), want %s", resp.Result, resp.Error, tc.sdk)
			}
			raw, ok := slot.Result()
			if err := slot.Refused(); tc.refused != "" {
				if !contains(err, tc.refused) || ok {
					t.Errorf("refused: %v (captured %v)", err, ok)
				}
				return
			}
			if !ok || string(raw) != tc.result {
				t.Errorf("captured %s (%v)", raw, ok)
			}
		})
	}
}

func TestHeaderToolsPage(t *testing.T) {
	hdr := `{"name":"h","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}}`
	esc := `{"name":"e","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-\u0068eader":"R"}}}}`
	plain := `{"name":"p","inputSchema":{"type":"object"}}`
	for _, tc := range []struct {
		name, in, want string
		changed        bool
	}{
		{"no candidates", `{"tools":[` + plain + `,` + plain + `],"nextCursor":"n","ttlMs":5,"_meta":{"k":1}}`, `{"tools":[],"nextCursor":"n","ttlMs":5,"_meta":{"k":1}}`, true},
		{"candidates kept in order", `{"ttlMs":0, "tools" : [` + hdr + `, ` + plain + `,` + esc + `] }`, `{"ttlMs":0, "tools" : [` + hdr + `,` + esc + `] }`, true},
		{"escaped tools key", `{"\u0074ools":[` + plain + `]}`, `{"\u0074ools":[]}`, true},
		{"empty tools", `{"tools":[]}`, `{"tools":[]}`, true},
		{"no tools", `{"nextCursor":"x"}`, `{"nextCursor":"x"}`, false},
		{"tools not an array", `{"tools":null}`, `{"tools":null}`, false},
		{"not an object", `[1]`, `[1]`, false},
		{"invalid", `{"tools":[`, `{"tools":[`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := headerToolsPage([]byte(tc.in))
			if string(got) != tc.want || changed != tc.changed {
				t.Errorf("got %s (%v), want %s (%v)", got, changed, tc.want, tc.changed)
			}
		})
	}
}

func TestHeaderCandidate(t *testing.T) {
	for in, want := range map[string]bool{
		`{"properties":{"r":{"x-mcp-header":"R"}}}`: true,
		`{"description":"caf\u00e9"}`:               true, // might be an escaped key: loose on purpose
		`{"type":"object","properties":{}}`:         false,
		`{"description":"x-mcp-head"}`:              false,
	} {
		if got := HeaderCandidate([]byte(in)); got != want {
			t.Errorf("HeaderCandidate(%s) = %v", in, got)
		}
	}
}
