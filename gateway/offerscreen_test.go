package gateway

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// hideOffers is a Gate whose Screen hides one prompt (by public name)
// and one server's resources and templates from every caller, and whose
// Enter refuses them, as a policy denying them does.
type hideOffers struct{ prompt, server string }

func (h hideOffers) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	if c.Public == h.prompt || c.Server == h.server {
		return nil, nil, ErrHidden
	}
	return ctx, func(Outcome) error { return nil }, nil
}

func (h hideOffers) Screen(context.Context, http.Header, string) func(Offer, string) bool {
	return func(k Offer, name string) bool {
		return !(k == OfferPrompt && name == h.prompt || k == OfferResource && name == h.server)
	}
}

// completingBackend registers in reg a backend, server, with the prompts
// open and secret and the resource template <server>://{name}, whose
// completions all answer "alice"; it returns how many completions
// reached it.
func completingBackend(t *testing.T, reg *tool.Registry, server string) *atomic.Int64 {
	var asked atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: server, Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			asked.Add(1)
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"alice"}}}, nil
		}})
	for _, name := range []string{"open", "secret"} {
		srv.AddPrompt(&mcp.Prompt{Name: name, Arguments: []*mcp.PromptArgument{{Name: "who"}}},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: server + "://{name}", Name: "notes"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	startMemBackendWith(t, mcpclient.Config{ServerName: server, Transport: mcpclient.TransportStdio, Command: "unused"},
		mcpclient.Options{Registry: reg}, srv)
	return &asked
}

// A caller completes the arguments only of the prompts and templates it
// may see: completing one the Screen hides from it (a policy's denial)
// is answered as completing one that does not exist, and never reaches
// its backend, whose completions could reveal data (names, paths) the
// caller may not read. It used to be routed by the gateway-wide tables.
func TestCompletionScreened(t *testing.T) {
	reg := tool.NewRegistry()
	docs := completingBackend(t, reg, "docs")
	vault := completingBackend(t, reg, "vault")
	g := newGateway(t, reg, Options{Gate: hideOffers{prompt: "mcp__docs__secret", server: "vault"}})
	raw := connectRaw(t, g)
	complete := func(ref string) wireMessage {
		return raw.request("completion/complete", `{"ref":`+ref+`,"argument":{"name":"who","value":"a"}}`)
	}
	if res := complete(`{"type":"ref/prompt","name":"mcp__docs__open"}`); res.Error != nil || !strings.Contains(string(res.Result), "alice") {
		t.Fatalf("completing a visible prompt: %+v %s", res.Error, res.Result)
	}
	if res := complete(`{"type":"ref/resource","uri":"docs://{name}"}`); res.Error != nil || !strings.Contains(string(res.Result), "alice") {
		t.Fatalf("completing a visible template: %+v %s", res.Error, res.Result)
	}
	for _, tc := range []struct{ what, hidden, unknown, name string }{
		{"prompt", `{"type":"ref/prompt","name":"mcp__docs__secret"}`, `{"type":"ref/prompt","name":"mcp__docs__nosuch"}`, "secret"},
		{"template", `{"type":"ref/resource","uri":"vault://{name}"}`, `{"type":"ref/resource","uri":"nosuch://{name}"}`, "vault"},
	} {
		hidden, unknown := complete(tc.hidden), complete(tc.unknown)
		if hidden.Error == nil || unknown.Error == nil {
			t.Fatalf("completing a hidden %s: %+v %s; an unknown one: %+v %s", tc.what, hidden.Error, hidden.Result, unknown.Error, unknown.Result)
		}
		// The same answer but for the name the caller sent.
		if want := strings.ReplaceAll(unknown.Error.Message, "nosuch", tc.name); hidden.Error.Code != unknown.Error.Code || hidden.Error.Message != want {
			t.Errorf("completing a hidden %s: %d %q; want as an unknown one: %d %q", tc.what, hidden.Error.Code, hidden.Error.Message, unknown.Error.Code, want)
		}
	}
	if n, m := docs.Load(), vault.Load(); n != 2 || m != 0 {
		t.Errorf("completions reaching docs: %d, vault: %d; want 2 (the visible ones), 0", n, m)
	}
}

// subscribingBackend registers in reg a backend, server, with the
// resource <server>://a, and returns how many subscriptions reached it.
func subscribingBackend(t *testing.T, reg *tool.Registry, server string) *atomic.Int64 {
	_, n := subscribingServer(t, reg, server)
	return n
}

// subscribingServer is subscribingBackend returning its server too, to
// send updates.
func subscribingServer(t *testing.T, reg *tool.Registry, server string) (*mcp.Server, *atomic.Int64) {
	n := new(atomic.Int64)
	srv := mcp.NewServer(&mcp.Implementation{Name: server, Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { n.Add(1); return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	srv.AddResource(&mcp.Resource{URI: server + "://a", Name: "a"}, docReader)
	startMemBackendWith(t, mcpclient.Config{ServerName: server, Transport: mcpclient.TransportStdio, Command: "unused"},
		mcpclient.Options{Registry: reg}, srv)
	return srv, n
}

// A caller subscribes only to resources it may see: a subscription to one
// of a server the Screen hides from it is answered as one to a resource
// that does not exist, and never reaches the backend (its updates would
// tell the caller when a resource it may not read changes).
func TestSubscribeScreened(t *testing.T) {
	reg := tool.NewRegistry()
	docs, vault := subscribingBackend(t, reg, "docs"), subscribingBackend(t, reg, "vault")
	g := newGateway(t, reg, Options{Gate: hideOffers{server: "vault"}})
	raw := connectRaw(t, g)
	if res := raw.request("resources/subscribe", `{"uri":"docs://a"}`); res.Error != nil {
		t.Fatalf("subscribing to a visible resource: %+v", res.Error)
	}
	hidden, unknown := raw.request("resources/subscribe", `{"uri":"vault://a"}`), raw.request("resources/subscribe", `{"uri":"nosuch://a"}`)
	if hidden.Error == nil || unknown.Error == nil {
		t.Fatalf("subscribing to a hidden resource: %+v %s; to an unknown one: %+v %s", hidden.Error, hidden.Result, unknown.Error, unknown.Result)
	}
	if want := strings.ReplaceAll(unknown.Error.Message, "nosuch", "vault"); hidden.Error.Code != unknown.Error.Code || hidden.Error.Message != want {
		t.Errorf("subscribing to a hidden resource: %d %q; want as to an unknown one: %d %q", hidden.Error.Code, hidden.Error.Message, unknown.Error.Code, want)
	}
	// A 2026-07-28 backend is subscribed on a listen stream the SDK opens
	// without waiting for the backend.
	waitFor(t, "the visible subscription at its backend", func() bool { return docs.Load() == 1 })
	if n := vault.Load(); n != 0 {
		t.Errorf("subscriptions reaching the hidden server: %d, want 0", n)
	}
}

// A 2026-07-28 client subscribes on a subscriptions/listen stream, whose
// subscriptions the SDK makes with requests of its own, without the
// listen's HTTP headers: the Screen still decides for the listen's
// caller (by its X-Who header here). A guest's listen on the hidden
// server's resource is answered as one on a resource that does not
// exist; the admin's is acknowledged and reaches the backend. A decision
// for a caller without headers (stdio's) could let the guest's through,
// or refuse every listen.
func TestListenSubscriptionsScreenedForItsCaller(t *testing.T) {
	reg := tool.NewRegistry()
	vault := subscribingBackend(t, reg, "vault")
	plain := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "1"}, nil) // takes no subscriptions
	plain.AddResource(&mcp.Resource{URI: "plain://a", Name: "a"}, docReader)
	startMemBackendWith(t, mcpclient.Config{ServerName: "plain", Transport: mcpclient.TransportStdio, Command: "unused"},
		mcpclient.Options{Registry: reg}, plain)
	opts := Options{Stateless: true, Gate: hideUnlessAdmin{hideServer{hidden: "vault"}}}
	g := newGateway(t, reg, opts)
	base := serveHTTP(t, g, opts)
	kept := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.subscribers)
	}
	listen := func(caller, uri string, during func()) string {
		ctx, stop := context.WithCancel(context.Background())
		defer stop() // ends the admin's stream once acknowledged
		body := `{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"_meta":{` + perRequestMeta("") +
			`},"notifications":{"resourceSubscriptions":["` + uri + `"]}}}`
		resp := postStateless(ctx, t, base, body, false, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen", "X-Who", caller)
		defer resp.Body.Close()
		first, err := bufio.NewReader(resp.Body).ReadString('}') // the answer, or the stream's first event
		if err != nil && first == "" {
			t.Fatalf("%s listening on %s: %v", caller, uri, err)
		}
		if during != nil {
			during()
		}
		return first
	}
	guest, unknown := listen("guest", "vault://a", nil), listen("guest", "nosuch://a", nil)
	if want := strings.ReplaceAll(unknown, "nosuch", "vault"); !strings.Contains(guest, `"error"`) || guest != want {
		t.Errorf("a guest's listen on the hidden server's resource: %s\nwant as on an unknown one: %s", guest, want)
	}
	if n := vault.Load(); n != 0 {
		t.Errorf("the guest's subscription reached the backend (%d)", n)
	}
	// The screen its updates are sent through is kept while it listens,
	// and let go as the listen ends.
	admin := listen("admin", "vault://a", func() {
		if n := kept(); n != 1 {
			t.Errorf("while the admin listens, the gateway keeps the screens of %d sessions, want 1", n)
		}
	})
	if !strings.Contains(admin, "notifications/subscriptions/acknowledged") {
		t.Fatalf("the admin's listen: %s, want it acknowledged", admin)
	}
	waitFor(t, "the admin's subscription at the backend", func() bool { return vault.Load() == 1 })
	waitFor(t, "the ended listen's screen let go", func() bool { return kept() == 0 })
	// A listen whose subscription fails (its backend takes none) is not
	// unsubscribed: nothing may be kept for it.
	if failed := listen("admin", "plain://a", nil); !strings.Contains(failed, `"error"`) {
		t.Fatalf("a listen on a resource whose backend takes no subscriptions: %s, want an error", failed)
	}
	if n := kept(); n != 0 {
		t.Errorf("after a listen whose subscription failed, the gateway keeps the screens of %d sessions", n)
	}
}

// liveHide is a Gate whose Screen decides by the server hidden at each
// decision ("" for none), as the policy's does after a reload.
type liveHide struct{ hidden *atomic.Value }

func (h liveHide) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	if c.Server != "" && c.Server == h.hidden.Load() {
		return nil, nil, ErrHidden
	}
	return ctx, func(Outcome) error { return nil }, nil
}

func (h liveHide) Screen(context.Context, http.Header, string) func(Offer, string) bool {
	return func(k Offer, name string) bool { return k != OfferResource || name != h.hidden.Load() }
}

// A subscription's updates are screened as they are sent, by the policy in
// force then: once a reload hides a server's resources from a caller, the
// updates of the one it subscribed to no longer reach it (they tell when
// a resource it may not read changes), while another server's still do;
// an unsubscribe lets go of what was kept for it. Subscriptions used to be
// screened only when made.
func TestUpdatesScreenedWhenSent(t *testing.T) {
	reg := tool.NewRegistry()
	docs, docsSubs := subscribingServer(t, reg, "docs")
	notes, notesSubs := subscribingServer(t, reg, "notes")
	hidden := &atomic.Value{}
	hidden.Store("")
	g := newGateway(t, reg, Options{Gate: liveHide{hidden}})
	tried := make(chan string, 10)
	g.server.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler { // outside the gateway's
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams); ok {
				tried <- p.URI
			}
			return res, err
		}
	})
	raw := connectRaw(t, g)
	for _, uri := range []string{"docs://a", "notes://a"} {
		if res := raw.request("resources/subscribe", `{"uri":"`+uri+`"}`); res.Error != nil {
			t.Fatalf("subscribing to %s: %+v", uri, res.Error)
		}
	}
	// A 2026-07-28 backend is subscribed on a listen stream the SDK opens
	// without waiting for the backend: an update sent before would be lost.
	waitFor(t, "the subscriptions at the backends", func() bool { return docsSubs.Load() == 1 && notesSubs.Load() == 1 })
	nextUpdate := func() string {
		for {
			var m struct {
				Method string
				Params struct{ URI string }
			}
			if err := json.Unmarshal(waitSignal(t, raw.lines, "a resource update"), &m); err != nil {
				t.Fatal(err)
			}
			if m.Method == resourceUpdated {
				return m.Params.URI
			}
		}
	}
	update := func(srv *mcp.Server, uri string) {
		if err := srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		waitSignal(t, tried, "the gateway sending the update of "+uri)
	}
	update(docs, "docs://a")
	if got := nextUpdate(); got != "docs://a" {
		t.Fatalf("the first update: %s, want docs://a", got)
	}
	hidden.Store("docs")
	update(docs, "docs://a")
	update(notes, "notes://a")
	if got := nextUpdate(); got != "notes://a" {
		t.Errorf("after docs was hidden, the session was sent the update of %s, want notes://a only", got)
	}
	if res := raw.request("resources/unsubscribe", `{"uri":"notes://a"}`); res.Error != nil {
		t.Fatal(res.Error)
	}
	raw.request("resources/unsubscribe", `{"uri":"docs://a"}`)
	g.mu.Lock()
	left := len(g.subscribers)
	g.mu.Unlock()
	if left != 0 {
		t.Errorf("after its unsubscribes, the gateway still keeps the screens of %d sessions", left)
	}
	// A session that ends subscribed leaves nothing either.
	cs, _ := connectClient(t, g, mcp.NewClient(&mcp.Implementation{Name: "sub", Version: "1"}, nil), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "notes://a"}); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	held := len(g.subscribers)
	g.mu.Unlock()
	if held != 1 {
		t.Fatalf("a session subscribed: the gateway keeps the screens of %d sessions, want 1", held)
	}
	cs.Close()
	waitFor(t, "the ended session's screens let go", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.subscribers) == 0
	})
}

