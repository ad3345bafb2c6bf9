package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// errNotFound is what the test servers' Read answers for a URI they do not
// have, to check that a server's error comes back as it is.
var errNotFound = errors.New("resource not found")

// readBy returns a ReadFunc of server that answers "<server> read <uri>"
// with a wire result naming the URI; "missing:" URIs fail with errNotFound.
func readBy(server string) tool.ReadFunc {
	return func(_ context.Context, uri string) (tool.ReadResult, error) {
		if strings.HasPrefix(uri, "missing:") {
			return tool.ReadResult{}, fmt.Errorf("%w: %s", errNotFound, uri)
		}
		return tool.ReadResult{
			Content: []tool.Content{tool.Text(server + " read " + uri)},
			Wire:    json.RawMessage(`{"contents":[{"uri":"` + uri + `"}]}`),
		}, nil
	}
}

// promptAs is a prompt published as name whose raw name at the server is
// raw; Get renders the raw name and the "who" argument.
func promptAs(name, raw string) tool.Prompt {
	return tool.Prompt{
		Name:   name,
		Origin: tool.Origin{Name: raw},
		Get: func(_ context.Context, args map[string]string) (tool.PromptResult, error) {
			return tool.PromptResult{
				Description: "rendered " + raw,
				Messages:    []tool.PromptMessage{{Role: "user", Content: []tool.Content{tool.Text("hello " + args["who"])}}},
			}, nil
		},
	}
}

// each returns f of every name, in order.
func each[T any](f func(name string) T, names ...string) []T {
	out := make([]T, len(names))
	for i, n := range names {
		out[i] = f(n)
	}
	return out
}

// prompts returns prompts published under their raw names.
func prompts(names ...string) []tool.Prompt {
	return each(func(n string) tool.Prompt { return promptAs(n, n) }, names...)
}

// resources returns resources at uris, their Server left for the offer to
// fill.
func resources(uris ...string) []tool.Resource {
	return each(func(u string) tool.Resource { return tool.Resource{URI: u, Name: "name of " + u} }, uris...)
}

// templates returns resource templates for the URI templates ts.
func templates(ts ...string) []tool.ResourceTemplate {
	return each(func(tt string) tool.ResourceTemplate { return tool.ResourceTemplate{URITemplate: tt} }, ts...)
}

// echoComplete answers a completion with the request it got, flattened, so
// a test can see what reached the server.
func echoComplete(_ context.Context, req tool.CompleteRequest) (tool.Completion, error) {
	return tool.Completion{
		Values: []string{req.Server, req.Ref.Type, req.Ref.Name, req.Ref.URI, req.Argument.Name, req.Argument.Value, req.Context["k"]},
		Total:  7, HasMore: true,
	}, nil
}

// server is a valid offer of server with the given resources, templates and
// prompts, readable when it has resources or templates.
func server(name string, res []string, tmpls []string, ps ...string) tool.Offer {
	o := tool.Offer{Server: name, Resources: resources(res...), Templates: templates(tmpls...), Prompts: prompts(ps...)}
	if len(res) > 0 || len(tmpls) > 0 {
		o.Read = readBy(name)
	}
	return o
}

// mustPublishOffer publishes o through a new source of r, or fails the test.
func mustPublishOffer(t *testing.T, r *tool.Registry, o tool.Offer) *tool.Source {
	t.Helper()
	s := r.NewSource()
	publishOrFail(t, s, o)
	return s
}

// publishOrFail publishes o through s or fails the test.
func publishOrFail(t *testing.T, s *tool.Source, o tool.Offer) {
	t.Helper()
	if err := s.PublishOffer(o); err != nil {
		t.Fatalf("PublishOffer(%s): %v", o.Server, err)
	}
}

// view is what a registry shows of its tools and offers, by name.
type view struct {
	Tools, Resources, Templates, Prompts, Servers []string
}

// viewOf returns r's view.
func viewOf(r *tool.Registry) view {
	var v view
	v.Tools = listNames(r)
	for _, res := range r.Resources() {
		v.Resources = append(v.Resources, res.Server+" "+res.URI)
	}
	for _, tt := range r.ResourceTemplates() {
		v.Templates = append(v.Templates, tt.Server+" "+tt.URITemplate)
	}
	for _, p := range r.Prompts() {
		v.Prompts = append(v.Prompts, p.Name)
	}
	for _, s := range r.Servers() {
		v.Servers = append(v.Servers, s.Server)
	}
	return v
}

