package mcptest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// HTTPOptions configures [NewHTTPServer]. The zero value is a stateful
// server (sessions, the client negotiates 2025-11-25 and opens a GET
// stream).
type HTTPOptions struct {
	// Stateless serves without sessions (protocol 2026-07-28 for go-sdk
	// clients), with PropagateRequestCancellation so the server sees
	// cancelled calls and Close does not hang on listen streams.
	Stateless bool
}

// HTTPServer is an in-process Streamable HTTP MCP server on 127.0.0.1 that
// records the headers of every request it receives. Its methods are safe
// for concurrent use.
type HTTPServer struct {
	// URL is the MCP endpoint, http://127.0.0.1:PORT/mcp.
	URL string

	ts        *httptest.Server
	raw       *mcppeer.RawServer
	closeOnce sync.Once

	mu      sync.Mutex
	headers []http.Header
}

// NewHTTPServer serves srv over Streamable HTTP at URL until Close or the
// end of the test. Every request is served by srv itself (not a new server
// per request), so tools added at runtime stay visible.
func NewHTTPServer(t testing.TB, srv *mcp.Server, opts HTTPOptions) *HTTPServer {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                    opts.Stateless,
		PropagateRequestCancellation: opts.Stateless,
	})
	return newHTTPServer(t, h, nil)
}

// NewRawHTTPServer serves a [mcppeer.RawServer] for script over HTTP at URL,
// one application/json reply per POST (see [mcppeer.RawServer.ServeHTTP]),
// until Close or the end of the test. [HTTPServer.Raw] returns the
// RawServer, e.g. to change its script.
func NewRawHTTPServer(t testing.TB, script mcppeer.RawScript) *HTTPServer {
	t.Helper()
	raw := mcppeer.NewRawServer(script)
	return newHTTPServer(t, raw, raw)
}

func newHTTPServer(t testing.TB, h http.Handler, raw *mcppeer.RawServer) *HTTPServer {
	s := &HTTPServer{raw: raw}
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	s.ts = httptest.NewServer(mux)
	s.URL = s.ts.URL + "/mcp"
	t.Cleanup(s.Close)
	return s
}

// Headers returns a copy of the headers of every request received so far,
// in arrival order (for checks such as "every request carried the bearer
// token").
func (s *HTTPServer) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]http.Header, len(s.headers))
	for i, h := range s.headers {
		out[i] = h.Clone()
	}
	return out
}

// Raw returns the RawServer behind a [NewRawHTTPServer], or nil for a
// server made by [NewHTTPServer].
func (s *HTTPServer) Raw() *mcppeer.RawServer { return s.raw }

// Close drops open client connections (ending long-lived GET streams) and
// shuts the server down, waiting for its handlers. It is idempotent and
// also runs at the end of the test.
func (s *HTTPServer) Close() {
	s.closeOnce.Do(func() {
		s.ts.CloseClientConnections()
		s.ts.Close()
	})
}