// wrapping is a Gate in front of another, as the console's tracker is:
// it passes Enter on, and offers nothing else but Unwrap.
type wrapping struct{ inner Gate }

func (w wrapping) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	return w.inner.Enter(ctx, c)
}

func (w wrapping) Unwrap() Gate { return w.inner }

// A Gate in front of the policy's (the console's tracker) keeps the
// policy's Screen in force: what the Screen hides stays hidden from the
// lists and from subscriptions, however many wrappers deep.
func TestWrappedGateKeepsItsScreen(t *testing.T) {
	reg := tool.NewRegistry()
	subscribingBackend(t, reg, "docs")
	vault := subscribingBackend(t, reg, "vault")
	g := newGateway(t, reg, Options{Gate: wrapping{wrapping{hideOffers{server: "vault"}}}})
	raw := connectRaw(t, g)
	list := raw.request("resources/list", `{}`)
	if list.Error != nil || strings.Contains(string(list.Result), "vault://") || !strings.Contains(string(list.Result), "docs://a") {
		t.Errorf("resources/list: %s %+v; want docs' resource and not vault's", list.Result, list.Error)
	}
	if res := raw.request("resources/subscribe", `{"uri":"vault://a"}`); res.Error == nil {
		t.Errorf("subscribing to the hidden server's resource: %s, want it unknown", res.Result)
	}
	if n := vault.Load(); n != 0 {
		t.Errorf("the subscription reached the hidden server (%d)", n)
	}
}