// checkView fails the test when r's view is not want.
func checkView(t *testing.T, r *tool.Registry, when string, want view) {
	t.Helper()
	if diff := cmp.Diff(want, viewOf(r)); diff != "" {
		t.Errorf("%s: registry view (-want +got):\n%s", when, diff)
	}
}

// checkOneChange fails the test unless r changed exactly once since
// version before and the watcher wake was woken exactly once.
func checkOneChange(t *testing.T, r *tool.Registry, wake <-chan struct{}, before uint64, what string) {
	t.Helper()
	if got := r.Version() - before; got != 1 {
		t.Errorf("%s changed the registry %d times, want once", what, got)
	}
	if !pending(wake) {
		t.Errorf("%s did not wake the watcher", what)
	}
}

func TestPublishOfferSwapsEverythingAtOnce(t *testing.T) {
	withTools := func(o tool.Offer, names ...string) tool.Offer {
		o.Tools = defs(names...)
		return o
	}
	steps := []struct {
		what  string
		offer tool.Offer
		want  view
	}{
		{
			what:  "the first offer",
			offer: withTools(server("srv", []string{"file:///1"}, []string{"file:///{a}"}, "p1"), "t1"),
			want: view{
				Tools: []string{"t1"}, Resources: []string{"srv file:///1"}, Templates: []string{"srv file:///{a}"},
				Prompts: []string{"p1"}, Servers: []string{"srv"},
			},
		},
		{
			what:  "the second offer",
			offer: withTools(server("srv", []string{"file:///2", "file:///3"}, []string{"file:///{b}"}, "p2"), "t2"),
			want: view{
				Tools: []string{"t2"}, Resources: []string{"srv file:///2", "srv file:///3"}, Templates: []string{"srv file:///{b}"},
				Prompts: []string{"p2"}, Servers: []string{"srv"},
			},
		},
		{what: "tools only", offer: tool.Offer{Tools: defs("t3")}, want: view{Tools: []string{"t3"}}},
	}
	r := tool.NewRegistry()
	wake, stop := r.Watch()
	defer stop()
	s := r.NewSource()
	for _, st := range steps {
		before := r.Version()
		publishOrFail(t, s, st.offer)
		checkOneChange(t, r, wake, before, st.what)
		if pending(wake) {
			t.Errorf("%s woke the watcher twice", st.what)
		}
		checkView(t, r, st.what, st.want)
	}
	if _, err := r.GetPrompt(context.Background(), "p1", nil); !errors.Is(err, tool.ErrUnknownPrompt) {
		t.Errorf("GetPrompt of a replaced prompt: err = %v, want ErrUnknownPrompt", err)
	}
}

func TestPublishOfferSourceLifecycle(t *testing.T) {
	r := tool.NewRegistry()
	wake, stop := r.Watch()
	defer stop()
	// An offer without tools is a change.
	old := mustPublishOffer(t, r, server("srv", []string{"file:///old"}, nil, "p"))
	checkOneChange(t, r, wake, 0, "publishing an offer without tools")
	next := old.Successor()

	// Same server and prompt: no conflict with the predecessor it replaces.
	before := r.Version()
	publishOrFail(t, next, server("srv", []string{"file:///new"}, nil, "p"))
	checkOneChange(t, r, wake, before, "the takeover")
	want := view{Resources: []string{"srv file:///new"}, Prompts: []string{"p"}, Servers: []string{"srv"}}
	checkView(t, r, "after the takeover", want)
	if err := old.PublishOffer(server("srv", nil, nil, "p")); !errors.Is(err, tool.ErrSuperseded) {
		t.Errorf("PublishOffer on the superseded source: err = %v, want ErrSuperseded", err)
	}
	old.Close()
	checkView(t, r, "after closing the superseded source", want)
	res, err := r.ReadResource(context.Background(), "srv", "file:///new")
	if err != nil || res.Content[0].Text != "srv read file:///new" {
		t.Errorf("ReadResource after the takeover = %+v, %v; want the successor's read", res, err)
	}

	// Clear of an offer without tools is a change too, and frees the names.
	before = r.Version()
	next.Clear()
	checkOneChange(t, r, wake, before, "Clear")
	checkView(t, r, "after Clear", view{})
	if _, err := r.ReadResource(context.Background(), "srv", "file:///new"); !errors.Is(err, tool.ErrNoServer) {
		t.Errorf("ReadResource after Clear: err = %v, want ErrNoServer", err)
	}
	other := mustPublishOffer(t, r, server("srv", nil, nil, "p")) // both free again
	other.Close()

	publishOrFail(t, next, server("srv", []string{"file:///again"}, nil))
	before = r.Version()
	next.Close()
	checkOneChange(t, r, wake, before, "Close")
	checkView(t, r, "after Close", view{})
}

