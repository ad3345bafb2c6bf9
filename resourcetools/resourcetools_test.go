package resourcetools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/resourcetools"
	"github.com/mcpbridge/mcpbridge/tool"
)

// both is what the registry lists while the tools are registered.
const both = resourcetools.ListName + " " + resourcetools.ReadName

// read answers "text of <uri>" with a wire result holding the same, and
// fails for URIs under missing:.
func read(_ context.Context, uri string) (tool.ReadResult, error) {
	if strings.HasPrefix(uri, "missing:") {
		return tool.ReadResult{}, errors.New("resource not found: " + uri)
	}
	wire := fmt.Sprintf(`{"contents":[{"uri":%q,"text":"text of %s"}]}`, uri, uri)
	return tool.ReadResult{Content: []tool.Content{tool.Text("text of " + uri)}, Wire: json.RawMessage(wire)}, nil
}

// offerOf is an offer of server with resources at uris and templates tmpls.
func offerOf(server string, uris []string, tmpls ...string) tool.Offer {
	o := tool.Offer{Server: server, Read: read}
	for _, u := range uris {
		o.Resources = append(o.Resources, tool.Resource{URI: u})
	}
	for _, tt := range tmpls {
		o.Templates = append(o.Templates, tool.ResourceTemplate{URITemplate: tt})
	}
	return o
}

// hidden is o kept out of the model-facing tools.
func hidden(o tool.Offer) tool.Offer {
	o.HideResources = true
	return o
}

// promptsOnly is an offer of server with one prompt and no resources.
func promptsOnly(server string) tool.Offer {
	get := func(context.Context, map[string]string) (tool.PromptResult, error) { return tool.PromptResult{}, nil }
	return tool.Offer{Server: server, Prompts: []tool.Prompt{{Name: server + "_prompt", Get: get}}}
}

// publish publishes o through s, or fails the test; it returns s.
func publish(t *testing.T, s *tool.Source, o tool.Offer) *tool.Source {
	t.Helper()
	if err := s.PublishOffer(o); err != nil {
		t.Fatalf("PublishOffer(%s): %v", o.Server, err)
	}
	return s
}

// follow starts following reg until the test ends.
func follow(t *testing.T, reg *tool.Registry) *resourcetools.Follower {
	f := resourcetools.Follow(reg)
	t.Cleanup(f.Stop)
	return f
}

// names returns the names of reg's tools, space-separated.
func names(reg *tool.Registry) string {
	var b strings.Builder
	for _, tl := range reg.List() {
		b.WriteString(" " + tl.Name)
	}
	return strings.TrimPrefix(b.String(), " ")
}

// execute runs name with args through the registry, the one call path.
func execute(t *testing.T, reg *tool.Registry, name, args string) tool.Result {
	t.Helper()
	res, err := reg.Execute(context.Background(), name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("Execute(%s, %s): %v", name, args, err)
	}
	return res
}

func TestFollowRegistersTheToolsWhileResourcesAreOffered(t *testing.T) {
	reg := tool.NewRegistry()
	f := follow(t, reg)
	files, prompts, tmpl := reg.NewSource(), reg.NewSource(), reg.NewSource()
	steps := []struct {
		what string
		do   func()
		want string // the tools listed after it
	}{
		{what: "nothing offered", do: func() {}},
		{what: "a hidden server", do: func() { publish(t, reg.NewSource(), hidden(offerOf("secret", []string{"s://1"}))) }},
		{what: "a server of prompts", do: func() { publish(t, prompts, promptsOnly("talk")) }},
		{what: "a server of templates", do: func() { publish(t, tmpl, offerOf("tmpl", nil, "t://{x}")) }, want: both},
		{what: "a second server", do: func() { publish(t, files, offerOf("files", []string{"f://1"})) }, want: both},
		{what: "the first one leaves", do: tmpl.Close, want: both},
		{what: "the last one hides", do: func() { publish(t, files, hidden(offerOf("files", []string{"f://1"}))) }},
		{what: "it shows again", do: func() { publish(t, files, offerOf("files", []string{"f://1"})) }, want: both},
		{what: "it keeps prompts only", do: func() { publish(t, files, promptsOnly("files")) }},
		{what: "it offers resources again", do: func() { publish(t, files, offerOf("files", []string{"f://2"})) }, want: both},
		{what: "it is cleared", do: files.Clear},
		{what: "it comes back", do: func() { publish(t, files, offerOf("files", []string{"f://3"})) }, want: both},
	}
	for _, st := range steps {
		st.do()
		f.Refresh() // synchronous: the tools are up to date when it returns
		if got := names(reg); got != st.want {
			t.Errorf("%s: tools %q, want %q", st.what, got, st.want)
		}
	}

	f.Stop()
	if got := names(reg); got != "" {
		t.Errorf("after Stop: tools %q, want none", got)
	}
	f.Stop() // idempotent
	f.Refresh()
	if got := names(reg); got != "" {
		t.Errorf("Refresh after Stop registered %q", got)
	}
}

