package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
)

// askerConfig is a config with the asker server (this test binary) and the
// extra entries or keys given.
func askerConfig(t *testing.T, extraKeys, extraEntries string) string {
	cmd, args, env := mcptest.ChildCommand(t, "asker")
	argsJSON, _ := json.Marshal(args)
	envJSON, _ := json.Marshal(env)
	return writeConfig(t, fmt.Sprintf(`- id: asker
  name: mcp-client
  config:
    serverName: asker
    transport: stdio
    command: %s
    args: %s
    env: %s
    protocolVersion: "2025-11-25"
%s%s`, cmd, argsJSON, envJSON, extraKeys, extraEntries))
}

// chatAPI is an OpenAI-compatible endpoint on 127.0.0.1 that first asks
// for the get_weather tool, then answers with the tool's result it was
// sent; a request without tools gets the last message back.
type chatAPI struct {
	mu       sync.Mutex
	requests []string
}

func (a *chatAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.requests = append(a.requests, r.Header.Get("Authorization")+" "+string(body))
	n := len(a.requests)
	a.mu.Unlock()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Tools []any `json:"tools"`
	}
	_ = json.Unmarshal(body, &req)
	last := req.Messages[len(req.Messages)-1]
	if n == 1 && len(req.Tools) > 0 {
		_, _ = io.WriteString(w, `{"model":"deepseek-chat","choices":[{"message":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}`)
		return
	}
	answer, _ := json.Marshal(fmt.Sprintf("%s said: %v", last.Role, last.Content))
	fmt.Fprintf(w, `{"model":"deepseek-chat","choices":[{"message":{"content":%s},"finish_reason":"stop"}]}`, answer)
}

// A server that samples, through call: the configured endpoint answers
// (with a round of tool use), every request is logged with its server and
// the key is never shown; without allowSampling or a sampling entry the
// server is not offered sampling.
func TestSamplingThroughCall(t *testing.T) {
	api := &chatAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	const key = "sk-cli-test-key-42"
	t.Setenv("MCPBRIDGE_TEST_SAMPLING_KEY", key)
	entry := fmt.Sprintf(`- id: model
  name: sampling
  config:
    baseURL: %s
    apiKeyEnv: MCPBRIDGE_TEST_SAMPLING_KEY
`, srv.URL)
	cfg := askerConfig(t, "    allowSampling: true\n", entry)
	r := mcpbridge(t, "", "call", "-v", "--config", cfg, "mcp__asker__weather", `{"city":"Paris"}`)
	if want := "model deepseek-chat (endTurn): tool said: sunny in Paris\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout %q; want %q\n%s", r.code, r.stdout, want, r.stderr)
	}
	if len(api.requests) != 2 || !strings.HasPrefix(api.requests[0], "Bearer "+key+" ") || !strings.Contains(api.requests[0], `"tools":[{"type":"function","function":{"name":"get_weather"`) {
		t.Errorf("requests: %q", api.requests)
	}
	if n := strings.Count(r.stderr, `msg="sampling request" entry=model server=asker model=`+sampling.DefaultModel); n != 2 || strings.Contains(r.stderr, key) {
		t.Errorf("%d sampling requests logged with their server (want 2), key shown: %v\n%s", n, strings.Contains(r.stderr, key), r.stderr)
	}
	for _, c := range []struct{ name, keys, entries string }{
		{"without allowSampling", "", entry},
		{"without a sampling entry", "    allowSampling: true\n", ""},
	} {
		r := mcpbridge(t, "", "call", "--config", askerConfig(t, c.keys, c.entries), "mcp__asker__weather", `{"city":"Paris"}`)
		if r.code != 1 || !strings.Contains(r.stdout, "client does not support CreateMessage") {
			t.Errorf("%s: exit %d, stdout %q", c.name, r.code, r.stdout)
		}
	}
}

// Without a terminal, an elicitation is declined unless --elicit says
// otherwise; defaults that leave a required field empty decline too.
func TestElicitWithoutTerminal(t *testing.T) {
	cfg := askerConfig(t, "", "")
	for _, c := range []struct{ mode, want string }{
		{"", "decline\n"},
		{"cancel", "cancel\n"},
		{"defaults", "decline\n"}, // the name it requires has no default
	} {
		args := []string{"call", "--config", cfg, "mcp__asker__order", "{}"}
		if c.mode != "" {
			args = append(args, "--elicit", c.mode)
		}
		if r := mcpbridge(t, "", args...); r.code != 0 || r.stdout != c.want {
			t.Errorf("--elicit %q: exit %d, stdout %q, want %q\n%s", c.mode, r.code, r.stdout, c.want, r.stderr)
		}
	}
}

// The TypeScript SDK's reference server samples through call too.
func TestSamplingServerEverything(t *testing.T) {
	srv := httptest.NewServer(&chatAPI{})
	defer srv.Close()
	t.Setenv("MCPBRIDGE_TEST_SAMPLING_KEY", "sk-everything")
	cfg := writeConfig(t, fmt.Sprintf(`- id: everything
  name: mcp-client
  config:
    serverName: everything
    transport: stdio
    command: %s
    args: [stdio]
    allowSampling: true
- id: model
  name: sampling
  config: {baseURL: %q, apiKeyEnv: MCPBRIDGE_TEST_SAMPLING_KEY}
`, mcptest.ThirdPartyBin(t, "mcp-server-everything"), srv.URL))
	r := mcpbridge(t, "", "call", "--config", cfg, "mcp__everything__trigger-sampling-request", `{"prompt":"hi"}`)
	for _, want := range []string{"LLM sampling result:", `"model": "deepseek-chat"`, "user said: Resource trigger-sampling-request context: hi"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("exit %d, stdout lacks %q:\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	// As a task on the client (MCP 2025-11-25): the bridge answers with a
	// task, samples meanwhile, and answers tasks/get and tasks/result.
	r = mcpbridge(t, "", "call", "--config", cfg, "mcp__everything__trigger-sampling-request-async", `{"prompt":"hi"}`)
	for _, want := range []string{"[COMPLETED] Async sampling completed!", `"model": "deepseek-chat"`, "user said: Resource trigger-sampling-request-async context: hi"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("async: exit %d, stdout lacks %q:\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
}