// TestPublishOfferWithoutOfferKinds: Read or Subscribe alone publish no
// server (nothing to read, list or complete).
func TestPublishOfferWithoutOfferKinds(t *testing.T) {
	r := tool.NewRegistry()
	s := mustPublishOffer(t, r, tool.Offer{
		Server: "srv", Read: readBy("srv"),
		Subscribe: func(context.Context, string) error { return nil },
	})
	defer s.Close()
	checkView(t, r, "after an offer of nothing", view{})
	if r.Version() != 0 {
		t.Errorf("Version = %d after an offer of nothing, want 0", r.Version())
	}
}

func TestPublishOfferRejects(t *testing.T) {
	badWire := json.RawMessage(`{"uri":`)
	withRes := func(res ...tool.Resource) tool.Offer {
		return tool.Offer{Server: "s", Resources: res, Read: readBy("s")}
	}
	withTmpl := func(ts ...tool.ResourceTemplate) tool.Offer {
		return tool.Offer{Server: "s", Templates: ts, Read: readBy("s")}
	}
	withPrompts := func(ps ...tool.Prompt) tool.Offer { return tool.Offer{Server: "s", Prompts: ps} }
	tests := []struct {
		name     string
		offer    tool.Offer
		wantErr  string
		conflict bool   // wraps ErrConflict
		kind     string // the *ConflictError's Kind, when conflict
	}{
		{
			name:    "prompts without a server",
			offer:   tool.Offer{Prompts: prompts("p")},
			wantErr: "offer: resources, templates, prompts, skills or completion need a Server",
		},
		{
			name:    "completion without a server",
			offer:   tool.Offer{Complete: echoComplete},
			wantErr: "offer: resources, templates, prompts, skills or completion need a Server",
		},
		{
			name:    "skills without a server",
			offer:   tool.Offer{Skills: []tool.Skill{skill("", "mcp__notes")}},
			wantErr: "offer: resources, templates, prompts, skills or completion need a Server",
		},
		{
			name:    "resources without Read",
			offer:   tool.Offer{Server: "s", Resources: resources("file:///a")},
			wantErr: `offer of server "s": resources without a Read function`,
		},
		{
			name:    "templates without Read",
			offer:   tool.Offer{Server: "s", Templates: templates("file:///{a}")},
			wantErr: `offer of server "s": resources without a Read function`,
		},
		{
			name:    "resource without URI",
			offer:   withRes(tool.Resource{URI: "file:///a"}, tool.Resource{Name: "nameless"}),
			wantErr: `offer of server "s": resource at index 1 has no URI or another server`,
		},
		{
			name:    "resource of another server",
			offer:   withRes(tool.Resource{URI: "file:///a", Server: "other"}),
			wantErr: `offer of server "s": resource at index 0 has no URI or another server`,
		},
		{
			name:    "resource with invalid Wire",
			offer:   withRes(tool.Resource{URI: "file:///a", Wire: badWire}),
			wantErr: `resource "file:///a": Wire is not valid JSON: unexpected end of JSON input`,
		},
		{
			name:    "resource listed twice",
			offer:   withRes(tool.Resource{URI: "file:///a"}, tool.Resource{URI: "file:///a"}),
			wantErr: `offer of server "s": URI "file:///a" listed twice`,
		},
		{
			name:    "template listed twice",
			offer:   withTmpl(tool.ResourceTemplate{URITemplate: "file:///{a}"}, tool.ResourceTemplate{URITemplate: "file:///{a}"}),
			wantErr: `offer of server "s": URI template "file:///{a}" listed twice`,
		},
		{
			name:    "template without URI template",
			offer:   withTmpl(tool.ResourceTemplate{Name: "t"}),
			wantErr: `offer of server "s": resource template at index 0 has no URI template or another server`,
		},
		{
			name:    "template of another server",
			offer:   withTmpl(tool.ResourceTemplate{URITemplate: "file:///{a}"}, tool.ResourceTemplate{URITemplate: "x://{b}", Server: "other"}),
			wantErr: `offer of server "s": resource template at index 1 has no URI template or another server`,
		},
		{
			name:    "template with invalid Wire",
			offer:   withTmpl(tool.ResourceTemplate{URITemplate: "file:///{a}", Wire: badWire}),
			wantErr: `resource template "file:///{a}": Wire is not valid JSON: unexpected end of JSON input`,
		},
		{
			name:    "prompt without name",
			offer:   withPrompts(promptAs("", "raw")),
			wantErr: `offer of server "s": prompt at index 0 has no name`,
		},
		{
			name:    "prompt without Get",
			offer:   withPrompts(tool.Prompt{Name: "p"}),
			wantErr: `prompt "p": Get is nil`,
		},
		{
			name:    "prompt with invalid Wire",
			offer:   withPrompts(tool.Prompt{Name: "p", Get: promptAs("p", "p").Get, Wire: badWire}),
			wantErr: `prompt "p": Wire is not valid JSON: unexpected end of JSON input`,
		},
		{
			name:     "prompt twice in one offer",
			offer:    withPrompts(prompts("p", "q", "p")...),
			wantErr:  `prompt "p" is already registered`,
			conflict: true, kind: "prompt",
		},
		{
			name:    "bad tool beside a valid offer",
			offer:   tool.Offer{Tools: []tool.Tool{{Name: "t"}}, Server: "s", Prompts: prompts("p")},
			wantErr: `tool "t": Execute is nil`,
		},
		{
			name:     "server published by another source",
			offer:    server("held", []string{"file:///x"}, nil),
			wantErr:  `server "held" is already registered`,
			conflict: true, kind: "server",
		},
		{
			name:     "prompt name held by another server",
			offer:    server("s", nil, nil, "free", "taken"),
			wantErr:  `prompt "taken" is already registered`,
			conflict: true, kind: "prompt",
		},
		{
			name:     "tool name held by another source",
			offer:    tool.Offer{Tools: defs("mine", "held_tool"), Server: "s", Prompts: prompts("free")},
			wantErr:  `tool "held_tool" is already registered`,
			conflict: true, kind: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tool.NewRegistry()
			held := server("held", []string{"file:///held"}, nil, "taken")
			held.Tools = defs("held_tool")
			mustPublishOffer(t, r, held)
			s := mustPublishOffer(t, r, server("s", []string{"file:///mine"}, nil, "mine"))
			before, beforeVersion := viewOf(r), r.Version()

			err := s.PublishOffer(tt.offer)
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("PublishOffer: err = %v, want %q", err, tt.wantErr)
			}
			if got := errors.Is(err, tool.ErrConflict); got != tt.conflict {
				t.Errorf("errors.Is(err, ErrConflict) = %v, want %v", got, tt.conflict)
			}
			if ce, ok := errors.AsType[*tool.ConflictError](err); ok && ce.Kind != tt.kind {
				t.Errorf("ConflictError.Kind = %q, want %q", ce.Kind, tt.kind)
			}
			checkView(t, r, "after the refused offer", before)
			if r.Version() != beforeVersion {
				t.Errorf("Version moved from %d to %d on a refused offer", beforeVersion, r.Version())
			}
		})
	}
}