// TestFollowFollowsChanges: without Refresh the tools come and go as the
// registry changes.
func TestFollowFollowsChanges(t *testing.T) {
	reg := tool.NewRegistry()
	follow(t, reg)
	src := publish(t, reg.NewSource(), offerOf("files", []string{"f://1"}))
	waitForTools(t, reg, both)
	src.Close()
	waitForTools(t, reg, "")
}

// waitForTools waits until reg lists want, re-reading it on every change;
// it gives up after a minute (a hang, not a slow machine).
func waitForTools(t *testing.T, reg *tool.Registry, want string) {
	t.Helper()
	changed, cancel := reg.Watch()
	defer cancel()
	deadline := time.After(time.Minute)
	for names(reg) != want {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the registry never listed %q (it lists %q)", want, names(reg))
		}
	}
}

// TestFollowYieldsToAGoTool: a Go tool holding one of the names keeps it
// (and the other tool is not registered alone) until it leaves.
func TestFollowYieldsToAGoTool(t *testing.T) {
	reg := tool.NewRegistry()
	squatter, err := reg.Register(tool.Tool{Name: resourcetools.ListName, Description: "mine", Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text("the Go tool")}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	f := follow(t, reg)
	publish(t, reg.NewSource(), offerOf("files", []string{"f://1"}))
	f.Refresh()
	if got := execute(t, reg, resourcetools.ListName, "{}").Text(); got != "the Go tool" || names(reg) != resourcetools.ListName {
		t.Errorf("with a Go tool named %s: tools %q, it answers %q; want the Go tool alone", resourcetools.ListName, names(reg), got)
	}
	squatter.Unregister()
	f.Refresh()
	if got := names(reg); got != both {
		t.Errorf("after the Go tool left: tools %q, want %q", got, both)
	}
	if res := execute(t, reg, resourcetools.ListName, "{}"); res.IsError || !strings.Contains(res.Text(), `"f://1"`) {
		t.Errorf("after the Go tool left, %s answers %q", resourcetools.ListName, res.Text())
	}
}

func TestToolDefinitions(t *testing.T) {
	for _, tl := range resourcetools.Tools(tool.NewRegistry()) {
		for what, raw := range map[string]json.RawMessage{"input schema": tl.InputSchema, "annotations": tl.Annotations} {
			var v map[string]any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Errorf("%s: %s is not a JSON object: %v", tl.Name, what, err)
			}
		}
		if strings.HasPrefix(tl.Name, "mcp__") || tl.Description == "" {
			t.Errorf("%s: name starts with mcp__ or description is empty", tl.Name)
		}
	}
}

// registryOfServers is a followed registry with a server of resources and
// a template (a), a hidden one (b), one of resources only (c) and one of
// prompts (p).
func registryOfServers(t *testing.T) *tool.Registry {
	reg := tool.NewRegistry()
	a := offerOf("a", []string{"a://1", "a://2"}, "a://{x}")
	a.Resources[0] = tool.Resource{URI: "a://1", Name: "one", Title: "One", Description: "the first", MIMEType: "text/plain", Wire: json.RawMessage(`{"uri":"a://1","size":3}`)}
	a.Templates[0] = tool.ResourceTemplate{URITemplate: "a://{x}", Name: "x", Title: "X", Description: "by x", MIMEType: "text/csv"}
	publish(t, reg.NewSource(), a)
	publish(t, reg.NewSource(), hidden(offerOf("b", []string{"b://1"}, "b://{x}")))
	publish(t, reg.NewSource(), offerOf("c", []string{"c://1"}))
	publish(t, reg.NewSource(), promptsOnly("p"))
	follow(t, reg).Refresh()
	return reg
}

// call is one execution of a resource tool and what it must answer.
type call struct {
	name, args string
	want       string // the text on success (and, for the list, the value)
	wantErr    string // the text of the failure: "Error: " + wantErr
}

// checkCall executes c and checks its result.
func checkCall(t *testing.T, reg *tool.Registry, c call) tool.Result {
	t.Helper()
	res := execute(t, reg, c.name, c.args)
	if c.wantErr != "" {
		if !res.IsError || !strings.HasPrefix(res.Text(), "Error: "+c.wantErr) || res.Error.Code != "" {
			t.Errorf("%s %s = %+v, want a tool failure %q", c.name, c.args, res, "Error: "+c.wantErr)
		}
		return res
	}
	if res.IsError || res.Text() != c.want {
		t.Errorf("%s %s = %q (isError %v), want %q", c.name, c.args, res.Text(), res.IsError, c.want)
	}
	return res
}