// A URI served from another server once the config's order changed is
// subscribed to at that server, for the sessions subscribed before, and
// the subscription at the first server ends: it stood for both, so the
// updates of the server now serving it never came.
func TestSubscriptionFollowsTheServingServer(t *testing.T) {
	reg := tool.NewRegistry()
	var order atomic.Value
	order.Store([]string{"zeta", "alpha"})
	subscribed, unsubscribed, servers := map[string]*atomic.Int64{}, map[string]*atomic.Int64{}, map[string]*mcp.Server{}
	for _, name := range []string{"zeta", "alpha"} {
		n, u := new(atomic.Int64), new(atomic.Int64)
		srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{
			SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { n.Add(1); return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { u.Add(1); return nil },
		})
		srv.AddResource(&mcp.Resource{URI: "shared://a", Name: "a"}, docReader)
		subscribed[name], unsubscribed[name], servers[name] = n, u, srv
		startMemBackendWith(t, mcpclient.Config{ServerName: name, Transport: mcpclient.TransportStdio, Command: "unused"},
			mcpclient.Options{Registry: reg}, srv)
	}
	g := newGateway(t, reg, Options{ServerOrder: func() []string { return order.Load().([]string) }})
	raw := connectRaw(t, g)
	if res := raw.request("resources/subscribe", `{"uri":"shared://a"}`); res.Error != nil {
		t.Fatalf("subscribing: %+v", res.Error)
	}
	waitFor(t, "the subscription at zeta", func() bool { return subscribed["zeta"].Load() == 1 })
	order.Store([]string{"alpha", "zeta"})
	servers["alpha"].AddResource(&mcp.Resource{URI: "shared://b", Name: "b"}, docReader) // the gateway lists again
	waitFor(t, "shared://a served from alpha", func() bool {
		g.syncMu.Lock()
		defer g.syncMu.Unlock()
		return g.offers.uriServer["shared://a"] == "alpha"
	})
	waitFor(t, "the subscription moved to alpha", func() bool { return subscribed["alpha"].Load() == 1 })
	waitFor(t, "the subscription at zeta ended", func() bool { return unsubscribed["zeta"].Load() == 1 })
}

