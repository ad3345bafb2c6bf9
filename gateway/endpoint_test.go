package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// One default gateway (no Options.Stateless) serves a 2025-11-25 client
// its session (its GET stream, a backend's question in the middle of its
// call) and, meanwhile, a 2026-07-28 client per request on the same URL:
// the newest client is asked through an input-required result, and its
// requests carry no session and leave none behind.
func TestDefaultEndpointServesBothProtocols(t *testing.T) {
	reg := tool.NewRegistry()
	startConfirmBackend(t, reg, "2025-11-25")
	g := newGateway(t, reg, Options{})
	base := serveHTTP(t, g, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	asked, released := make(chan string, 1), make(chan struct{})
	release := sync.OnceFunc(func() { close(released) })
	old := mcp.NewClient(&mcp.Implementation{Name: "old", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- req.Params.Message
			<-released
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		},
	})
	session, err := old.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	defer release() // first: Close waits for the session's call
	if got := session.InitializeResult().ProtocolVersion; got != "2025-11-25" || session.ID() == "" {
		t.Fatalf("the 2025-11-25 client negotiated %q, session %q; want 2025-11-25 with a session", got, session.ID())
	}
	// The client holds its session's GET stream: a second one conflicts.
	get := (&rawHTTP{t: t, endpoint: base + "/mcp", session: session.ID()}).do(http.MethodGet)
	get.Body.Close()
	if status := get.StatusCode; status != http.StatusConflict {
		t.Errorf("a second GET stream of the session answered %d, want 409 (the client's own is open)", status)
	}
	oldDone := make(chan error, 1)
	go func() {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__ask__confirm", Arguments: map[string]any{"what": "old"}})
		if err == nil && (res.IsError || strings.Join(texts(res), "") != "accept old true") {
			err = fmt.Errorf("got %q (isError %v)", texts(res), res.IsError)
		}
		oldDone <- err
	}()
	if got := <-asked; got != "Go on with old?" {
		t.Fatalf("the 2025-11-25 client was asked %q", got)
	}

	// While the session's call waits for its answer: a 2026-07-28 client.
	newest := manualClient(t, base, "")
	if got := newest.InitializeResult(); got == nil || got.ProtocolVersion != "2026-07-28" || newest.ID() != "" {
		t.Fatalf("the newest client got %+v, session %q; want 2026-07-28 without a session", got, newest.ID())
	}
	key, state := askedFor(t, newest, "new")
	res, err := answerWith(newest, "new", key, state)
	if err != nil || res.IsError || strings.Join(texts(res), "") != "accept new true" {
		t.Fatalf("the 2026-07-28 round ended with %v, %+v", err, res)
	}
	if ids := sessionIDs(g); len(ids) != 1 || ids[0] != session.ID() {
		t.Errorf("sessions %q open, want the 2025-11-25 client's alone", ids)
	}

	release()
	if err := <-oldDone; err != nil {
		t.Errorf("the 2025-11-25 client's call: %v", err)
	}
}

// sessionIDs are the ids of g's open sessions that have one (a
// 2026-07-28 request's lives for its request, without an id).
func sessionIDs(g *Gateway) []string {
	var ids []string
	for ss := range g.server.Sessions() {
		if ss.ID() != "" {
			ids = append(ids, ss.ID())
		}
	}
	return ids
}

// A 2026-07-28 request on the default endpoint is refused exactly as on a
// stateless gateway: without the bearer token (401), and by the Gate,
// on the fast path and the SDK's alike, whether its version is in its
// Mcp-Protocol-Version header or only in its _meta; and its answer names
// no session.
func TestDefaultEndpointRefusesAsStateless(t *testing.T) {
	gate := &refusingGate{err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "denied by policy"}}
	serve := func(stateless bool) string {
		opts := Options{Stateless: stateless, Gate: gate, BearerToken: "secret"}
		return serveHTTP(t, newGateway(t, fastPathTools(t), opts), opts)
	}
	defaultBase, statelessBase := serve(false), serve(true)
	call := func(meta string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","arguments":{},"_meta":{` + meta + `}}}`
	}
	// The fast path answers the first; the SDK's the second (a client
	// offering roots).
	bodies := []string{call(perRequestMeta("")), call(`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}`)}
	for _, c := range []struct {
		name   string
		header []string
	}{
		{"no token", perRequestHeaders("plain")},
		{"denied", append(perRequestHeaders("plain"), "Authorization", "Bearer secret")},
		// The version in the request's _meta alone.
		{"no version header", []string{"Mcp-Protocol-Version", "", "Mcp-Method", "tools/call", "Mcp-Name", "plain", "Authorization", "Bearer secret"}},
	} {
		for _, body := range bodies {
			wantStatus, want, wantHeader := readStateless(t, statelessBase, body, false, c.header...)
			status, got, header := readStateless(t, defaultBase, body, false, c.header...)
			if status != wantStatus || got != want || header.Get("WWW-Authenticate") != wantHeader.Get("WWW-Authenticate") {
				t.Errorf("%s, %s: the default endpoint answered %d %q, the stateless one %d %q", c.name, body, status, got, wantStatus, want)
			}
			if header.Get("Mcp-Session-Id") != "" {
				t.Errorf("%s: the answer names session %q", c.name, header.Get("Mcp-Session-Id"))
			}
		}
	}
	if n := len(gate.calls); n%2 != 0 || n < 4 {
		t.Errorf("the Gate saw %d calls, want the same on each gateway, at least 2", n)
	}
}
