package gatewayauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// publish offers server's prompt and resource.
func publish(t *testing.T, reg *tool.Registry, server string) {
	t.Helper()
	read := func(context.Context, string) (tool.ReadResult, error) {
		return tool.ReadResult{Wire: json.RawMessage(`{"contents":[{"uri":"` + server + `://a","text":"hi"}]}`)}, nil
	}
	get := func(context.Context, map[string]string) (tool.PromptResult, error) {
		return tool.PromptResult{Wire: json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`)}, nil
	}
	err := reg.NewSource().PublishOffer(tool.Offer{Server: server, Read: read,
		Resources: []tool.Resource{{Server: server, URI: server + "://a", Name: "a"}},
		Prompts:   []tool.Prompt{{Name: "mcp__" + server + "__summarize", Origin: tool.Origin{Server: server, Name: "summarize"}, Get: get}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Prompts and resources are screened like tools: a session lists only
// what its caller may use, and a prompt get or resource read it may not
// use is refused before the backend.
func TestPromptsAndResourcesScreened(t *testing.T) {
	s := newServed(t, Options{})
	publish(t, s.reg, "docs")
	publish(t, s.reg, "secret")
	s.apply(t, `
auth: {issuer: ISSUER, audience: RESOURCE}
policy:
  - groups: [readers]
    allow: ["mcp__docs__*"]
    resources: [docs]
audit: {file: DIR/audit.jsonl}
`, nil)
	bob := s.connect(t, s.is.SignEC(t, s.is.Claims("bob", s.resource(), jwt.MapClaims{"groups": []string{"readers"}})), nil)
	prompts, err := bob.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	resources, err := bob.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	for _, r := range resources.Resources {
		names = append(names, r.URI)
	}
	slices.Sort(names)
	if d := cmp.Diff([]string{"docs://a", "mcp__docs__summarize"}, names); d != "" {
		t.Errorf("bob's prompts and resources (-want +got):\n%s", d)
	}
	if _, err := bob.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "mcp__docs__summarize"}); err != nil {
		t.Errorf("an allowed prompt: %v", err)
	}
	if _, err := bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://a"}); err != nil {
		t.Errorf("an allowed resource: %v", err)
	}
	checkOffersHidden(t, bob, "mcp__secret__summarize", "secret://a")
	if data := readFile(t, auditPath(s)); !containsAll(data, `"method":"prompts/get"`, `"method":"resources/read"`, `"server":"secret"`, `"outcome":"denied"`) {
		t.Errorf("the trail lacks the prompt gets and resource reads:\n%s", data)
	}
}

func second[T any](_ T, err error) error { return err }

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// listChanges counts the list_changed notifications one client gets.
type listChanges struct{ tools, prompts, resources atomic.Int32 }

func (n *listChanges) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { n.tools.Add(1) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { n.prompts.Add(1) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { n.resources.Add(1) },
	}
}

// offerNames lists a session's prompts and resources, sorted.
func offerNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	resources, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	for _, r := range resources.Resources {
		names = append(names, r.URI)
	}
	slices.Sort(names)
	return names
}

// A new policy reaches the prompts and resources of open sessions: each
// session is told (prompts/list_changed, resources/list_changed, as for
// tools) and lists again what its own identity may now use.
func TestPolicyReloadRelistsPromptsAndResources(t *testing.T) {
	s := newServed(t, Options{})
	publish(t, s.reg, "docs")
	publish(t, s.reg, "secret")
	const before = `
auth: {issuer: ISSUER, audience: RESOURCE}
policy:
  - subjects: [alice]
    allow: ["*"]
    resources: ["*"]
  - groups: [readers]
    allow: ["mcp__docs__*"]
    resources: [docs]
`
	s.apply(t, before, nil)
	var aliceSaw, bobSaw listChanges
	alice := s.connectWith(t, s.is.Sign(t, s.is.Claims("alice", s.resource(), nil)), aliceSaw.options())
	bob := s.connectWith(t, s.is.SignEC(t, s.is.Claims("bob", s.resource(), jwt.MapClaims{"groups": []string{"readers"}})), bobSaw.options())
	all := []string{"docs://a", "mcp__docs__summarize", "mcp__secret__summarize", "secret://a"}
	if d := cmp.Diff(all, offerNames(t, alice)); d != "" {
		t.Fatalf("alice before (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"docs://a", "mcp__docs__summarize"}, offerNames(t, bob)); d != "" {
		t.Fatalf("bob before (-want +got):\n%s", d)
	}

	s.apply(t, strings.Replace(before, `allow: ["mcp__docs__*"]
    resources: [docs]`, `allow: ["mcp__secret__*"]
    resources: [secret]`, 1), nil)
	for who, saw := range map[string]*listChanges{"alice": &aliceSaw, "bob": &bobSaw} {
		mcptest.Eventually(t, 10*time.Second, func() bool {
			return saw.tools.Load() > 0 && saw.prompts.Load() > 0 && saw.resources.Load() > 0
		}, "%s's session to get tools, prompts and resources list_changed", who)
	}
	if d := cmp.Diff(all, offerNames(t, alice)); d != "" {
		t.Errorf("alice after (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"mcp__secret__summarize", "secret://a"}, offerNames(t, bob)); d != "" {
		t.Errorf("bob after (-want +got):\n%s", d)
	}
	if _, err := bob.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "mcp__docs__summarize"}); err == nil {
		t.Error("bob got a prompt the new policy denies")
	}
}

// A gateway that serves only resource templates tells open sessions of a
// new policy with resources/list_changed too, and no prompts/list_changed
// (it serves no prompts).
func TestPolicyReloadRelistsTemplates(t *testing.T) {
	s := newServed(t, Options{})
	read := func(context.Context, string) (tool.ReadResult, error) { return tool.ReadResult{}, nil }
	if err := s.reg.NewSource().PublishOffer(tool.Offer{Server: "files", Read: read,
		Templates: []tool.ResourceTemplate{{Server: "files", URITemplate: "file:///{path}", Name: "file"}}}); err != nil {
		t.Fatal(err)
	}
	const before = `
auth: {issuer: ISSUER, audience: RESOURCE}
policy:
  - subjects: [bob]
    allow: ["*"]
    resources: []
`
	s.apply(t, before, nil)
	var saw listChanges
	bob := s.connectWith(t, s.is.Sign(t, s.is.Claims("bob", s.resource(), nil)), saw.options())
	templates := func() int {
		res, err := bob.ListResourceTemplates(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(res.ResourceTemplates)
	}
	if n := templates(); n != 0 {
		t.Fatalf("before: %d templates, want none (no resources allowed)", n)
	}
	s.apply(t, strings.Replace(before, "resources: []", "resources: [files]", 1), nil)
	mcptest.Eventually(t, 10*time.Second, func() bool { return saw.tools.Load() > 0 && saw.resources.Load() > 0 },
		"bob's session to get tools and resources list_changed")
	if n := saw.prompts.Load(); n != 0 {
		t.Errorf("%d prompts/list_changed from a gateway without prompts", n)
	}
	if n := templates(); n != 1 {
		t.Errorf("after: %d templates, want the one now allowed", n)
	}
}

// A screen the gateway keeps (a subscription's, whose updates it screens
// as they are sent) decides by the config in force at each decision: a
// reload that takes a server's resources from a caller hides them from a
// screen made before it, and one that gives them back shows them again.
// A reload that changes the authentication authenticates the caller
// again: once alice's token is rotated, the screen made with the old one
// sees nothing, whatever the policy allows. A screen used to keep the
// policy and the identity it was made with.
func TestScreenFollowsReloads(t *testing.T) {
	s := newServed(t, Options{})
	config := func(resources string) string {
		return "auth: {tokens: {alice: ALICE}}\npolicy: [{subjects: [alice], allow: [\"*\"], resources: " + resources + "}]\n"
	}
	first := map[string]string{"ALICE": "alice-1"}
	s.apply(t, config("[docs, notes]"), first)
	ctx, done := context.WithCancel(t.Context())
	may := s.keeper.Screen(ctx, http.Header{"Authorization": {"Bearer alice-1"}}, "")
	done() // the request it was made for is over
	check := func(when string, docs, notes bool) {
		t.Helper()
		if got, got2 := may(gateway.OfferResource, "docs"), may(gateway.OfferResource, "notes"); got != docs || got2 != notes {
			t.Errorf("%s: docs %v, notes %v; want %v, %v", when, got, got2, docs, notes)
		}
	}
	check("applied", true, true)
	s.apply(t, config("[notes]"), first)
	check("after a reload taking docs away", false, true)
	s.apply(t, config("[docs, notes]"), first)
	check("after a reload giving it back", true, true)
	s.apply(t, config("[docs, notes]"), map[string]string{"ALICE": "alice-2"})
	check("after alice's token was rotated", false, false)
}

// A screen the gateway keeps (a subscription's, whose updates it screens
// long after the request that made it) stops seeing anything once its
// caller's token expires: a client that subscribed with a token valid
// for a minute does not go on receiving updates of the resources it may
// read for as long as its stream stays open. A kept screen used to keep
// the identity it was made with until the next reload.
func TestKeptScreenEndsWithItsToken(t *testing.T) {
	clk := &clock{t: time.Now()}
	s := newServed(t, Options{Now: clk.Now})
	s.apply(t, "auth: {issuer: ISSUER, audience: RESOURCE}\npolicy: [{subjects: [alice], allow: [\"*\"], resources: [docs]}]\n", nil)
	tok := s.is.SignEC(t, s.is.Claims("alice", s.resource(), jwt.MapClaims{"exp": clk.Now().Add(time.Minute).Unix()}))
	may := s.keeper.Screen(t.Context(), http.Header{"Authorization": {"Bearer " + tok}}, "")
	if !may(gateway.OfferResource, "docs") {
		t.Fatal("alice's screen hides the resources the policy allows her")
	}
	clk.Add(time.Minute)
	if !may(gateway.OfferResource, "docs") {
		t.Fatal("alice's screen hides her resources within the leeway after her token's expiry")
	}
	clk.Add(Leeway + time.Second)
	if may(gateway.OfferResource, "docs") {
		t.Error("a kept screen still shows resources after its caller's token expired")
	}
}

// A screen the gateway keeps (a subscription's) holds what authenticates
// its caller, not the rest of its request's headers: a client subscribing
// with 60 KiB of headers on each request cannot make every subscription
// hold them.
func TestKeptScreenHoldsOnlyItsCredentials(t *testing.T) {
	s := newServed(t, Options{})
	s.apply(t, "auth: {tokens: {alice: ALICE}}\npolicy: [{subjects: [alice], allow: [\"*\"]}]\n", map[string]string{"ALICE": "alice-1"})
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const screens, pad = 500, 60 << 10
	before := heap()
	kept := make([]func(gateway.Offer, string) bool, screens)
	for i := range kept {
		h := http.Header{"Authorization": {"Bearer alice-1"}, "X-Pad": {strings.Repeat("a", pad)}}
		kept[i] = s.keeper.Screen(t.Context(), h, "")
	}
	grown := int64(heap()) - int64(before)
	if !kept[screens-1](gateway.OfferTool, "mcp__time__now") {
		t.Fatal("alice's screen hides what the policy allows her")
	}
	if grown > screens*pad/10 {
		t.Errorf("%d kept screens grew the heap by %d KiB, want under a tenth of their requests' %d KiB of headers", screens, grown>>10, screens*pad>>10)
	}
}

// With a per-tool rate limit, a server's resources share one bucket:
// each URI a template expands to is not a tool of its own with a full
// bucket (a caller could read without end by asking file:///a,
// file:///a?1, ..., and its many buckets evict its others). A resource's
// bucket used to be its URI's.
func TestPerToolLimitOfResourcesIsTheServers(t *testing.T) {
	s := newServed(t, Options{})
	read := func(_ context.Context, uri string) (tool.ReadResult, error) {
		return tool.ReadResult{Wire: json.RawMessage(`{"contents":[{"uri":"` + uri + `","text":"hi"}]}`)}, nil
	}
	if err := s.reg.NewSource().PublishOffer(tool.Offer{Server: "files", Read: read,
		Templates: []tool.ResourceTemplate{{Server: "files", URITemplate: "file:///{path}", Name: "file"}}}); err != nil {
		t.Fatal(err)
	}
	s.apply(t, `
auth: {issuer: ISSUER, audience: RESOURCE}
policy: [{subjects: [bob], allow: ["*"]}]
rateLimit: {perIdentity: 1/m, burst: 1, perTool: true}
`, nil)
	bob := s.connect(t, s.is.Sign(t, s.is.Claims("bob", s.resource(), nil)), nil)
	if _, err := bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///a"}); err != nil {
		t.Fatalf("the first read: %v", err)
	}
	for _, uri := range []string{"file:///b", "file:///c"} {
		err := second(bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri}))
		if we, ok := errors.AsType[*jsonrpc.Error](err); !ok || we.Code != CodeRateLimited {
			t.Errorf("a read of %s past files' limit: %v, want code %d", uri, err, CodeRateLimited)
		}
	}
	if code, err := callCode(t, bob, "mcp__time__now"); code != 0 {
		t.Errorf("a tool's call, limited by the reads of a server's resources: %v", err)
	}
}
