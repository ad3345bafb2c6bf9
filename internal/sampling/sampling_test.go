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

// started runs a sampling entry (config YAML) of a provider, as its kind
// would, with the key set in its environment.
func started(t *testing.T, config string, env map[string]string) (*Provider, *mcptest.Log) {
	t.Helper()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(config), &n); err != nil {
		t.Fatal(err)
	}
	cfg, err := Decode(n.Content[0], lookup, KindName)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProvider()
	log := mcptest.NewLog()
	e := p.Start(KindName, cfg, Options{Lookup: lookup, Sleep: noWait}, log.Logger())
	t.Cleanup(e.Close)
	if e.Kind() != KindName || e.Model() == "" || e.Closed() {
		t.Errorf("entry %s of %q, closed %v", e.Kind(), e.Model(), e.Closed())
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

// A key written in the baseURL's query is sent, not logged nor quoted in
// a failure.
func TestSampleURLKeyNotShown(t *testing.T) {
	const secret = "sk-in-the-url"
	api := newFakeAPI(t, reply{400, `{"error":{"message":"bad request"}}`})
	p, log := started(t, "baseURL: "+api.srv.URL+"/v1?api_key="+secret+"\n", map[string]string{DefaultAPIKeyEnv: testKey})
	hi := mustJSON(t, &mcp.CreateMessageWithToolsParams{MaxTokens: 10, Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}}})
	_, err := p.Sample(context.Background(), "s", hi)
	if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(log.Text(), secret) {
		t.Errorf("the key in the URL leaked: %v\n%s", err, log.Text())
	}
	if !log.HasRecord(slog.LevelInfo, "sampling request", "server", "s") {
		t.Errorf("the request was not logged:\n%s", log.Text())
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
	discard := slog.New(slog.DiscardHandler)
	old := p.Start(KindName, Config{Model: "a", Timeout: time.Second}, Options{}, discard)
	repl := p.Start(KindName, Config{Model: "b", Timeout: time.Second}, Options{}, discard)
	old.Close()
	if cur := p.current(); cur == nil || cur.client.cfg.Model != "b" || !old.Closed() {
		t.Errorf("after the old entry closed: %+v, old closed %v", cur, old.Closed())
	}
	repl.Close()
	if _, err := p.Sample(context.Background(), "s", nil); err != ErrNotConfigured {
		t.Errorf("after both closed: %v", err)
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
	decode := func(kind, src string) (Config, error) {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			t.Fatal(err)
		}
		return Decode(n.Content[0], func(string) (string, bool) { return "", false }, kind)
	}
	cfg, err := decode(ModelKind, "model: deepseek-pro\nstrict: true\n")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{BaseURL: DefaultBaseURL, Model: "deepseek-pro", APIKeyEnv: DefaultAPIKeyEnv, Timeout: DefaultModelTimeout, Strict: true, BaseURLWritten: DefaultBaseURL}
	if d := cmp.Diff(want, cfg); d != "" {
		t.Errorf("model entry (-want +got):\n%s", d)
	}
	if _, err := decode(KindName, "strict: true\n"); err == nil || !strings.Contains(err.Error(), `unknown key "strict"`) {
		t.Errorf("strict in a sampling entry: %v", err)
	}
	samplingCfg, err := decode(KindName, "{}")
	if err != nil {
		t.Fatal(err)
	}
	p := NewProvider()
	discard := slog.New(slog.DiscardHandler)
	model := p.Start(ModelKind, cfg, Options{}, discard)
	t.Cleanup(model.Close)
	t.Cleanup(p.Start(KindName, samplingCfg, Options{}, discard).Close)
	if cur := p.current(); cur.client.cfg.Model != "deepseek-pro" || model.Kind() != ModelKind {
		t.Errorf("the sampling entry took the model entry's place: %+v", cur.client.cfg)
	}
	// A reload that drops the model entry leaves the sampling entry
	// answering (it used to leave sampling unconfigured).
	model.Close()
	if cur := p.current(); cur == nil || cur.kind != KindName || cur.client.cfg.Model != DefaultModel {
		t.Errorf("after the model entry closed, the sampling entry does not answer: %+v", cur)
	}
}
