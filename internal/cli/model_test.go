package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/chatapi/chattest"
)

// standIn is a real HTTPS server standing in for hosts the model client
// must not reach unless told to: the client a test gives the run dials it
// for any of those hosts, and it records what reached it.
type standIn struct {
	srv   *httptest.Server
	mu    sync.Mutex
	hosts []string // Host and path of each request
}

// newStandIn starts a stand-in that answers every request 401 (what
// DeepSeek answers a wrong key), so that a run that reaches it ends.
func newStandIn(t *testing.T) *standIn {
	s := &standIn{}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hosts = append(s.hosts, r.Host+r.URL.Path)
		s.mu.Unlock()
		http.Error(w, `{"error":{"message":"stand-in"}}`, http.StatusUnauthorized)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *standIn) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.hosts...)
}

// modelClient is the HTTP client of the model's requests in a test run:
// api.deepseek.com:443 (the default endpoint) reaches deepseek, each
// address of routes reaches its target, and the rest is dialled as is.
func modelClient(t *testing.T, deepseek *standIn, routes map[string]string) func(*IO) {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == "api.deepseek.com:443" {
				addr = deepseek.srv.Listener.Addr().String()
			} else if to, ok := routes[addr]; ok {
				addr = to
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		// The stand-in's certificate is for 127.0.0.1, not DeepSeek.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return func(io *IO) { io.HTTPClient = &http.Client{Transport: tr} }
}

// A model entry with a mistake stops the agent with the entry's error at
// its position, before anything is sent: neither the endpoint the user
// meant nor DeepSeek's API (the default) gets a request, under --json
// too. A disabled entry stops it unless --base-url names the endpoint.
// The default is reached only when the config has no model entry at all.
func TestAgentBrokenModelEntrySendsNothing(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	deepseek := newStandIn(t)
	local := chattest.New(t, chattest.Turns(chattest.Turn{Text: "local answer"}))
	via := modelClient(t, deepseek, nil)
	model := func(config string) string {
		return "- id: model\n  name: model\n  config:\n" + config
	}
	for _, c := range []struct{ name, file, want string }{
		{"typo baseUrl", model("    baseUrl: " + local.URL + "\n    model: llama\n"),
			`mcpbridge.yaml:4:5: entry "model": config.baseUrl: unknown key "baseUrl" (did you mean "baseURL"?)`},
		{"no key without baseURL", model("    apiKeyEnv: \"\"\n"),
			`mcpbridge.yaml:4:16: entry "model": config.apiKeyEnv: no key needs a baseURL too`},
		{"empty baseURL", model("    baseURL: ${LOCAL_MODEL_URL:-}\n"),
			`mcpbridge.yaml:4:14: entry "model": config.baseURL: is empty`},
		{"a key in the file", model("    baseURL: " + local.URL + "\n    apiKey: sk-in-the-file\n"),
			`mcpbridge.yaml:5:13: entry "model": config.apiKey: takes only "none"`},
		{"broken sampling entry", "- id: s\n  name: sampling\n  config:\n    baseUrl: " + local.URL + "\n",
			`mcpbridge.yaml:4:5: entry "s": config.baseUrl: unknown key "baseUrl"`},
		{"broken model entry beside a sampling entry", model("    baseUrl: "+local.URL+"\n") + "- id: s\n  name: sampling\n  config:\n    baseURL: " + local.URL + "\n",
			`config.baseUrl: unknown key "baseUrl"`},
		{"disabled", "- id: model\n  name: model\n  disabled: true\n  config:\n    baseURL: " + local.URL + "\n",
			`mcpbridge.yaml:1:3: entry "model": the model entry is disabled, and no other entry names the model's endpoint: enable it, pass --base-url`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := writeConfig(t, c.file)
			for _, json := range []bool{false, true} {
				args := []string{"agent", "--config", cfg, "-p", "my private notes", "--yes"}
				if json {
					args = append(args, "--json")
				}
				r := mcpbridgeWith(t, via, "", args...)
				if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) || !json && r.stdout != "" || json && !resultLineSays(r.stdout, c.want) {
					t.Errorf("--json %v: exit %d, stdout %q\nstderr %s\nwant %q (under --json, as the result line's error)", json, r.code, r.stdout, r.stderr, c.want)
				}
			}
			if got := deepseek.requests(); len(got) != 0 {
				t.Errorf("DeepSeek's API got %v", got)
			}
			if n := len(local.Requests()); n != 0 {
				t.Errorf("the local endpoint got %d requests", n)
			}
		})
	}

	disabled := writeConfig(t, "- id: model\n  name: model\n  disabled: true\n  config:\n    baseURL: http://127.0.0.1:1\n")
	if r := mcpbridgeWith(t, via, "", "agent", "--config", disabled, "--base-url", local.URL, "-p", "hi"); r.code != 0 || r.stdout != "local answer\n" {
		t.Errorf("a disabled entry and --base-url: exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	good := writeConfig(t, model("    baseURL: "+local.URL+"\n    model: llama\n"))
	if r := mcpbridgeWith(t, via, "", "agent", "--config", good, "-p", "hi"); r.code != 0 || r.stdout != "local answer\n" {
		t.Errorf("a valid entry: exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if got := deepseek.requests(); len(got) != 0 {
		t.Errorf("DeepSeek's API got %v", got)
	}
	// Without a model entry the default is used: the stand-in is reached.
	if r := mcpbridgeWith(t, via, "", "agent", "-p", "hi"); r.code != ExitFailed || !strings.Contains(r.stderr, "https://api.deepseek.com (deepseek-flash) answered 401") {
		t.Errorf("no model entry: exit %d\n%s", r.code, r.stderr)
	}
	if got := deepseek.requests(); len(got) != 1 || got[0] != "api.deepseek.com/chat/completions" {
		t.Errorf("no model entry: DeepSeek's API got %v", got)
	}
}

// A local endpoint without keys works with apiKeyEnv: "" or apiKey:
// none: no key is required (none is set here) and no Authorization
// header is sent.
func TestAgentKeylessEndpoint(t *testing.T) {
	agentEnv(t)
	t.Setenv("DEEPSEEK_API_KEY", "")
	t.Chdir(t.TempDir())
	for _, key := range []string{`apiKeyEnv: ""`, "apiKey: none"} {
		local := chattest.New(t, chattest.Turns(chattest.Turn{Text: "no key needed"}))
		local.Keyless = true
		cfg := writeConfig(t, fmt.Sprintf("- id: model\n  name: model\n  config:\n    baseURL: %s\n    %s\n", local.URL, key))
		r := mcpbridge(t, "", "agent", "--config", cfg, "-p", "hi")
		if r.code != 0 || r.stdout != "no key needed\n" {
			t.Errorf("%s: exit %d, stdout %q\n%s", key, r.code, r.stdout, r.stderr)
		}
		if auths := local.Auths(); len(auths) != 1 || auths[0] != "" {
			t.Errorf("%s: Authorization headers sent: %q", key, auths)
		}
	}
}

// The key sent over http:// to another machine is warned about, on
// stderr and as a --json notice after the session line that names the
// endpoint; https://, this machine (127.0.0.1,
// localhost) and an endpoint without a key are not.
func TestAgentWarnsKeyInClear(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "ok"}))
	keyless := chattest.New(t, chattest.Turns(chattest.Turn{Text: "ok"}))
	keyless.Keyless = true
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	via := modelClient(t, newStandIn(t), map[string]string{
		"model.example:80":   strings.TrimPrefix(srv.URL, "http://"),
		"keyless.example:80": strings.TrimPrefix(keyless.URL, "http://"),
	})
	const warning = "warning: the model's endpoint http://model.example/v1 is http:// to another machine: the API key (DEEPSEEK_API_KEY) and the conversation travel in clear; use https://"

	r := mcpbridgeWith(t, via, "", "agent", "--base-url", "http://model.example/v1", "-p", "hi")
	if r.code != 0 || r.stdout != "ok\n" || !strings.Contains(r.stderr, "mcpbridge: "+warning+"\n") {
		t.Errorf("exit %d, stdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = mcpbridgeWith(t, via, "", "agent", "--base-url", "http://model.example/v1", "--json", "-p", "hi")
	if evs := jsonLines(t, r.stdout); r.code != 0 || len(evs) < 2 || evs[0]["endpoint"] != "http://model.example/v1" || evs[1]["type"] != "notice" || evs[1]["text"] != warning {
		t.Errorf("--json: exit %d\n%s", r.code, r.stdout)
	}
	entry := writeConfig(t, "- id: model\n  name: model\n  config:\n    baseURL: http://model.example/v1\n")
	if r := mcpbridgeWith(t, via, "", "agent", "--config", entry, "-p", "hi"); r.code != 0 || !strings.Contains(r.stderr, warning) {
		t.Errorf("the entry's baseURL: exit %d\n%s", r.code, r.stderr)
	}
	// DeepSeek's key, read for want of another, going to another machine
	// than DeepSeek's API is said too; a key the entry names is not.
	const elsewhere = "warning: DeepSeek's key (DEEPSEEK_API_KEY) is sent to http://model.example/v1, which is not DeepSeek's API: name the key that endpoint takes in a model entry (apiKeyEnv), or apiKey: none"
	if r := mcpbridgeWith(t, via, "", "agent", "--config", entry, "-p", "hi"); !strings.Contains(r.stderr, "mcpbridge: "+elsewhere+"\n") {
		t.Errorf("DeepSeek's key to another endpoint: exit %d\n%s", r.code, r.stderr)
	}
	named := writeConfig(t, "- id: model\n  name: model\n  config:\n    baseURL: http://model.example/v1\n    apiKeyEnv: DEEPSEEK_API_KEY\n")
	if r := mcpbridgeWith(t, via, "", "agent", "--config", named, "-p", "hi"); r.code != 0 || strings.Contains(r.stderr, "DeepSeek's key") {
		t.Errorf("a key the entry names: exit %d\n%s", r.code, r.stderr)
	}

	noKey := writeConfig(t, "- id: model\n  name: model\n  config:\n    baseURL: http://keyless.example/v1\n    apiKey: none\n")
	for _, args := range [][]string{
		{"--base-url", srv.URL},
		{"--base-url", "http://localhost:" + port},
		{"--config", noKey},
	} {
		r := mcpbridgeWith(t, via, "", append([]string{"agent", "-p", "hi"}, args...)...)
		if r.code != 0 || strings.Contains(r.stderr, "warning") {
			t.Errorf("%v: exit %d\nstderr %s", args, r.code, r.stderr)
		}
	}
}

// A key a user put in --base-url's query reaches the endpoint, but is not
// shown: not in the warnings that name the endpoint, not in --json's
// session line, not in the error of a failed request.
func TestAgentURLKeyNotShown(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	const secret = "sk-in-the-url"
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "ok"}))
	via := modelClient(t, newStandIn(t), map[string]string{"model.example:80": strings.TrimPrefix(srv.URL, "http://")})
	base := "http://model.example/v1?api_key=" + secret
	for _, args := range [][]string{{"-p", "hi"}, {"--json", "-p", "hi"}} {
		r := mcpbridgeWith(t, via, "", append([]string{"agent", "--base-url", base}, args...)...)
		if r.code != 0 || !strings.Contains(r.stderr+r.stdout, "http://model.example/… is http:// to another machine") ||
			strings.Contains(r.stdout, secret) || strings.Contains(r.stderr, secret) {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s", args, r.code, r.stdout, r.stderr)
		}
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	r := mcpbridge(t, "", "agent", "--base-url", closed.URL+"/v1?api_key="+secret, "-p", "hi")
	if r.code != ExitFailed || strings.Contains(r.stderr, secret) {
		t.Errorf("an endpoint out of reach: exit %d\n%s", r.code, r.stderr)
	}
}

// A server's sampling request during call is refused with the invalid
// model entry's positioned error: the valid sampling entry beside it does
// not answer in its place, and its endpoint gets nothing.
func TestSamplingBrokenModelEntry(t *testing.T) {
	api := &chatAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	t.Setenv("MCPBRIDGE_TEST_SAMPLING_KEY", "sk-cli-test-key-42")
	broken := fmt.Sprintf("- id: model\n  name: model\n  config:\n    baseUrl: %s\n", srv.URL)
	sampling := fmt.Sprintf("- id: s\n  name: sampling\n  config:\n    baseURL: %s\n    apiKeyEnv: MCPBRIDGE_TEST_SAMPLING_KEY\n", srv.URL)
	for _, entries := range []string{broken, broken + sampling} {
		cfg := askerConfig(t, "    allowSampling: true\n", entries)
		r := mcpbridge(t, "", "call", "--config", cfg, "mcp__asker__weather", `{"city":"Paris"}`)
		want := `sampling is refused: the config's model or sampling entry is invalid, and no other endpoint answers in its place: ` +
			cfg + `:14:5: entry "model": config.baseUrl: unknown key "baseUrl" (did you mean "baseURL"?)`
		if r.code != ExitFailed || !strings.Contains(r.stdout, want) {
			t.Errorf("exit %d, stdout %q\nwant %q\nstderr %s", r.code, r.stdout, want, r.stderr)
		}
	}
	if len(api.requests) != 0 {
		t.Errorf("the sampling entry's endpoint got %q", api.requests)
	}
}

// A keyless sampling endpoint answers without a key set, and gets no
// Authorization header.
func TestSamplingKeyless(t *testing.T) {
	api := &chatAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	t.Setenv("DEEPSEEK_API_KEY", "")
	cfg := askerConfig(t, "    allowSampling: true\n", fmt.Sprintf("- id: model\n  name: model\n  config:\n    baseURL: %s\n    apiKeyEnv: \"\"\n", srv.URL))
	r := mcpbridge(t, "", "call", "--config", cfg, "mcp__asker__weather", `{"city":"Paris"}`)
	if want := "model deepseek-chat (endTurn): tool said: sunny in Paris\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout %q; want %q\n%s", r.code, r.stdout, want, r.stderr)
	}
	if len(api.requests) != 2 || !strings.HasPrefix(api.requests[0], " {") || !strings.HasPrefix(api.requests[1], " {") {
		t.Errorf("requests (each Authorization, a space, the body): %q", api.requests)
	}
}

// resultLineSays reports whether stdout is agent --json's one result line,
// its error saying want.
func resultLineSays(stdout, want string) bool {
	var ev struct{ Type, Error string }
	return strings.Count(stdout, "\n") == 1 && json.Unmarshal([]byte(stdout), &ev) == nil && ev.Type == "result" && strings.Contains(ev.Error, want)
}

