package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// fixtureEntries is a config of fixture children, one per serverName: their
// raw tool names all collide.
func fixtureEntries(t *testing.T, serverNames ...string) string {
	cmd, args, env := mcptest.ChildCommand(t, "fixture")
	argsJSON, _ := json.Marshal(args)
	envJSON, _ := json.Marshal(env)
	var b strings.Builder
	for _, name := range serverNames {
		fmt.Fprintf(&b, `- id: %s
  name: mcp-client
  config:
    serverName: %s
    transport: stdio
    command: %s
    args: %s
    env: %s
`, name, name, cmd, argsJSON, envJSON)
	}
	return b.String()
}

// mcpbridgeCommand runs this test binary as the mcpbridge command.
func mcpbridgeCommand(t *testing.T, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	return cmd
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var names []string
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tl.Name)
	}
	return names
}

func callText(t *testing.T, cs *mcp.ClientSession, name, args string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n"), res.IsError
}

// waitTools polls tools/list until it holds every name in want.
func waitTools(t *testing.T, cs *mcp.ClientSession, want ...string) []string {
	t.Helper()
	var names []string
	mcptest.Eventually(t, 30*time.Second, func() bool {
		names = toolNames(t, cs)
		return !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(names, w) })
	}, "tools/list to hold all of %v", want)
	return names
}

// serveStdioClient launches `mcpbridge serve --stdio --config cfg` under a
// go-sdk client that reports each tools list_changed on changed; stderr
// fills with the command's.
func serveStdioClient(t *testing.T, cfg string) (cs *mcp.ClientSession, changed chan struct{}, stderr *lockedBuffer) {
	t.Helper()
	changed = make(chan struct{}, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cmd := mcpbridgeCommand(t, "serve", "--stdio", "--config", cfg)
	stderr = &lockedBuffer{} // read while the command writes
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	return cs, changed, stderr
}

// An MCP client launches `mcpbridge serve --stdio`, sees and calls the
// namespaced tools of two servers whose raw names collide, gets
// list_changed when the config is edited, and nothing survives its exit.
func TestServeStdio(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "a", "b"))
	cs, changed, stderr := serveStdioClient(t, cfg)
	waitTools(t, cs, "mcp__a__greet", "mcp__b__greet")
	if got, isErr := callText(t, cs, "mcp__a__greet", `{"name":"a"}`); got != "Hello, a!" || isErr {
		t.Errorf("a: %q %v", got, isErr)
	}
	if got, isErr := callText(t, cs, "mcp__b__add", `{"a":1,"b":2}`); got != "3" || isErr {
		t.Errorf("b: %q %v", got, isErr)
	}
	if got, isErr := callText(t, cs, "mcp__a__fail", `{}`); got != "Something went wrong" || !isErr {
		t.Errorf("isError not passed through: %q %v", got, isErr)
	}

	// Drain notifications from startup, then edit the config.
	for len(changed) > 0 {
		<-changed
	}
	if err := os.WriteFile(cfg, []byte(fixtureEntries(t, "a", "c")), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatalf("no list_changed after the config edit\n%s", stderr.String())
	}
	names := waitTools(t, cs, "mcp__c__greet")
	waitFor := time.Now().Add(30 * time.Second)
	for slices.Contains(names, "mcp__b__greet") && time.Now().Before(waitFor) {
		time.Sleep(50 * time.Millisecond)
		names = toolNames(t, cs)
	}
	if slices.Contains(names, "mcp__b__greet") || !slices.Contains(names, "mcp__a__greet") {
		t.Errorf("after the edit: %v", names)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err) // the SDK reports the child's exit status
	}
	if !hasTextRecord(stderr.String(), "INFO", "added, starting", "entry", "c") {
		t.Errorf("the reload was not logged:\n%s", stderr.String())
	}
}

// `mcpbridge serve --http` serves Streamable HTTP and /healthz, requires
// its token, and SIGTERM shuts it down cleanly with every child gone.
func TestServeHTTP(t *testing.T) {
	// A disabled entry does not spoil the health.
	cfg := writeConfig(t, fixtureEntries(t, "a", "b")+"- {id: off, name: mcp-client, disabled: true, config: {serverName: off, transport: stdio, command: x}}\n")
	// A token variable whose name the scrub would not catch.
	p := startServing(t, []string{"GW_AUTH=s3cret"}, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--token-env", "GW_AUTH")
	url := p.url

	// Without the token: 401.
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("healthz without token: %d", resp.StatusCode)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{"s3cret"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitTools(t, cs, "mcp__a__greet", "mcp__b__greet")
	if got, _ := callText(t, cs, "mcp__b__greet", `{"name":"web"}`); got != "Hello, web!" {
		t.Errorf("call: %q", got)
	}
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(url, "/mcp")+"/healthz", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var health struct {
		OK       bool `json:"ok"`
		Backends []struct {
			Name  string `json:"name"`
			State string `json:"state"`
		} `json:"backends"`
	}
	json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if !health.OK || len(health.Backends) != 2 {
		t.Errorf("healthz: %+v", health)
	}
	// The gateway's token never reaches a server's environment.
	kids := childrenOf(p.pid)
	if len(kids) != 2 {
		t.Errorf("serve has children %v, want the two servers", kids)
	}
	for _, pid := range kids {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || strings.Contains(string(env), "s3cret") || strings.Contains(string(env), "GW_AUTH") {
			t.Errorf("child %d environment holds the token (%v)", pid, err)
		}
	}
	cs.Close()
	p.stop(t)
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestServeUsage(t *testing.T) {
	tests := []struct {
		args []string
		has  string
	}{
		{[]string{"serve"}, "--stdio, or --http"},
		{[]string{"serve", "--stdio", "--http"}, "serve: --stdio and --http cannot be used together"},
		{[]string{"serve", "--http", "--token-env", "SURELY_UNSET_VAR_123"}, "unset or empty"},
		{[]string{"serve", "--stdio", "--token-env", "X"}, "go with --http"},
		{[]string{"serve", "--stdio", "--console"}, "--console go with --http"},
		{[]string{"serve", "--http", "0.0.0.0:0"}, "serve: --http 0.0.0.0:0 is not a loopback address, and no token is required: add --token-env NAME"},
		{[]string{"serve", "--http", "extra"}, `unexpected argument "extra"`},
		{[]string{"serve", "--http", "8080"}, `serve: unexpected argument "8080": --http takes an address with its port (--http 127.0.0.1:8080, --http :8080)`},
		{[]string{"serve", "--stdio", "--ready-timeout", "soon"}, `--ready-timeout "soon": want a duration`},
		{[]string{"serve", "--stdio", "--ready-timeout=-1s"}, `--ready-timeout "-1s": want a duration`},
		{[]string{"serve", "--stdio", "--ready-timeout"}, "--ready-timeout needs a value"},
	}
	for _, tc := range tests {
		r := mcpbridge(t, "", tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.has) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.has)
		}
	}
}

// childrenOf lists the live children of pid, from /proc.
func childrenOf(pid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[0] != "Z" && fields[1] == strconv.Itoa(pid) {
			n, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, n)
		}
	}
	return out
}