func TestConflictErrorKindText(t *testing.T) {
	for kind, want := range map[string]string{
		"":       `tool "x" is already registered`,
		"prompt": `prompt "x" is already registered`,
		"server": `server "x" is already registered`,
	} {
		err := fmt.Errorf("publish: %w", &tool.ConflictError{Name: "x", Kind: kind})
		if got := err.Error(); got != "publish: "+want {
			t.Errorf("Kind %q: text = %q, want %q", kind, got, "publish: "+want)
		}
		if !errors.Is(err, tool.ErrConflict) {
			t.Errorf("Kind %q: does not wrap ErrConflict", kind)
		}
	}
}

func TestOfferListings(t *testing.T) {
	r := tool.NewRegistry()
	b := server("b", []string{"b://2", "b://1"}, []string{"b://{z}", "b://{a}"}, "zeta", "alpha")
	b.Subscribe = func(context.Context, string) error { return nil }
	mustPublishOffer(t, r, b)
	a := server("a", []string{"a://1"}, []string{"a://{x}"})
	a.Resources[0] = tool.Resource{URI: "a://1", Name: "one", Title: "One", Description: "first", MIMEType: "text/plain", Wire: json.RawMessage(`{"uri":"a://1"}`)}
	a.HideResources = true
	mustPublishOffer(t, r, a)
	c := server("c", nil, nil, "mid")
	c.Complete = echoComplete
	mustPublishOffer(t, r, c)
	mustPublishOffer(t, r, tool.Offer{Server: "d", Complete: echoComplete})

	checkView(t, r, "listings", view{
		Resources: []string{"a a://1", "b b://2", "b b://1"},
		Templates: []string{"a a://{x}", "b b://{z}", "b b://{a}"},
		Prompts:   []string{"alpha", "mid", "zeta"},
		Servers:   []string{"a", "b", "c", "d"},
	})
	wantA := tool.Resource{Server: "a", URI: "a://1", Name: "one", Title: "One", Description: "first", MIMEType: "text/plain", Wire: json.RawMessage(`{"uri":"a://1"}`)}
	if diff := cmp.Diff(wantA, r.Resources()[0]); diff != "" {
		t.Errorf("first resource (-want +got):\n%s", diff)
	}
	r.Resources()[0].URI = "changed" // the slice is fresh
	r.ResourceTemplates()[0].URITemplate = "changed"
	if r.Resources()[0].URI != "a://1" || r.ResourceTemplates()[0].URITemplate != "a://{x}" {
		t.Error("modifying a returned listing changed the registry")
	}
	want := []tool.ServerOffer{
		{Server: "a", Resources: true, HideResources: true},
		{Server: "b", Resources: true, Prompts: true, Subscribe: true},
		{Server: "c", Prompts: true, Complete: true},
		{Server: "d", Complete: true},
	}
	if diff := cmp.Diff(want, r.Servers()); diff != "" {
		t.Errorf("Servers (-want +got):\n%s", diff)
	}
}

