package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

func TestMain(m *testing.M) {
	mcppeer.RunIfChild()
	goleak.VerifyTestMain(m)
}

// waitLimit bounds every wait for an event; it only decides how long a
// broken test hangs before failing, never whether a working one passes.
const waitLimit = 20 * time.Second

func newClient(opts *mcp.ClientOptions) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcptest-test", Version: "0"}, opts)
}

// headerTransport adds fixed headers to every request, like the bridge's
// configured HTTP headers.
type headerTransport struct{ header http.Header }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.header {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

func connectHTTP(t *testing.T, url string, opts *mcp.ClientOptions, header http.Header) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headerTransport{header}}}
	cs, err := newClient(opts).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connecting over HTTP to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// asJSON re-decodes v into plain JSON values, for cmp.Diff against
// literals.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return out
}

// fakeTB records Fatal and Skip instead of ending the real test; run
// calls fn with it on a goroutine, as testing does, so Goexit is safe.
type fakeTB struct {
	testing.TB
	fatal, skip string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fakeTB) Skip(args ...any) {
	f.skip = fmt.Sprint(args...)
	runtime.Goexit()
}

func runFake(t *testing.T, fn func(tb testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

// The peers these helpers talk to are tested in internal/mcppeer; the
// helpers below are the few of its tests' that the tests of the HTTP
// servers and third-party servers here need too.

type fixtureCall struct {
	tool      string
	args      map[string]any
	want      any // the content blocks as plain JSON
	wantError bool
	wantSC    any // structuredContent as plain JSON, nil if absent
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func blocks(b ...any) []any { return b }

func checkCall(t *testing.T, cs *mcp.ClientSession, c fixtureCall) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", c.tool, err)
	}
	if res.IsError != c.wantError {
		t.Errorf("%s: isError = %v, want %v", c.tool, res.IsError, c.wantError)
	}
	if diff := cmp.Diff(c.want, asJSON(t, res.Content)); diff != "" {
		t.Errorf("%s: content (-want +got):\n%s", c.tool, diff)
	}
	var sc any
	if res.StructuredContent != nil {
		sc = asJSON(t, res.StructuredContent)
	}
	if diff := cmp.Diff(c.wantSC, sc); diff != "" {
		t.Errorf("%s: structuredContent (-want +got):\n%s", c.tool, diff)
	}
}

// rawScript is a script with two pages of tools and results of the shapes
// the SDK cannot produce.
func rawScript() mcppeer.RawScript {
	return mcppeer.RawScript{
		Pages: []mcppeer.RawPage{
			{Tools: []json.RawMessage{mcppeer.RawTool("a", "tool a"), mcppeer.RawTool("b", "tool b")}},
			{Tools: []json.RawMessage{mcppeer.RawTool("c", "tool c")}},
		},
		Results: map[string]json.RawMessage{
			"a":      json.RawMessage(`{"content":[{"type":"text","text":"hello"}]}`),
			"video":  json.RawMessage(`{"content":[{"type":"video","url":"x"},42,null]}`),
			"legacy": json.RawMessage(`{"toolResult":{"ok":true}}`),
		},
		Errors: map[string]mcppeer.RawError{"boom": {Code: -32000, Message: "boom", Data: json.RawMessage(`{"why":"scripted"}`)}},
	}
}

func reply(id any, result any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": result}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("listing tools: %v", err)
		}
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}