// slowEntry is a fixture server entry whose process takes delay to start,
// so its initialize answers that much later.
func slowEntry(t *testing.T, serverName string, delay time.Duration) string {
	cmd, args, env := mcptest.ChildCommand(t, "fixture")
	shArgs, _ := json.Marshal(append([]string{"-c", fmt.Sprintf(`sleep %.3f; exec "$0" "$@"`, delay.Seconds()), cmd}, args...))
	envJSON, _ := json.Marshal(env)
	return fmt.Sprintf(`- id: %s
  name: mcp-client
  config:
    serverName: %s
    transport: stdio
    command: sh
    args: %s
    env: %s
`, serverName, serverName, shArgs, envJSON)
}

// A client that lists tools the moment it has connected, as one-shot
// clients and clients that ignore list_changed do, already sees a server
// whose start takes 1.5 s, and calls it at once; with --ready-timeout 0 it
// does not wait.
func TestServeReadyBeforeAnswering(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "fast")+slowEntry(t, "slow", 1500*time.Millisecond))
	for _, tt := range []struct {
		flags    []string
		wantSlow bool
	}{
		{nil, true},
		{[]string{"--ready-timeout", "0"}, false},
	} {
		t.Run(fmt.Sprint(tt.flags), func(t *testing.T) {
			cmd := mcpbridgeCommand(t, append([]string{"serve", "--stdio", "--config", cfg}, tt.flags...)...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "one-shot", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, stderr.String())
			}
			defer cs.Close()
			names := toolNames(t, cs)
			if got := slices.Contains(names, "mcp__slow__greet"); got != tt.wantSlow {
				t.Fatalf("first tools/list has the slow server's tool: %v, want %v (%v)\n%s", got, tt.wantSlow, names, stderr.String())
			}
			if !tt.wantSlow {
				return
			}
			if got, isErr := callText(t, cs, "mcp__slow__greet", `{"name":"s"}`); got != "Hello, s!" || isErr {
				t.Errorf("call at once: %q %v", got, isErr)
			}
		})
	}
}

// The TypeScript SDK client, launching `serve --stdio` over a config with a
// server whose start takes 1.5 s, lists that server's tools in its first
// tools/list and calls one at once.
func TestServeReadyNodeClient(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "fast")+slowEntry(t, "slow", 1500*time.Millisecond))
	out, _ := runNodeScript(t, "node_first_list.mjs", append([]string{"mcp__slow__greet", `{"name":"ts"}`}, serveStdioLine(t, cfg)...)...)
	var got nodeListCall
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node client printed %q: %v", out, err)
	}
	if !slices.Contains(got.Tools, "mcp__slow__greet") || !slices.Contains(got.Tools, "mcp__fast__greet") {
		t.Errorf("first tools/list: %v", got.Tools)
	}
	if got.Call.IsError || len(got.Call.Content) != 1 || got.Call.Content[0].Text != "Hello, ts!" {
		t.Errorf("call at once: %+v", got.Call)
	}
}

// `mcpbridge serve` with a tool-search entry on lists each client the
// pinned tools and search_tools; a search loads its match for that client,
// with list_changed, and the loaded tool runs.
func TestServeToolSearch(t *testing.T) {
	cfg := writeConfig(t, strings.Replace(searchConfig, "MODE", "on", 1))
	cs, changed, stderr := serveStdioClient(t, cfg)
	defer cs.Close()
	if got := toolNames(t, cs); !slices.Equal(got, []string{"mcp__demo__echo", "search_tools"}) {
		t.Fatalf("before a search the client lists %v", got)
	}
	for len(changed) > 0 {
		<-changed
	}
	found, isErr := callText(t, cs, "search_tools", `{"query":"what is the weather like in Lisbon right now","limit":1}`)
	if isErr || !strings.Contains(found, `"name":"mcp__demo__weather"`) {
		t.Fatalf("search_tools: %s", found)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatalf("no list_changed after the search\n%s", stderr.String())
	}
	if got := toolNames(t, cs); !slices.Equal(got, []string{"mcp__demo__echo", "mcp__demo__weather", "search_tools"}) {
		t.Errorf("after the search the client lists %v", got)
	}
	if got, isErr := callText(t, cs, "mcp__demo__weather", `{"city":"Lisbon"}`); isErr || !strings.Contains(got, "Lisbon") {
		t.Errorf("weather: %q %v", got, isErr)
	}
}