func TestListTool(t *testing.T) {
	reg := registryOfServers(t)
	const aFirst = `{"server":"a","uri":"a://1","name":"one","title":"One","description":"the first","mimeType":"text/plain"},{"server":"a","uri":"a://2"}`
	const aTemplates = `"resourceTemplates":[{"server":"a","uriTemplate":"a://{x}","name":"x","title":"X","description":"by x","mimeType":"text/csv"}]`
	tests := []call{
		{args: ``, want: `{"resources":[` + aFirst + `,{"server":"c","uri":"c://1"}],` + aTemplates + `}`},
		{args: `{}`, want: `{"resources":[` + aFirst + `,{"server":"c","uri":"c://1"}],` + aTemplates + `}`},
		{args: `{"server":"a"}`, want: `{"resources":[` + aFirst + `],` + aTemplates + `}`},
		{args: `{"server":"c"}`, want: `{"resources":[{"server":"c","uri":"c://1"}]}`},
		{args: `{"cursor":"3"}`, want: `{"resources":[]}`}, // past the end: nothing, no templates
		{args: `{"server":"c","cursor":"1"}`, want: `{"resources":[]}`},
		{args: `{"server":"b"}`, wantErr: `no server "b" offers resources`}, // hidden
		{args: `{"server":"p"}`, wantErr: `no server "p" offers resources`},
		{args: `{"server":"nope"}`, wantErr: `no server "nope" offers resources`},
		{args: `{"cursor":"next"}`, wantErr: `invalid cursor "next": pass the nextCursor of a previous answer`},
		{args: `{"cursor":"-1"}`, wantErr: `invalid cursor "-1": pass the nextCursor of a previous answer`},
		{args: `[]`, wantErr: `invalid arguments: json: cannot unmarshal array`},
	}
	for _, c := range tests {
		c.name = resourcetools.ListName
		res := checkCall(t, reg, c)
		if c.wantErr == "" && string(res.Value) != c.want {
			t.Errorf("list %s: value %s, want the text %s", c.args, res.Value, c.want)
		}
	}
}

// page is the part of a listing the pagination test reads.
type page struct {
	Resources []struct {
		URI string `json:"uri"`
	} `json:"resources"`
	Templates  []json.RawMessage `json:"resourceTemplates"`
	NextCursor string            `json:"nextCursor"`
}

func TestListToolPages(t *testing.T) {
	reg := tool.NewRegistry()
	var uris []string
	for i := range 250 {
		uris = append(uris, fmt.Sprintf("big://%03d", i))
	}
	publish(t, reg.NewSource(), offerOf("big", uris, "big://{n}"))
	follow(t, reg).Refresh()

	var got []string
	var sizes, templates []int
	var cursors []string
	args := `{}`
	for range 10 { // bounded: a cursor that never ends fails below
		res := execute(t, reg, resourcetools.ListName, args)
		var p page
		if err := json.Unmarshal(res.Value, &p); err != nil {
			t.Fatalf("page %s: %v (%s)", args, err, res.Text())
		}
		for _, r := range p.Resources {
			got = append(got, r.URI)
		}
		sizes, templates, cursors = append(sizes, len(p.Resources)), append(templates, len(p.Templates)), append(cursors, p.NextCursor)
		if p.NextCursor == "" {
			break
		}
		args = `{"cursor":"` + p.NextCursor + `"}`
	}
	if diff := cmp.Diff(uris, got); diff != "" {
		t.Errorf("resources over all pages (-want +got):\n%s", diff)
	}
	for what, d := range map[string]string{
		"page sizes":         cmp.Diff([]int{100, 100, 50}, sizes),
		"templates per page": cmp.Diff([]int{1, 0, 0}, templates),
		"cursors":            cmp.Diff([]string{"100", "200", ""}, cursors),
	} {
		if d != "" {
			t.Errorf("%s (-want +got):\n%s", what, d)
		}
	}
}

func TestReadTool(t *testing.T) {
	reg := registryOfServers(t)
	const required = "invalid arguments: server and uri are required"
	tests := []call{
		{args: `{"server":"a","uri":"a://1"}`, want: "text of a://1"},
		{args: `{"server":"a","uri":"a://anything"}`, want: "text of a://anything"}, // the server decides
		{args: `{"server":"c","uri":"missing:x"}`, wantErr: "resource not found: missing:x"},
		{args: `{}`, wantErr: required},
		{args: ``, wantErr: required},
		{args: `{"server":"a"}`, wantErr: required},
		{args: `{"uri":"a://1"}`, wantErr: required},
		{args: `"a://1"`, wantErr: "invalid arguments: json: cannot unmarshal string"},
		{args: `{"server":"b","uri":"b://1"}`, wantErr: `no server "b" offers resources`}, // hidden
		{args: `{"server":"p","uri":"a://1"}`, wantErr: `no server "p" offers resources`},
		{args: `{"server":"nope","uri":"a://1"}`, wantErr: `no server "nope" offers resources`},
	}
	for _, c := range tests {
		c.name = resourcetools.ReadName
		checkCall(t, reg, c)
	}

	// Success hands the read's Content and its wire result as the value.
	got := execute(t, reg, resourcetools.ReadName, `{"server":"a","uri":"a://2"}`)
	want := tool.Result{
		Content: []tool.Content{tool.Text("text of a://2")},
		Value:   json.RawMessage(`{"contents":[{"uri":"a://2","text":"text of a://2"}]}`),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read result (-want +got):\n%s", diff)
	}
}
