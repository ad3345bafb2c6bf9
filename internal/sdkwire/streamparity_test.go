//lint:file-ignore SA1019 the logging the gateway carries is deprecated in 2026-07-28 (SEP-2577) but works.

package sdkwire

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// Parity check P3: the SDK's Streamable HTTP handler answers a POST that
// carries one tools/call with the headers SetResponseHeaders sets and a
// body of AppendEvent frames (a priming event first where Primes says,
// event ids EventID(stream, i) with an event store, none without) holding
// ResponseJSON of the result, or with JSONResponse that response alone;
// the result is CallResultJSON on the sessions TakesCalls accepts, as on
// stdio (parity check P1).
func TestParityHTTPCallResponse(t *testing.T) {
	results := []struct {
		isError             bool
		content, structured string
	}{
		{content: `[{"type":"text","text":"plain"}]`},
		{isError: true, content: `[ {"type":"video", "z":1,"a":1.50} , {"type":"text","text":"<b>&amp;</b>\u2028"} ]`, structured: `{"h" : "<i>&</i>\u2028", "n":[1.50, {}]}`},
	}
	var current atomic.Int64
	srv := newServer(nil)
	srv.AddReceivingMiddleware(rawResultMiddleware(func() (bool, string, string) {
		r := results[current.Load()]
		return r.isError, r.content, r.structured
	}))
	setups := []struct {
		name                    string
		version                 string
		stateless, json, stored bool
	}{
		{name: "stateful primed", version: "2025-11-25", stored: true},
		{name: "stateful unprimed", version: "2025-06-18", stored: true},
		{name: "no event store", version: "2025-11-25"},
		{name: "stateless", version: "2025-11-25", stateless: true},
		{name: "json response", version: "2025-11-25", json: true, stored: true},
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			opts := &mcp.StreamableHTTPOptions{Stateless: s.stateless, JSONResponse: s.json}
			if s.stored {
				opts.EventStore = mcp.NewMemoryEventStore(nil)
			}
			ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts))
			t.Cleanup(ts.Close) // after the session's DELETE
			session := ""
			if !s.stateless {
				session = rawInitialize(t, ts.URL, s.version)
			}
			for i, r := range results {
				current.Store(int64(i))
				resp := rawPost(t, ts.URL, session, s.version, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"raw"}}`)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				var structured json.RawMessage
				if r.structured != "" {
					structured = json.RawMessage(r.structured)
				}
				id, _ := jsonrpc.MakeID(float64(7))
				message, err := serverwire.ResponseJSON(id, serverwire.CallResultJSON(r.isError, json.RawMessage(r.content), structured), nil)
				if err != nil {
					t.Fatal(err)
				}
				want := wantFrames(string(body), s.version, s.json, s.stored, message)
				if diff := cmp.Diff(want, string(body)); diff != "" {
					t.Errorf("result %d: the SDK's body differs from the frames (-frames +SDK):\n%s", i, diff)
				}
				wantHeader := http.Header{}
				serverwire.SetResponseHeaders(wantHeader, s.json)
				for key := range wantHeader {
					if got := resp.Header.Get(key); got != wantHeader.Get(key) {
						t.Errorf("result %d: header %s = %q, want %q", i, key, got, wantHeader.Get(key))
					}
				}
			}
		})
	}
}

// wantFrames is the body the frames make for message, on the stream the
// SDK named in body (its ids are random).
func wantFrames(body, version string, jsonResponse, stored bool, message []byte) string {
	if jsonResponse {
		return string(message)
	}
	stream := ""
	if stored {
		_, after, _ := strings.Cut(body, "\nid: ")
		stream, _, _ = strings.Cut(after, "_")
	}
	var out []byte
	next := 0
	eventID := func() string {
		if !stored {
			return ""
		}
		next++
		return serverwire.EventID(stream, next-1)
	}
	if serverwire.Primes(version, stored) {
		out = serverwire.AppendEvent(out, "prime", eventID(), nil)
	}
	return string(serverwire.AppendEvent(out, "message", eventID(), message))
}

// rawInitialize opens a session at version over raw HTTP, and returns its
// id.
func rawInitialize(t *testing.T, url, version string) string {
	t.Helper()
	resp := rawPost(t, url, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize answered %s without a session id", resp.Status)
	}
	resp = rawPost(t, url, session, version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	t.Cleanup(func() {
		// The session ends with a DELETE, as a client ends it.
		req, err := http.NewRequest(http.MethodDelete, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Mcp-Session-Id", session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	return session
}

// rawPost POSTs body as a Streamable HTTP client does, and fails the test
// unless it is answered 2xx.
func rawPost(t *testing.T, url, session, version, body string) *http.Response {
	t.Helper()
	resp := rawSend(t, url, session, version, body)
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("POST %s: %s %s", body, resp.Status, b)
	}
	return resp
}

// rawSend POSTs body as a Streamable HTTP client does.
func rawSend(t *testing.T, url, session, version, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// Parity check P4: the SDK's server session sends a log message to its
// client exactly when LogPasses says, for every pair of levels.
func TestParityLogPasses(t *testing.T) {
	levels := []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", "verbose"}
	var sent atomic.Int64
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := newServer(nil).Connect(ctx, &spyTransport{Transport: st, write: func(_ context.Context, msg jsonrpc.Message) {
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/message" {
			sent.Add(1)
		}
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := newClient(nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	// logged reports whether the session sent a message of level: its
	// Log writes before it returns.
	logged := func(level mcp.LoggingLevel) bool {
		before := sent.Load()
		if err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: level, Data: "x"}); err != nil {
			t.Fatal(err)
		}
		return sent.Load() > before
	}
	for _, l := range levels {
		if got := logged(l); got != serverwire.LogPasses(string(l), "") {
			t.Errorf("before any level: %s sent = %v, LogPasses = %v", l, got, serverwire.LogPasses(string(l), ""))
		}
	}
	for _, set := range levels[:8] {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: set}); err != nil {
			t.Fatal(err)
		}
		for _, l := range levels {
			if got := logged(l); got != serverwire.LogPasses(string(l), string(set)) {
				t.Errorf("session level %s: %s sent = %v, LogPasses = %v", set, l, got, serverwire.LogPasses(string(l), string(set)))
			}
		}
	}
}
