package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A session is bound to the identity that opened it: another identity
// presenting its id is answered 404 for every method (it cannot call in
// it, listen to it or end it), and the owner goes on undisturbed.
func TestSessionBoundToIdentity(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("hello", textBody("hi"))); err != nil {
		t.Fatal(err)
	}
	opts := Options{Authenticate: aliceOrBob}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	alice := connectHTTP(t, base, &http.Client{Transport: bearerTransport{"alice-secret"}})
	if diff := cmp.Diff([]string{"hi"}, texts(alice.call(t, "hello", `{}`))); diff != "" {
		t.Fatalf("alice's call (-want +got):\n%s", diff)
	}
	session := alice.session.ID()
	if session == "" {
		t.Fatal("no session id")
	}
	call := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"hello"}}`
	for _, tt := range []struct {
		who, method, body string
		want              int
	}{
		{"bob", http.MethodPost, call, http.StatusNotFound},
		{"bob", http.MethodGet, "", http.StatusNotFound},
		{"bob", http.MethodDelete, "", http.StatusNotFound},
		{"nobody", http.MethodPost, call, http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(tt.method, base+"/mcp", strings.NewReader(tt.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+tt.who+"-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s's %s with alice's session: status %d (%s), want %d", tt.who, tt.method, resp.StatusCode, body, tt.want)
		}
	}
	if diff := cmp.Diff([]string{"hi"}, texts(alice.call(t, "hello", `{}`))); diff != "" {
		t.Errorf("alice's call after bob's attempts (-want +got):\n%s", diff)
	}
	// Bob's own session works.
	bob, err := newSDKClient(&client{}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{"bob-secret"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if _, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "hello"}); err != nil {
		t.Errorf("bob's call in his own session: %v", err)
	}
}

// Sessions end without leaving their bindings behind: the table holds the
// open sessions (and the one being bound) only.
func TestSessionOwnersBounded(t *testing.T) {
	var o sessionOwners
	for i, id := range []string{"a", "b", "c"} {
		open := map[string]bool{id: true}
		if i > 0 {
			open["a"] = true // a stays open, the others end
		}
		o.bind(id, "x", o.mark(), open)
	}
	if diff := cmp.Diff(map[string]string{"a": "x", "c": "x"}, o.identities()); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	if !o.allowed("a", "x") || o.allowed("a", "y") || !o.allowed("unknown", "y") {
		t.Error("allowed: the owner only, unknown ids left to the SDK")
	}
}

// Two sessions opened at once: the bind that listed the open sessions
// before the other session existed keeps that session's binding (dropping
// it would leave the session open to every identity).
func TestSessionOwnersConcurrentOpen(t *testing.T) {
	var o sessionOwners
	alicesMark := o.mark() // alice's initialize lists the open sessions: bob's is not there yet
	o.bind("bob-session", "bob", o.mark(), map[string]bool{"bob-session": true})
	o.bind("alice-session", "alice", alicesMark, map[string]bool{"alice-session": true})
	if o.allowed("bob-session", "alice") {
		t.Error("alice may use bob's session: its binding was dropped as ended")
	}
	if diff := cmp.Diff(map[string]string{"alice-session": "alice", "bob-session": "bob"}, o.identities()); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
}
