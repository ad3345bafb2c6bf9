package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
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
// on the take and the SDK's alike, whether its version is in its
// Mcp-Protocol-Version header or only in its _meta; and its answer names
// no session.
func TestDefaultEndpointRefusesAsStateless(t *testing.T) {
	gate := &refusingGate{err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "denied by policy"}}
	serve := func(stateless bool) string {
		opts := Options{Stateless: stateless, Gate: gate, BearerToken: "secret"}
		return serveHTTP(t, newGateway(t, takenTools(t), opts), opts)
	}
	defaultBase, statelessBase := serve(false), serve(true)
	call := func(meta string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","arguments":{},"_meta":{` + meta + `}}}`
	}
	// The take answers the first; the SDK's the second (a client
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

// askingFor is an http.RoundTripper whose client's initialize asks for
// protocol version instead of 2025-11-25.
type askingFor string

func (v askingFor) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		if bytes.Contains(body, []byte(`"method":"initialize"`)) {
			body = bytes.Replace(body, []byte(`"protocolVersion":"2025-11-25"`), []byte(`"protocolVersion":"`+string(v)+`"`), 1)
		}
		r = r.Clone(r.Context())
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A client whose initialize asks for 2026-07-28 (a version whose
// handshake is server/discover) is answered 2025-11-25 and served so,
// over HTTP and on stdio: its call is taken beneath the SDK's session
// (sdkwire.TakesCalls), and a backend's question reaches it in the middle
// of the call, as a request of the gateway's, never as an input-required
// result (which a 2025-11-25 client does not read). Its session was read
// as 2026-07-28 (the version asked): the SDK refused to put it requests,
// and the gateway parked its calls.
func TestInitializeServedAtNegotiatedVersion(t *testing.T) {
	t.Run("HTTP", func(t *testing.T) {
		reg := tool.NewRegistry()
		startConfirmBackend(t, reg, "2025-11-25")
		g := newGateway(t, reg, Options{})
		viaSDK := sdkCalls(g)
		base := serveHTTP(t, g, Options{})
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		asked := make(chan struct{}, 1)
		c := mcp.NewClient(&mcp.Implementation{Name: "asks-newest", Version: "1"}, &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked <- struct{}{}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
			},
		})
		transport := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: askingFor("2026-07-28")}}
		cs, err := c.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" || cs.ID() == "" {
			t.Fatalf("answered protocol %q, session %q; want 2025-11-25 with a session", got, cs.ID())
		}
		waitFor(t, "the backend's tool listed", func() bool {
			_, ok := reg.Get("mcp__ask__confirm")
			return ok
		})
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__ask__confirm", Arguments: map[string]any{"what": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(texts(res), ""); res.NeedsInput() || res.IsError || got != "accept x true" || len(asked) != 1 {
			t.Errorf("got %q (isError %v, input requests %v, asked %d times), want the answer given once in the middle of the call",
				got, res.IsError, res.InputRequests, len(asked))
		}
		if n := viaSDK.Load(); n != 0 {
			t.Errorf("%d call(s) went through the SDK's dispatch, want the call taken beneath the session", n)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		reg := tool.NewRegistry()
		startConfirmBackend(t, reg, "2025-11-25")
		g := newGateway(t, reg, Options{})
		viaSDK := sdkCalls(g)
		c := connectRawInit(t, `{"protocolVersion":"2026-07-28","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}`, g.ServeStdio)
		if !strings.Contains(string(c.init), `"protocolVersion":"2025-11-25"`) {
			t.Fatalf("initialize answered %s, want 2025-11-25", c.init)
		}
		waitFor(t, "the backend's tool listed", func() bool {
			_, ok := reg.Get("mcp__ask__confirm")
			return ok
		})
		c.send(`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"mcp__ask__confirm","arguments":{"what":"x"}}}`)
		q := c.serverRequest("elicitation/create")
		if !strings.Contains(string(q.Params), "Go on with x?") {
			t.Errorf("the question: %s", q.Params)
		}
		c.send(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,"result":{"action":"accept","content":{"ok":true}}}`)
		res := c.response(`"call"`)
		if !strings.Contains(string(res.Result), `"text":"accept x true"`) || strings.Contains(string(res.Result), "input") {
			t.Errorf("got %s %+v, want the answer given in the middle of the call", res.Result, res.Error)
		}
		if n := viaSDK.Load(); n != 0 {
			t.Errorf("%d call(s) went through the SDK's dispatch, want the call taken beneath the session", n)
		}
	})
}