func TestEmptyRegistryListsNothing(t *testing.T) {
	r := tool.NewRegistry()
	checkView(t, r, "empty registry", view{})
	if got := r.ResourceServers("file:///a"); len(got) != 0 {
		t.Errorf("ResourceServers on an empty registry = %v", got)
	}
}

func TestResourceServers(t *testing.T) {
	r := tool.NewRegistry()
	mustPublishOffer(t, r, server("c", []string{"file:///x"}, nil))
	mustPublishOffer(t, r, server("b", []string{"file:///y"}, []string{"file:///{name}"}))
	mustPublishOffer(t, r, server("a", []string{"file:///x"}, []string{"file:///{name}"}))
	mustPublishOffer(t, r, server("d", nil, []string{"file:///{bad", "docs://{+path}"}))
	tests := []struct {
		uri  string
		want []string
	}{
		{uri: "file:///x", want: []string{"a", "c", "b"}}, // listed first, then templated
		{uri: "file:///y", want: []string{"b", "a"}},
		{uri: "file:///z", want: []string{"a", "b"}},
		{uri: "docs://guide/intro.md", want: []string{"d"}},
		{uri: "file:///x/y", want: nil}, // {name} does not match a slash
		{uri: "other://z", want: nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, r.ResourceServers(tt.uri)); diff != "" {
			t.Errorf("ResourceServers(%q) (-want +got):\n%s", tt.uri, diff)
		}
	}
}

