package sdkwire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.VerifyTestMain(m)
}

// waitLimit bounds every wait for an event; it only decides how long a
// broken test hangs before failing.
const waitLimit = 20 * time.Second

// geoSchema is the input schema of the tool geo: its argument region is
// mirrored as the header Mcp-Param-Region.
const geoSchema = `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"q":{"type":"string"}}}`

// newServer returns a go-sdk server with the tools echo (answers "echo")
// and geo (answers "region <region>").
func newServer(opts *mcp.ServerOptions) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "contract", Version: "0"}, opts)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "geo", InputSchema: json.RawMessage(geoSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Region string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "region " + args.Region}}}, nil
		})
	return srv
}

func newClient(opts *mcp.ClientOptions) *mcp.Client {
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	opts.Capabilities = &mcp.ClientCapabilities{}
	return mcp.NewClient(&mcp.Implementation{Name: "sdkwire-test", Version: "0"}, opts)
}

// connectInMemory connects a client to srv over in-memory pipes, through
// wrap (when not nil); both ends close when the test ends, the client first
// (a listen stream holds the server's Close until the client goes).
func connectInMemory(t *testing.T, srv *mcp.Server, copts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions, wrap func(mcp.Transport) mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	var transport mcp.Transport = ct
	if wrap != nil {
		transport = wrap(ct)
	}
	cs, err := newClient(copts).Connect(ctx, transport, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// httpServer serves srv over Streamable HTTP on 127.0.0.1 until the end of
// the test; stateless servers speak 2026-07-28 with go-sdk clients.
func httpServer(t *testing.T, srv *mcp.Server, stateless bool) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                    stateless,
		PropagateRequestCancellation: stateless,
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// connectHTTP connects a client to url through the round tripper rt.
func connectHTTP(t *testing.T, url string, rt http.RoundTripper, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}
	cs, err := newClient(copts).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// text returns the text of a result's single text block.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d blocks, want 1", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("block is %T, want text", res.Content[0])
	}
	return tc.Text
}

// rtFunc is a round tripper made of a function.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// spyConn hands every written and read message to its hooks.
type spyTransport struct {
	mcp.Transport
	write func(context.Context, jsonrpc.Message)
	read  func(jsonrpc.Message)
}

func (t *spyTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &spyConn{Connection: c, t: t}, nil
}

type spyConn struct {
	mcp.Connection
	t *spyTransport
}

func (c *spyConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if c.t.write != nil {
		c.t.write(ctx, msg)
	}
	return c.Connection.Write(ctx, msg)
}

func (c *spyConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil && c.t.read != nil {
		c.t.read(msg)
	}
	return msg, err
}

// records is a slog handler that keeps its records.
type records struct {
	mu   sync.Mutex
	list []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rec.Clone())
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) all() []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]slog.Record(nil), r.list...)
}

// attrs returns the attributes of rec as strings.
func attrs(rec slog.Record) map[string]string {
	m := map[string]string{}
	rec.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	return m
}

// pipeServer serves a mcppeer.RawServer for script over a pair of pipes
// and returns the client's transport; the server stops when the client
// closes.
func pipeServer(t *testing.T, script mcppeer.RawScript) mcp.Transport {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := mcppeer.NewRawServer(script).Serve(context.Background(), sr, sw)
		sw.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cw.Close()
		if err := <-done; err != nil && !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("raw server: %v", err)
		}
	})
	return &mcp.IOTransport{Reader: cr, Writer: cw}
}

// waitFor polls cond until it holds or waitLimit passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	mcptest.Eventually(t, waitLimit, cond, "%s", what)
}

// contains reports whether err's text contains s.
func contains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }
