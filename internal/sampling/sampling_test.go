//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 but servers of 2025-11-25 use it.

package sampling

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) { mcptest.VerifyTestMain(m) }

const testKey = "sk-test-0123456789abcdef"

// fakeAPI is an OpenAI-compatible chat-completions server on 127.0.0.1:
// it records each request and answers with the next scripted reply.
type fakeAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	bodies  []map[string]any
	auths   []string
	paths   []string
	replies []reply
}

type reply struct {
	status int
	body   string
}

func newFakeAPI(t *testing.T, replies ...reply) *fakeAPI {
	f := &fakeAPI{replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(data, &body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.auths = append(f.auths, r.Header.Get("Authorization"))
		f.paths = append(f.paths, r.URL.Path)
		rep := reply{500, "no reply scripted"}
		if len(f.replies) > 0 {
			rep, f.replies = f.replies[0], f.replies[1:]
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) request(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

// started runs a sampling entry (config YAML) through the kind, as a host
// would, with the key set in its environment.
func started(t *testing.T, config string, env map[string]string) (*Provider, *mcptest.Log) {
	t.Helper()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	p := NewProvider()
	k := NewKind(KindOptions{Provider: p, Lookup: lookup, Sleep: noWait})
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(config), &n); err != nil {
		t.Fatal(err)
	}
	spec, err := k.Decode(n.Content[0], lookup)
	if err != nil {
		t.Fatal(err)
	}
	log := mcptest.NewLog()
	in, err := k.Start(context.Background(), spec, host.Env{ID: "sampling", Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	<-in.Ready()
	if st := in.Status(); st.State != host.StateReady || st.PeerName == "" || in.StartErr() != nil {
		t.Errorf("status %+v", st)
	}
	return p, log
}

func noWait(context.Context, time.Duration) error { return nil }

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// weatherParams is a second round of SEP-1577 tool use: the model asked for
// get_weather, the server answers with its result.
func weatherParams(t *testing.T) json.RawMessage {
	return mustJSON(t, &mcp.CreateMessageWithToolsParams{
		SystemPrompt: "Be brief.", MaxTokens: 5000, Temperature: 0.5, StopSequences: []string{"END"},
		Messages: []*mcp.SamplingMessageV2{
			{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "Weather in Paris?"}, &mcp.ImageContent{MIMEType: "image/png", Data: []byte("png")}}},
			{Role: "assistant", Content: []mcp.Content{&mcp.ToolUseContent{ID: "call_1", Name: "get_weather", Input: map[string]any{"city": "Paris"}}}},
			{Role: "user", Content: []mcp.Content{&mcp.ToolResultContent{ToolUseID: "call_1", Content: []mcp.Content{&mcp.TextContent{Text: "sunny"}}}}},
		},
		Tools:      []*mcp.Tool{{Name: "get_weather", Description: "Weather.", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
		ToolChoice: &mcp.ToolChoice{Mode: "required"},
	})
}

// A sampling request becomes a chat-completions request (system prompt,
// image parts, tool calls and tool messages, tools as functions,
// tool_choice, the configured model and token cap, the key as a bearer
// token), and the answer a sampling result with tool_use blocks; each is
// logged with its server, never with the key.
func TestSampleRoundTrip(t *testing.T) {
	api := newFakeAPI(t,
		reply{200, `{"model":"deepseek-chat","choices":[{"message":{"content":"Checking.","tool_calls":[{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lyon\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":12,"completion_tokens":7}}`},
		reply{200, `{"choices":[{"message":{"content":null},"finish_reason":"content_filter"}]}`},
	)
	p, log := started(t, "baseURL: "+api.srv.URL+"/v1\nmaxTokens: 1000\n", map[string]string{DefaultAPIKeyEnv: testKey})
	got, err := p.Sample(context.Background(), "weather", weatherParams(t))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"call_2","name":"get_weather","input":{"city":"Lyon"}}],"model":"deepseek-chat","role":"assistant","stopReason":"toolUse"}`
	if string(got) != want {
		t.Errorf("result\n%s\nwant\n%s", got, want)
	}
	wantReq := map[string]any{
		"model": DefaultModel, "max_tokens": 1000.0, "temperature": 0.5, "stop": []any{"END"}, "tool_choice": "required",
		"messages": []any{
			map[string]any{"role": "system", "content": "Be brief."},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "Weather in Paris?"},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,cG5n"}},
			}},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`},
			}}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
		},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "get_weather", "description": "Weather.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		}}},
	}
	if d := cmp.Diff(wantReq, api.request(0)); d != "" {
		t.Errorf("request (-want +got):\n%s", d)
	}
	if api.auths[0] != "Bearer "+testKey || api.paths[0] != "/v1/chat/completions" {
		t.Errorf("sent to %s with %q", api.paths[0], api.auths[0])
	}
	// An empty answer is still one (empty) text block; an unknown finish
	// reason is passed on; the model defaults to the configured one.
	got, err = p.Sample(context.Background(), "weather", mustJSON(t, &mcp.CreateMessageWithToolsParams{MaxTokens: 10, Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}}}))
	if want := `{"content":{"type":"text","text":""},"model":"` + DefaultModel + `","role":"assistant","stopReason":"content_filter"}`; err != nil || string(got) != want {
		t.Errorf("empty answer: %s, %v; want %s", got, err, want)
	}
	if _, ok := api.request(1)["tools"]; ok || api.request(1)["max_tokens"] != 10.0 {
		t.Errorf("second request: %v", api.request(1))
	}
	if !log.HasRecord(slog.LevelInfo, "sampling request", "server", "weather", "tools", 1) ||
		!log.HasRecord(slog.LevelInfo, "sampling answered", "server", "weather", "stopReason", "toolUse", "promptTokens", 12) {
		t.Errorf("requests not logged with their server:\n%s", log.Text())
	}
	if strings.Contains(log.Text(), testKey) {
		t.Errorf("the key was logged:\n%s", log.Text())
	}
}

// Failures are clear, name the endpoint as written, and never carry the
// key, even when the API echoes it.
func TestSampleErrors(t *testing.T) {
	hi := mustJSON(t, &mcp.CreateMessageWithToolsParams{MaxTokens: 10, Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}}})
	audio := mustJSON(t, &mcp.CreateMessageWithToolsParams{MaxTokens: 10, Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("x")}}}}})
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, c := range []struct {
		name   string
		reply  reply
		url    string // instead of the fake API's
		env    map[string]string
		params json.RawMessage
		want   string
	}{
		{"rejected key", reply{401, `{"error":{"message":"Authentication Fails, Your api key: ` + testKey + ` is invalid","type":"authentication_error"}}`}, "", nil, hi,
			"answered 401 Unauthorized: Authentication Fails, Your api key: [redacted] is invalid"},
		{"server error", reply{502, "bad gateway " + strings.Repeat("x", 400)}, "", nil, hi, "answered 502 Bad Gateway: bad gateway xxx"},
		{"not JSON", reply{200, `<html>`}, "", nil, hi, "the answer is not a chat completion"},
		{"no choices", reply{200, `{"choices":[]}`}, "", nil, hi, "the model's answer has no choices"},
		{"bad arguments", reply{200, `{"choices":[{"message":{"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"[1]"}}]},"finish_reason":"tool_calls"}]}`}, "", nil, hi,
			`the model's arguments for tool "f" are not a JSON object`},
		{"no key", reply{}, "", map[string]string{}, hi, "sampling is configured but the API key variable DEEPSEEK_API_KEY is not set"},
		{"audio", reply{}, "", nil, audio, `sampling request of server "s": message 1: *mcp.AudioContent content cannot be sent to a chat-completions model`},
		{"invalid params", reply{}, "", nil, json.RawMessage(`[]`), "invalid sampling request"},
		{"unreachable", reply{}, closed.URL, nil, hi, "connection refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A busy API is asked again (chatapi's retries): the last
			// answer is the one reported.
			api := newFakeAPI(t, c.reply, c.reply, c.reply, c.reply)
			env := c.env
			if env == nil {
				env = map[string]string{DefaultAPIKeyEnv: testKey}
			}
			url := api.srv.URL
			if c.url != "" {
				url = c.url
			}
			p, log := started(t, "baseURL: ${API_URL}\n", map[string]string{"API_URL": url, DefaultAPIKeyEnv: env[DefaultAPIKeyEnv]})
			if env[DefaultAPIKeyEnv] == "" {
				p, log = started(t, "baseURL: ${API_URL}\n", map[string]string{"API_URL": url})
			}
			_, err := p.Sample(context.Background(), "s", c.params)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(log.Text(), testKey) {
				t.Errorf("the key leaked: %v\n%s", err, log.Text())
			}
			if strings.Contains(err.Error(), "127.0.0.1") {
				t.Errorf("the expanded URL was quoted: %v", err)
			}
		})
	}
}