func TestTemplateMatches(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		want      bool
	}{
		{"file:///{name}", "file:///a.txt", true},
		{"file:///{name}", "file:///dir/a.txt", false},
		{"file:///{+path}", "file:///dir/a.txt", true},
		{"db://{table}/{id}", "db://users/42", true},
		{"db://{table}/{id}", "http://users/42", false},
		{"file:///fixed", "file:///fixed", true},
		{"file:///fixed", "file:///other", false},
		{"file:///{unclosed", "file:///{unclosed", false}, // does not parse: matches nothing
		{"file:///{unclosed", "file:///a", false},
	}
	for _, tt := range tests {
		if got := tool.TemplateMatches(tt.tmpl, tt.uri); got != tt.want {
			t.Errorf("TemplateMatches(%q, %q) = %v, want %v", tt.tmpl, tt.uri, got, tt.want)
		}
	}
}

// cancelled returns a context that is already cancelled.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestReadResource(t *testing.T) {
	r := tool.NewRegistry()
	mustPublishOffer(t, r, server("files", []string{"file:///a"}, nil))
	mustPublishOffer(t, r, server("talk", nil, nil, "hi"))
	tests := []struct {
		name        string
		ctx         context.Context
		server, uri string
		want        tool.ReadResult
		wantErr     string
		is          error // errors.Is(err, is)
	}{
		{
			name: "listed", ctx: context.Background(), server: "files", uri: "file:///a",
			want: tool.ReadResult{Content: []tool.Content{tool.Text("files read file:///a")}, Wire: json.RawMessage(`{"contents":[{"uri":"file:///a"}]}`)},
		},
		{
			name: "unlisted: the server decides", ctx: context.Background(), server: "files", uri: "file:///b",
			want: tool.ReadResult{Content: []tool.Content{tool.Text("files read file:///b")}, Wire: json.RawMessage(`{"contents":[{"uri":"file:///b"}]}`)},
		},
		{
			name: "server error as it is", ctx: context.Background(), server: "files", uri: "missing:x",
			wantErr: "resource not found: missing:x", is: errNotFound,
		},
		{
			name: "unknown server", ctx: context.Background(), server: "nope", uri: "file:///a",
			wantErr: `no such server "nope" offers resources or prompts`, is: tool.ErrNoServer,
		},
		{
			name: "server without resources", ctx: context.Background(), server: "talk", uri: "file:///a",
			wantErr: `server "talk": resources are not offered by the server`, is: tool.ErrUnsupported,
		},
		{
			name: "cancelled", ctx: cancelled(), server: "files", uri: "file:///a",
			wantErr: "context canceled", is: context.Canceled,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.ReadResource(tt.ctx, tt.server, tt.uri)
			checkResult(t, got, err, tt.want, tt.wantErr, tt.is)
		})
	}
}

// checkResult fails the test unless got is want and err is as checkErr
// wants it.
func checkResult[T any](t *testing.T, got T, err error, want T, wantErr string, is error) {
	t.Helper()
	checkErr(t, err, wantErr, is)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

// checkErr fails the test unless err has the text want ("" for no error)
// and wraps is (when not nil).
func checkErr(t *testing.T, err error, want string, is error) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
		return
	}
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if is != nil && !errors.Is(err, is) {
		t.Errorf("err %v does not wrap %v", err, is)
	}
}

func TestGetPrompt(t *testing.T) {
	r := tool.NewRegistry()
	o := server("talk", nil, nil)
	o.Prompts = []tool.Prompt{promptAs("mcp__talk__greet", "greet")}
	mustPublishOffer(t, r, o)
	tests := []struct {
		name, prompt string
		ctx          context.Context
		want         tool.PromptResult
		wantErr      string
		is           error
	}{
		{
			name: "public name with args", prompt: "mcp__talk__greet", ctx: context.Background(),
			want: tool.PromptResult{
				Description: "rendered greet",
				Messages:    []tool.PromptMessage{{Role: "user", Content: []tool.Content{tool.Text("hello ann")}}},
			},
		},
		{
			name: "raw name is not public", prompt: "greet", ctx: context.Background(),
			wantErr: `unknown prompt "greet"`, is: tool.ErrUnknownPrompt,
		},
		{
			name: "unknown", prompt: "x", ctx: context.Background(),
			wantErr: `unknown prompt "x"`, is: tool.ErrUnknownPrompt,
		},
		{
			name: "cancelled", prompt: "mcp__talk__greet", ctx: cancelled(),
			wantErr: "context canceled", is: context.Canceled,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.GetPrompt(tt.ctx, tt.prompt, map[string]string{"who": "ann"})
			checkResult(t, got, err, tt.want, tt.wantErr, tt.is)
		})
	}
}