// hideSecrets is a Gate whose Screen hides, and whose Enter refuses, the
// tools whose public names hold "secret".
type hideSecrets struct{}

func (hideSecrets) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	if strings.Contains(c.Public, "secret") {
		return nil, nil, ErrHidden
	}
	return ctx, func(Outcome) error { return nil }, nil
}

func (hideSecrets) Screen(context.Context, http.Header, string) func(Offer, string) bool {
	return func(_ Offer, name string) bool { return !strings.Contains(name, "secret") }
}

// A list's pages tell a caller nothing of what the Screen hides from it:
// each page's cursor names an item the caller got, and a page whose items
// are all hidden gives way to the next, so the caller pages through what
// it may see. The cursor named the page's last item, hidden or not, in
// base64: a caller decoding it read the name of a tool hidden from it.
func TestPageCursorsNameNoHiddenItem(t *testing.T) {
	reg := tool.NewRegistry()
	for _, name := range []string{"a_open", "b_secret", "c_secret", "d_secret", "e_open", "f_open", "g_secret"} {
		if _, err := reg.Register(goTool(name, textBody(name))); err != nil {
			t.Fatal(err)
		}
	}
	g := newGateway(t, reg, Options{PageSize: 2, Gate: hideSecrets{}})
	c := connectInMemory(t, g)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var got []string
	params := &mcp.ListToolsParams{}
	for range 10 {
		page, err := c.session.ListTools(ctx, params)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		for _, tl := range page.Tools {
			got = append(got, tl.Name)
		}
		if page.NextCursor == "" {
			break
		}
		if raw, _ := base64.URLEncoding.DecodeString(page.NextCursor); strings.Contains(string(raw), "secret") {
			t.Errorf("the cursor after %v names a hidden tool: %q", got, raw)
		}
		params.Cursor = page.NextCursor
	}
	if want := []string{"a_open", "e_open", "f_open"}; !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
}