// Without a running entry a request is refused clearly; a reloaded entry
// takes over, and closing the old one does not undo that.
func TestProviderEntries(t *testing.T) {
	p := NewProvider()
	if _, err := p.Sample(context.Background(), "s", nil); err != ErrNotConfigured {
		t.Errorf("without an entry: %v", err)
	}
	k := NewKind(KindOptions{Provider: p})
	old, _ := k.Start(context.Background(), host.Spec{Config: Config{Model: "a", Timeout: time.Second}}, host.Env{Logger: slog.New(slog.DiscardHandler)})
	repl, _ := k.Start(context.Background(), host.Spec{Config: Config{Model: "b", Timeout: time.Second}}, host.Env{Logger: slog.New(slog.DiscardHandler)})
	old.Close()
	if cur := p.current(); cur == nil || cur.client.cfg.Model != "b" || old.Status().State != host.StateClosed {
		t.Errorf("after the old entry closed: %+v, old %v", cur, old.Status().State)
	}
	repl.Close()
	if _, err := p.Sample(context.Background(), "s", nil); err != ErrNotConfigured {
		t.Errorf("after both closed: %v", err)
	}
	if _, err := k.Start(context.Background(), host.Spec{Config: "x"}, host.Env{}); err == nil {
		t.Error("a foreign spec was started")
	}
}

// A config file holds one sampling entry; its fields are checked with
// their positions; defaults are DeepSeek's.
func TestDecode(t *testing.T) {
	cat := host.NewCatalog(NewKind(KindOptions{Provider: NewProvider()}))
	lookup := func(k string) (string, bool) { return map[string]string{"URL": "ftp://x"}[k], k == "URL" }
	plan, err := cat.Parse("f.yaml", []byte("- id: s\n  name: sampling\n"), lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{BaseURL: DefaultBaseURL, Model: DefaultModel, APIKeyEnv: DefaultAPIKeyEnv, Timeout: DefaultTimeout, BaseURLWritten: DefaultBaseURL}
	if d := cmp.Diff(want, plan.Entries[0].Spec.Config); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
	for _, c := range []struct{ name, file, want string }{
		{"two entries", "- id: a\n  name: sampling\n- id: b\n  name: sampling\n", `name "sampling" is already used by entry "a"`},
		{"bad fields", "- id: a\n  name: sampling\n  config:\n    baseURL: ${URL}\n    apiKeyEnv: 'MY KEY'\n    maxTokens: 0\n    modle: x\n",
			"f.yaml:4:14: entry \"a\": config.baseURL: must be an absolute http(s) URL (the scheme is not http or https)"},
		{"bad key name", "- id: a\n  name: sampling\n  config:\n    apiKeyEnv: 'MY KEY'\n", `config.apiKeyEnv: must name an environment variable`},
		{"typo", "- id: a\n  name: sampling\n  config:\n    modle: x\n", `unknown key "modle" (did you mean "model"?)`},
		{"credentials", "- id: a\n  name: sampling\n  config:\n    baseURL: https://u:p@h\n    timeoutMs: 0\n", "must not hold credentials"},
		{"not a mapping", "- id: a\n  name: sampling\n  config: [1]\n", "must be a mapping"},
		{"empty baseURL", "- id: a\n  name: sampling\n  config:\n    baseURL: ${EMPTY:-}\n", `f.yaml:4:14: entry "a": config.baseURL: is empty (after ${VAR} expansion, if it has one): name the endpoint, or leave baseURL out for DeepSeek's API`},
		{"no key without baseURL", "- id: a\n  name: sampling\n  config:\n    apiKeyEnv: \"\"\n", `f.yaml:4:16: entry "a": config.apiKeyEnv: no key needs a baseURL too: without one the requests go to DeepSeek's API (https://api.deepseek.com), which needs a key`},
		{"apiKey none without baseURL", "- id: a\n  name: sampling\n  config:\n    apiKey: none\n", `f.yaml:4:13: entry "a": config.apiKey: no key needs a baseURL too`},
		{"a key in the file", "- id: a\n  name: sampling\n  config:\n    baseURL: http://127.0.0.1:1\n    apiKey: sk-123\n", `f.yaml:5:13: entry "a": config.apiKey: takes only "none" (the endpoint takes no key): a key is never written in the file; name the variable that holds it in apiKeyEnv`},
		{"no key and a key", "- id: a\n  name: sampling\n  config:\n    baseURL: http://127.0.0.1:1\n    apiKey: none\n    apiKeyEnv: K\n", `config.apiKey: none says the endpoint takes no key, but apiKeyEnv names K: keep one of them`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cat.Parse("f.yaml", []byte(c.file), lookup)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "ftp://x") {
				t.Errorf("an expanded value was quoted: %v", err)
			}
		})
	}
	good := "- id: a\n  name: sampling\n  config:\n    baseURL: http://127.0.0.1:1/v1\n    model: m\n    apiKeyEnv: K\n    maxTokens: 5\n    timeoutMs: 10\n"
	if plan, err := cat.Parse("f.yaml", []byte(good), lookup); err != nil || plan.Entries[0].Spec.Config.(Config).Timeout != 10*time.Millisecond {
		t.Errorf("a full config: %v", err)
	}
	for _, key := range []string{`apiKeyEnv: ""`, "apiKey: none", "apiKey: none\n    apiKeyEnv: \"\""} {
		keyless := "- id: a\n  name: sampling\n  config:\n    baseURL: http://127.0.0.1:1/v1\n    " + key + "\n"
		if plan, err := cat.Parse("f.yaml", []byte(keyless), lookup); err != nil || plan.Entries[0].Spec.Config.(Config).APIKeyEnv != "" {
			t.Errorf("%s: %v", key, err)
		}
	}
}

