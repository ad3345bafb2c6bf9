package view

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/mcpbridge/mcpbridge/chattools"
	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// chatMessage is one message of a chat-completions request.
type chatMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// chatRequest is a DeepSeek (OpenAI-compatible) chat-completions request.
type chatRequest struct {
	Model    string           `json:"model"`
	Messages []chatMessage    `json:"messages"`
	Tools    []chattools.Tool `json:"tools"`
}

// thirtyConfig is the config of the thirty catalog servers, time always
// loaded, behind a tool-search entry with search on and two pins (a name
// and a glob).
func thirtyConfig(t *testing.T) (string, map[string]*mcppeer.CatalogServer) {
	entries, servers := mcptest.CatalogEntries(t, "time")
	return entries + "- {id: search, name: tool-search, config: {mode: on, pinned: [mcp__github__create_issue, \"mcp__filesystem__read_*\"]}}\n", servers
}

// The "done when": thirty servers configured, the request a
// harness sends DeepSeek carries the pinned tools plus search_tools; the
// model finds the tool it needs in one search, in a user's words; the
// next request carries it, and the call reaches the right server.
func TestThirtyServers(t *testing.T) {
	src, servers := thirtyConfig(t)
	reg, k, h := startHost(t, src)
	if st := h.Status(); len(st) != 31 {
		t.Fatalf("status %+v", st)
	}

	req := chatRequest{Model: "deepseek-chat", Messages: []chatMessage{
		{Role: "system", Content: "You are a helpful assistant with tools."},
		{Role: "user", Content: "The login page crashes when I submit the form. Can you file a bug for it in our GitLab project 4512?"},
	}}
	first := requestTools(t, k, &req)
	want := []string{"mcp__filesystem__read_file", "mcp__github__create_issue", "mcp__time__convert_time", "mcp__time__get_current_time", toolview.SearchName}
	if !slices.Equal(first, want) {
		t.Fatalf("the first request carries %v, want %v", first, want)
	}
	logBudget(t, k)

	// The model's turn: one search in the user's words.
	found := modelCalls(t, reg, &req, toolview.SearchName, `{"query":"file a bug in our GitLab project: the login page crashes on submit"}`)
	var matches struct{ Tools []toolview.Found }
	if err := json.Unmarshal([]byte(found), &matches); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range matches.Tools {
		names = append(names, m.Name)
	}
	if !slices.Contains(names, "mcp__gitlab__create_issue") {
		t.Fatalf("one search found %v, without mcp__gitlab__create_issue", names)
	}
	second := requestTools(t, k, &req)
	if want := slices.Compact(slices.Sorted(slices.Values(append(first, names...)))); !slices.Equal(second, want) {
		t.Errorf("the next request carries %v, want %v: the first request's and the matches", second, want)
	}

	answer := modelCalls(t, reg, &req, "mcp__gitlab__create_issue", `{"project_id":"4512","title":"Login page crashes on submit"}`)
	if answer != `gitlab/create_issue {"project_id":"4512","title":"Login page crashes on submit"}` {
		t.Errorf("the call answered %q", answer)
	}
	for name, s := range servers {
		if n := s.Calls(); n != map[bool]int64{true: 1}[name == "gitlab"] {
			t.Errorf("server %s answered %d calls", name, n)
		}
	}
}

// requestTools sets the request's tools to what the view shows now, as a
// harness does before each request, checks that the request marshals,
// and returns the tools' names.
func requestTools(t *testing.T, k *Kind, req *chatRequest) []string {
	t.Helper()
	tools, err := k.View().Tools()
	if err != nil {
		t.Fatal(err)
	}
	req.Tools = req.Tools[:0]
	var names []string
	for _, tl := range tools {
		req.Tools = append(req.Tools, chattools.Of(tl))
		names = append(names, tl.Name)
	}
	if _, err := json.Marshal(req); err != nil {
		t.Fatal(err)
	}
	return names
}

// modelCalls plays one model turn calling name with args, runs the call
// through the registry, appends both messages to req and returns the
// tool's answer.
func modelCalls(t *testing.T, reg *tool.Registry, req *chatRequest, name, args string) string {
	t.Helper()
	id := "call_" + name
	req.Messages = append(req.Messages, chatMessage{Role: "assistant", ToolCalls: []chatToolCall{{ID: id, Type: "function", Function: chatFunction{Name: name, Arguments: args}}}})
	res, err := reg.Execute(context.Background(), name, json.RawMessage(args))
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %s", name, err, res.Text())
	}
	req.Messages = append(req.Messages, chatMessage{Role: "tool", ToolCallID: id, Content: res.Text()})
	return res.Text()
}

// logBudget checks that the view's tools take at most a tenth of the
// whole catalog's tokens, and logs both.
func logBudget(t *testing.T, k *Kind) {
	t.Helper()
	all, err := k.View().CatalogTokens()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := k.View().Tools()
	if err != nil {
		t.Fatal(err)
	}
	seen, err := tokens.Total(tools)
	if err != nil || seen*10 > all {
		t.Errorf("the request's tools take %d tokens of the catalog's %d (%v): want at most 10%%", seen, all, err)
	}
	t.Logf("thirty servers: the first request carries %d tools, %d tokens (%s); the whole catalog takes %d", len(tools), seen, tokens.Encoding, all)
}

// More requests worded the way users ask, each against look-alikes: one
// search (default limit, 5) finds the tool.
func TestThirtyServersOneSearch(t *testing.T) {
	src, _ := thirtyConfig(t)
	reg, _, _ := startHost(t, src)
	for _, c := range []struct{ request, want string }{
		{"grab a screenshot of the checkout page with puppeteer", "mcp__puppeteer__puppeteer_screenshot"},
		{"show me the last 50 lines of logs from the api pod", "mcp__kubernetes__kubectl_logs"},
		{"post a message in the #deploys slack channel saying the release is out", "mcp__slack__slack_post_message"},
		{"refund the last payment from customer acme", "mcp__stripe__create_refund"},
		{"send an email to bob about the meeting", "mcp__gmail__send_email"},
		{"commit my changes with the message fix typo", "mcp__git__git_commit"},
		// No word in common with the tool: the lexicon relates them.
		{"is it going to rain in Lisbon today", "mcp__weather__get_forecast"},
		{"remind me to renew my passport next week", "mcp__todoist__add_task"},
	} {
		args, _ := json.Marshal(map[string]string{"query": c.request})
		res, err := reg.Execute(context.Background(), toolview.SearchName, args)
		var found struct{ Tools []toolview.Found }
		if err != nil || res.IsError || json.Unmarshal(res.Value, &found) != nil {
			t.Fatalf("%q: %v %s", c.request, err, res.Text())
		}
		if !slices.ContainsFunc(found.Tools, func(f toolview.Found) bool { return f.Name == c.want }) {
			t.Errorf("%q found %s, without %s", c.request, res.Text(), c.want)
		}
	}
}

// startHost applies src, a config of mcp-client and tool-search entries,
// to a new host until the end of the test, and checks that every entry is
// ready.
func startHost(t *testing.T, src string) (*tool.Registry, *Kind, *host.Host) {
	t.Helper()
	k := NewKind()
	cat := host.NewCatalog(clientkind.NewKind(clientkind.KindOptions{Server: mcpclient.Options{Environ: os.Environ()}}), k)
	reg := tool.NewRegistry()
	h, err := host.New(host.Options{Catalog: cat, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	apply(t, h, cat, src)
	for _, st := range h.Status() {
		if st.State != host.StateReady {
			t.Fatalf("%s: %s %s", st.ID, st.State, st.Err)
		}
	}
	return reg, k, h
}