func TestComplete(t *testing.T) {
	r := tool.NewRegistry()
	a := server("a", nil, []string{"db://{table}", "a://{x}"})
	a.Prompts = []tool.Prompt{promptAs("mcp__a__ask", "ask")}
	a.Complete = echoComplete
	mustPublishOffer(t, r, a)
	b := server("b", nil, []string{"db://{table}"})
	b.Complete = echoComplete
	mustPublishOffer(t, r, b)
	mustPublishOffer(t, r, server("c", nil, []string{"c://{x}"}, "plain")) // no completion
	arg := tool.CompletionArgument{Name: "table", Value: "us"}
	ctx := map[string]string{"k": "v"}
	tests := []struct {
		name    string
		req     tool.CompleteRequest
		want    []string // the request the server saw, as echoComplete flattens it
		wantErr string
		is      error
	}{
		{
			name: "prompt by public name, sent by raw name",
			req:  tool.CompleteRequest{Ref: tool.CompletionRef{Type: tool.RefPrompt, Name: "mcp__a__ask"}, Argument: arg, Context: ctx},
			want: []string{"a", tool.RefPrompt, "ask", "", "table", "us", "v"},
		},
		{
			name: "template: first server by name",
			req:  tool.CompleteRequest{Ref: tool.CompletionRef{Type: tool.RefResource, URI: "db://{table}"}, Argument: arg},
			want: []string{"a", tool.RefResource, "", "db://{table}", "table", "us", ""},
		},
		{
			name: "template: the server asked for",
			req:  tool.CompleteRequest{Server: "b", Ref: tool.CompletionRef{Type: tool.RefResource, URI: "db://{table}"}, Argument: arg},
			want: []string{"b", tool.RefResource, "", "db://{table}", "table", "us", ""},
		},
		{
			name:    "template the asked server does not list",
			req:     tool.CompleteRequest{Server: "b", Ref: tool.CompletionRef{Type: tool.RefResource, URI: "a://{x}"}},
			wantErr: `no such server lists the resource template "a://{x}"`, is: tool.ErrNoServer,
		},
		{
			name:    "template nobody lists",
			req:     tool.CompleteRequest{Ref: tool.CompletionRef{Type: tool.RefResource, URI: "db://{id}"}},
			wantErr: `no such server lists the resource template "db://{id}"`, is: tool.ErrNoServer,
		},
		{
			name:    "unknown prompt",
			req:     tool.CompleteRequest{Ref: tool.CompletionRef{Type: tool.RefPrompt, Name: "ask"}},
			wantErr: `unknown prompt "ask"`, is: tool.ErrUnknownPrompt,
		},
		{
			name:    "prompt of a server without completion",
			req:     tool.CompleteRequest{Ref: tool.CompletionRef{Type: tool.RefPrompt, Name: "plain"}},
			wantErr: `server "c": completion is not offered by the server`, is: tool.ErrUnsupported,
		},
		{
			name:    "template of a server without completion",
			req:     tool.CompleteRequest{Ref: tool.CompletionRef{Type: tool.RefResource, URI: "c://{x}"}},
			wantErr: `server "c": completion is not offered by the server`, is: tool.ErrUnsupported,
		},
		{
			name:    "unsupported reference type",
			req:     tool.CompleteRequest{Ref: tool.CompletionRef{Type: "ref/tool", Name: "x"}},
			wantErr: `completion reference type "ref/tool" is neither "ref/prompt" nor "ref/resource"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want tool.Completion
			if tt.wantErr == "" {
				want = tool.Completion{Values: tt.want, Total: 7, HasMore: true}
			}
			got, err := r.Complete(context.Background(), tt.req)
			checkResult(t, got, err, want, tt.wantErr, tt.is)
		})
	}
}