// A tool result is sent as its text, else its structured content; an
// error is marked.
func TestToolResultText(t *testing.T) {
	for _, c := range []struct {
		in   *mcp.ToolResultContent
		want string
	}{
		{&mcp.ToolResultContent{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.ImageContent{}, &mcp.TextContent{Text: "b"}}}, "a\nb"},
		{&mcp.ToolResultContent{StructuredContent: map[string]any{"t": 21}}, `{"t":21}`},
		{&mcp.ToolResultContent{Content: []mcp.Content{&mcp.TextContent{Text: "no such city"}}, IsError: true}, "Error: no such city"},
	} {
		if got := toolResultText(c.in); got != c.want {
			t.Errorf("%+v: %q, want %q", c.in, got, c.want)
		}
	}
}

// A model entry takes the sampling entry's keys and strict, waits longer
// by default, and answers sampling in the sampling entry's place.
func TestModelEntry(t *testing.T) {
	p := NewProvider()
	cat := host.NewCatalog(NewKind(KindOptions{Provider: p}), NewModelKind(KindOptions{Provider: p}))
	plan, err := cat.Parse("f.yaml", []byte("- id: m\n  name: model\n  config:\n    model: deepseek-pro\n    strict: true\n- id: s\n  name: sampling\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{BaseURL: DefaultBaseURL, Model: "deepseek-pro", APIKeyEnv: DefaultAPIKeyEnv, Timeout: DefaultModelTimeout, Strict: true, BaseURLWritten: DefaultBaseURL}
	if d := cmp.Diff(want, plan.Entries[0].Spec.Config); d != "" {
		t.Errorf("model entry (-want +got):\n%s", d)
	}
	if _, err := cat.Parse("f.yaml", []byte("- id: s\n  name: sampling\n  config:\n    strict: true\n"), nil); err == nil || !strings.Contains(err.Error(), `unknown key "strict"`) {
		t.Errorf("strict in a sampling entry: %v", err)
	}
	start := func(k *Kind, i int) host.Instance {
		in, err := k.Start(context.Background(), plan.Entries[i].Spec, host.Env{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close() })
		return in
	}
	model := start(NewModelKind(KindOptions{Provider: p}), 0)
	start(NewKind(KindOptions{Provider: p}), 1)
	if cur := p.current(); cur.client.cfg.Model != "deepseek-pro" || model.Status().Name != ModelKind {
		t.Errorf("the sampling entry took the model entry's place: %+v", cur.client.cfg)
	}
	// A reload that drops the model entry leaves the sampling entry
	// answering (it used to leave sampling unconfigured).
	model.Close()
	if cur := p.current(); cur == nil || cur.kind != KindName || cur.client.cfg.Model != DefaultModel {
		t.Errorf("after the model entry closed, the sampling entry does not answer: %+v", cur)
	}
}