// The model the user config names is the agent's under --config (or
// $MCPBRIDGE_CONFIG) too, when that file names none: its permissions are
// read so, and a file of servers must not send the conversation to
// DeepSeek's API, though its key is set, in place of the model the user
// set up (a local one). A model entry of the file named wins.
func TestAgentUserModelUnderConfig(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	deepseek := newStandIn(t)
	via := modelClient(t, deepseek, nil)
	local := chattest.New(t, chattest.Turns(chattest.Turn{Text: "local answer"}, chattest.Turn{Text: "local answer"}))
	local.Keyless = true
	userConfig(t, "- id: model\n  name: model\n  config:\n    baseURL: "+local.URL+"\n    model: llama\n    apiKey: none\n")
	servers := writeConfig(t, "- id: demo\n  name: mcp-client\n  config:\n    serverName: demo\n    transport: stdio\n    command: ${MCPBRIDGE_EXE}\n    args: [demo-server]\n")

	if r := mcpbridgeWith(t, via, "", "agent", "--config", servers, "-p", "hi"); r.code != 0 || r.stdout != "local answer\n" {
		t.Errorf("--config: exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	viaEnv := func(io *IO) {
		via(io)
		lookup := io.LookupEnv
		io.LookupEnv = func(k string) (string, bool) {
			if k == "MCPBRIDGE_CONFIG" {
				return servers, true
			}
			return lookup(k)
		}
	}
	if r := mcpbridgeWith(t, viaEnv, "", "agent", "-p", "hi"); r.code != 0 || r.stdout != "local answer\n" {
		t.Errorf("$MCPBRIDGE_CONFIG: exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if got := deepseek.requests(); len(got) != 0 {
		t.Errorf("DeepSeek's API got %v", got)
	}

	other := chattest.New(t, chattest.Turns(chattest.Turn{Text: "the file's model"}))
	own := writeConfig(t, "- id: model\n  name: model\n  config:\n    baseURL: "+other.URL+"\n    model: other\n")
	if r := mcpbridgeWith(t, via, "", "agent", "--config", own, "-p", "hi"); r.code != 0 || r.stdout != "the file's model\n" {
		t.Errorf("a model entry in --config's file: exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
}

// Without the key the model's endpoint takes, the agent says which
// endpoint it would have used and why that one, and both ways on: the
// variable to set, or a model entry in the user config for the model the
// person means (a local one, which takes no key). Nothing is sent.
func TestAgentMissingKeySaysWhyAndHow(t *testing.T) {
	agentEnv(t)
	t.Setenv("DEEPSEEK_API_KEY", "")
	t.Chdir(t.TempDir())
	user := userConfig(t, "")
	deepseek := newStandIn(t)
	via := modelClient(t, deepseek, nil)
	local := chattest.New(t, chattest.Turns(chattest.Turn{Text: "never"}))
	named := writeConfig(t, "- id: model\n  name: model\n  config:\n    baseURL: "+local.URL+"\n    apiKeyEnv: MCPBRIDGE_TEST_UNSET_KEY\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "agent: no model entry names an endpoint, nor does --base-url, so the agent would use DeepSeek's API (https://api.deepseek.com), and its key variable DEEPSEEK_API_KEY is not set: " +
			"export DEEPSEEK_API_KEY=<your DeepSeek key>, or add a model entry for the model you use to " + user +
			" (a local one, which takes no key: baseURL: http://localhost:11434/v1, model: qwen3, apiKey: none; see 'mcpbridge help agent')"},
		{[]string{"--base-url", local.URL}, "agent: the model's endpoint " + local.URL + " would be sent the key in DEEPSEEK_API_KEY (no model entry names its own), which is not set: " +
			"add a model entry to " + user + " with baseURL: " + local.URL + " and apiKeyEnv: the variable that holds its key, or apiKey: none if it takes no key"},
		{[]string{"--config", named}, "agent: the API key variable MCPBRIDGE_TEST_UNSET_KEY, which the model entry names (apiKeyEnv), is not set: " +
			"export it with the key of " + local.URL + ", or, if that endpoint takes no key, write apiKey: none in the entry instead"},
	} {
		r := mcpbridgeWith(t, via, "", append([]string{"agent", "-p", "hi"}, c.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d\nstderr %s\nwant %s", c.args, r.code, r.stderr, c.want)
		}
	}
	if got := deepseek.requests(); len(got) != 0 || len(local.Requests()) != 0 {
		t.Errorf("sent: DeepSeek's API %v, the local endpoint %d requests", got, len(local.Requests()))
	}
}
