package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// userScope points XDG_CONFIG_HOME at a fresh directory and returns the
// user config's path there.
func userScope(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	return filepath.Join(dir, "mcpbridge", "config.yaml")
}

func writeFileAt(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A server added to the user scope works from any directory, and add says
// what it wrote where.
func TestUserScopeFromAnyDirectory(t *testing.T) {
	user := userScope(t)
	t.Chdir(t.TempDir())
	r := mcpbridge(t, "", "add", "demo", "--", "${MCPBRIDGE_EXE}", "demo-server")
	if want := "Added stdio server \"demo\" to " + user + " (user scope)\n"; r.code != ExitOK || r.stdout != want {
		t.Fatalf("add: %+v\nwant stdout %q", r, want)
	}
	t.Chdir(t.TempDir())
	r = mcpbridge(t, "", "call", "mcp__demo__add", `{"a": 1, "b": 2}`)
	if r.code != ExitOK || r.stdout != "3\n" || strings.Contains(r.stderr, "embedded") {
		t.Errorf("call from another directory: %+v", r)
	}
}

// The project file is found from a subdirectory up to the repository
// root; its entries replace the user's of the same id; a serverName used
// by both files under two ids is refused, naming both places.
func TestProjectScopeMerge(t *testing.T) {
	user := userScope(t)
	writeFileAt(t, user, `- id: demo
  name: mcp-client
  config: {serverName: demo, transport: stdio, command: no-such-server-xyz}
- id: mine
  name: mcp-client
  config: {serverName: shared, transport: stdio, command: no-such-server-xyz}
`)
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(repo, "mcpbridge.yaml")
	writeFileAt(t, project, `- id: demo
  name: mcp-client
  config: {serverName: demo, transport: stdio, command: "${MCPBRIDGE_EXE}", args: [demo-server]}
- id: theirs
  name: mcp-client
  config: {serverName: shared, transport: stdio, command: no-such-server-xyz}
`)
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	r := mcpbridge(t, "", "call", "mcp__demo__add", `{"a": 2, "b": 2}`)
	if r.code != ExitOK || r.stdout != "4\n" {
		t.Errorf("call of the project's demo: %+v", r)
	}
	r = mcpbridge(t, "", "validate")
	want := project + `:6:24: entry "theirs": config.serverName: serverName "shared" is already used by entry "mine" in ` + user + `:4`
	if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("validate: exit %d, want 2 and\n%s\ngot:\n%s", r.code, want, r.stderr)
	}
}

// Outside a repository only the working directory is looked in; with no
// file at all, the embedded default runs and says so.
func TestEmbeddedDefaultNotice(t *testing.T) {
	userScope(t)
	parent := t.TempDir()
	writeFileAt(t, filepath.Join(parent, "mcpbridge.yaml"), "- {id: x, name: nope}\n")
	dir := filepath.Join(parent, "sub")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	r := mcpbridge(t, "", "tools")
	if r.code != ExitOK || !strings.Contains(r.stderr, "mcpbridge: no config file found: using the embedded demo config; 'mcpbridge add' creates one (looked for mcpbridge.yaml (here, or up to the repository root) or ") {
		t.Errorf("tools: %+v", r)
	}
	// With a file, no notice.
	writeFileAt(t, "mcpbridge.yaml", demoEntry)
	if r := mcpbridge(t, "", "tools"); r.code != ExitOK || strings.Contains(r.stderr, "embedded") {
		t.Errorf("tools with a file: %+v", r)
	}
}

// headerRecorder serves h and keeps the headers of every request.
type headerRecorder struct {
	h  http.Handler
	mu sync.Mutex
	hs []http.Header
}

func (rec *headerRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.hs = append(rec.hs, r.Header.Clone())
	rec.mu.Unlock()
	rec.h.ServeHTTP(w, r)
}

func (rec *headerRecorder) sawHeader(k, v string) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, h := range rec.hs {
		if h.Get(k) == v {
			return true
		}
	}
	return false
}

// Claude Code's `claude mcp add` lines, with mcpbridge in place of
// claude, add stdio (with env), Streamable HTTP and SSE servers (with
// headers) that then work.
func TestAddClaudeForms(t *testing.T) {
	userScope(t)
	t.Chdir(t.TempDir())
	httpSrv := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	fixture := mcppeer.Fixture(mcppeer.FixtureOptions{})
	sse := &headerRecorder{h: mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return fixture }, nil)}
	sseSrv := httptest.NewServer(sse)
	t.Cleanup(sseSrv.Close)
	t.Setenv("ADD_TEST_TOKEN", "s3cret")

	for _, c := range []struct {
		args []string
		out  string
	}{
		{[]string{"add", "--scope", "project", "--transport", "stdio", "-e", "DEMO_KEY=${ADD_TEST_TOKEN}", "demo", "--", "${MCPBRIDGE_EXE}", "demo-server"},
			`Added stdio server "demo" to mcpbridge.yaml (project scope)`},
		{[]string{"add", "--transport", "http", "web", httpSrv.URL, "-H", "Authorization: Bearer ${ADD_TEST_TOKEN}"},
			`Added streamable-http server "web" to mcpbridge.yaml (project scope)`},
		{[]string{"add", "--transport", "sse", "--header", "X-Api-Key: ${ADD_TEST_TOKEN}", "old", sseSrv.URL},
			`Added sse server "old" to mcpbridge.yaml (project scope)`},
	} {
		if r := mcpbridge(t, "", c.args...); r.code != ExitOK || r.stdout != c.out+"\n" {
			t.Fatalf("%v: %+v", c.args, r)
		}
	}
	if r := mcpbridge(t, "", "call", "mcp__demo__add", `{"a": 1, "b": 1}`); r.code != ExitOK || r.stdout != "2\n" {
		t.Errorf("stdio: %+v", r)
	}
	if r := mcpbridge(t, "", "call", "mcp__web__add", `{"a": 1, "b": 2}`); r.code != ExitOK || r.stdout != "3\n" {
		t.Errorf("http: %+v", r)
	}
	if !sawHeader(httpSrv.Headers(), "Authorization", "Bearer s3cret") {
		t.Errorf("http: the header was not sent")
	}
	if r := mcpbridge(t, "", "call", "mcp__old__add", `{"a": 2, "b": 2}`); r.code != ExitOK || r.stdout != "4\n" {
		t.Errorf("sse: %+v", r)
	}
	if !sse.sawHeader("X-Api-Key", "s3cret") {
		t.Errorf("sse: the header was not sent")
	}
	data, _ := os.ReadFile("mcpbridge.yaml")
	if strings.Contains(string(data), "s3cret") || !strings.Contains(string(data), "DEMO_KEY: ${ADD_TEST_TOKEN}") {
		t.Errorf("the file:\n%s", data)
	}
}

func sawHeader(hs []http.Header, k, v string) bool {
	for _, h := range hs {
		if h.Get(k) == v {
			return true
		}
	}
	return false
}

// add refuses what Claude Code would refuse, before writing anything, and
// names no file it did not write.
func TestAddRefusedWritesNothing(t *testing.T) {
	userScope(t)
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "--scope", "project", "--transport", "http", "web"}, "--transport http needs the server's URL"},
		{[]string{"add", "--scope", "project", "--transport", "stdio", "web", "https://x"}, "--transport stdio runs a command"},
		{[]string{"add", "--scope", "project", "--transport", "ws", "web", "https://x"}, `--transport "ws": want stdio, http or sse`},
		{[]string{"add", "--scope", "team", "web", "https://x"}, `mcpbridge: add: --scope "team": want local (yours, this project only), project (shared with the project) or user (yours, every project)`},
		{[]string{"add-json", "--scope", "team", "web", `{"url": "https://x"}`}, `mcpbridge: add-json: --scope "team": want local (yours, this project only), project (shared with the project) or user (yours, every project)`},
		{[]string{"remove", "--scope", "team", "web"}, `mcpbridge: remove: --scope "team": want local (yours, this project only), project (shared with the project) or user (yours, every project)`},
		{[]string{"add", "--scope", "project", "web", "https://x", "-H", "X: ${UNSET_IN_TEST_XYZ"}, `server "web" not added, it would not be valid:`},
	} {
		r := mcpbridge(t, "", c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "mcpbridge.yaml") {
			t.Errorf("%v: exit %d, want 2 and %q (and no file named)\n%s", c.args, r.code, c.want, r.stderr)
		}
	}
	if _, err := os.Stat("mcpbridge.yaml"); err == nil {
		t.Errorf("a refused add wrote mcpbridge.yaml")
	}
}

// remove refuses --scope beside --config (or MCPBRIDGE_CONFIG), as add
// does, and changes neither file: it used to take the config and ignore
// the scope, removing the entry from a file the user did not mean.
func TestRemoveScopeWithConfigRefused(t *testing.T) {
	user := userScope(t)
	writeFileAt(t, user, demoEntry)
	t.Chdir(t.TempDir())
	writeFileAt(t, "team.yaml", demoEntry)
	r := mcpbridge(t, "", "remove", "--config", "team.yaml", "--scope", "user", "demo")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "remove: --scope and --config (or MCPBRIDGE_CONFIG) cannot be used together") {
		t.Errorf("remove --scope with --config: %+v", r)
	}
	for _, path := range []string{user, "team.yaml"} {
		if got := readFile(t, path); got != demoEntry {
			t.Errorf("%s changed (%d bytes, want %d):\n%s", path, len(got), len(demoEntry), got)
		}
	}
}

// remove suggests the name meant.
func TestRemoveSuggests(t *testing.T) {
	inDir(t, demoEntry)
	r := mcpbridge(t, "", "remove", "dmeo")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `has no server "dmeo": did you mean "demo"?`) {
		t.Errorf("remove: %+v", r)
	}
}

// serve watches every file in use: an edit of the user file reloads it,
// merged with the project file.
func TestServeWatchesEveryScope(t *testing.T) {
	user := userScope(t)
	writeFileAt(t, user, fixtureEntries(t, "a"))
	t.Chdir(t.TempDir())
	writeFileAt(t, "mcpbridge.yaml", fixtureEntries(t, "b"))
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cmd := mcpbridgeCommand(t, "serve", "--stdio")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	waitTools(t, cs, "mcp__a__greet", "mcp__b__greet")
	writeFileAt(t, user, fixtureEntries(t, "a", "c"))
	waitTools(t, cs, "mcp__a__greet", "mcp__b__greet", "mcp__c__greet")
}

// serveInScope runs `mcpbridge serve --stdio` on the scopes' files (no
// --config); stderr fills with its logs.
func serveInScope(t *testing.T) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	cmd := mcpbridgeCommand(t, "serve", "--stdio")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

// keepsTools checks, for a second after a reload, that tools/list still
// holds want.
func keepsTools(t *testing.T, cs *mcp.ClientSession, stderr *lockedBuffer, want ...string) {
	t.Helper()
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		names := toolNames(t, cs)
		for _, w := range want {
			if !slices.Contains(names, w) {
				t.Fatalf("%s is gone after the reload: %v\n%s", w, names, stderr.String())
			}
		}
	}
}

// A deleted project file keeps its servers running, with a warning, until
// it comes back, an edit of the user file meanwhile included (it was read
// without the project file, which stopped the project's servers).
func TestServeKeepsDeletedScopeFile(t *testing.T) {
	user := userScope(t)
	writeFileAt(t, user, fixtureEntries(t, "a"))
	t.Chdir(t.TempDir())
	writeFileAt(t, "mcpbridge.yaml", fixtureEntries(t, "b"))
	cs, stderr := serveInScope(t)
	waitTools(t, cs, "mcp__a__greet", "mcp__b__greet")
	if err := os.Remove("mcpbridge.yaml"); err != nil {
		t.Fatal(err)
	}
	mcptest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), "config file deleted") },
		"the deletion's warning:\n%s", stderr)
	writeFileAt(t, user, fixtureEntries(t, "a", "c"))
	waitTools(t, cs, "mcp__a__greet", "mcp__b__greet", "mcp__c__greet")
	keepsTools(t, cs, stderr, "mcp__a__greet", "mcp__b__greet", "mcp__c__greet")
	writeFileAt(t, "mcpbridge.yaml", fixtureEntries(t, "d"))
	waitTools(t, cs, "mcp__a__greet", "mcp__c__greet", "mcp__d__greet")
	mcptest.Eventually(t, 10*time.Second, func() bool { return !slices.Contains(toolNames(t, cs), "mcp__b__greet") },
		"b to stop once the project file that no longer has it is back")
}

// A user config holding only the agent's permissions runs the embedded
// demo beside them (loadSource), and still does after an edit of that
// file (the reload read it without the demo, and stopped it).
func TestServeReloadKeepsDemoBesidePermissions(t *testing.T) {
	user := userScope(t)
	writeFileAt(t, user, "- {id: permissions, name: permissions, config: {allow: [mcp__demo__add]}}\n")
	t.Chdir(t.TempDir())
	cs, stderr := serveInScope(t)
	waitTools(t, cs, "mcp__demo__add")
	writeFileAt(t, user, "- {id: permissions, name: permissions, config: {allow: [mcp__demo__add, mcp__demo__echo]}}\n")
	mcptest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), "config file changed, reloading") },
		"the reload:\n%s", stderr)
	keepsTools(t, cs, stderr, "mcp__demo__add")
}

// A URL without http:// or https:// after the name is refused, with the
// URL meant and where a command goes, and nothing is written; after --
// it is a command. It used to be written as a stdio server's command.
func TestAddURLWithoutScheme(t *testing.T) {
	cfg := writeConfig(t, demoEntry)
	for _, c := range []struct{ arg, want string }{
		{"localhost:3001/mcp", "http://localhost:3001/mcp"},
		{"127.0.0.1:9/mcp", "http://127.0.0.1:9/mcp"},
		{"mcp.example.com:8443/mcp", "https://mcp.example.com:8443/mcp"},
		{"ftp://x/mcp", "http:// or https://"},
	} {
		r := mcpbridge(t, "", "add", "--config", cfg, "w5", c.arg)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "mcpbridge add --config "+shellQuote(cfg)+" w5 -- "+c.arg) {
			t.Errorf("add w5 %s: exit %d, want 2, %q and the command form\n%s%s", c.arg, r.code, c.want, r.stdout, r.stderr)
		}
	}
	if got := readFile(t, cfg); got != demoEntry {
		t.Errorf("a refused add changed the file:\n%s", got)
	}
	if r := mcpbridge(t, "", "add", "--config", cfg, "w5", "--", "localhost:3001/mcp"); r.code != ExitOK || r.stdout != "Added stdio server \"w5\" to "+cfg+"\n" {
		t.Errorf("add w5 -- localhost:3001/mcp: %+v", r)
	}
}

// A name that is no valid id is refused as any other invalid add, by
// field, with no position in the file that was not written. It used to
// be refused as an invalid config, at a line of the result.
func TestAddInvalidIDRefusedByField(t *testing.T) {
	cfg := writeConfig(t, demoEntry)
	for _, c := range []struct{ name, want string }{
		{"bad name", `mcpbridge: server "bad name" not added, it would not be valid:` + "\n" + `id: "bad name" is not a valid id: use 1 to 64`},
		{"a/b", `mcpbridge: server "a/b" not added, it would not be valid:` + "\n" + `id: "a/b" is not a valid id: use 1 to 64`},
		{"", `mcpbridge: add: the server's name is empty: want NAME like github`},
	} {
		r := mcpbridge(t, "", "add", "--config", cfg, c.name, "--", "cmd")
		if r.code != ExitUsage || !strings.HasPrefix(r.stderr, c.want) || strings.Contains(r.stderr, cfg) {
			t.Errorf("add %q: exit %d, want 2 and\n%s\n(and no file named), got:\n%s", c.name, r.code, c.want, r.stderr)
		}
	}
	if got := readFile(t, cfg); got != demoEntry {
		t.Errorf("a refused add changed the file:\n%s", got)
	}
}

// otherKinds is a config with a server among entries of other kinds.
const otherKinds = `# mine
- id: permissions
  name: permissions
  config:
    allow: ["mcp__demo__*"]
    deny: [mcp__demo__add]
- id: model
  name: model
  config: {model: deepseek-chat}
- id: demo
  name: mcp-client
  config: {serverName: demo, transport: stdio, command: "${MCPBRIDGE_EXE}", args: [demo-server]}
`

// remove takes servers only: another kind of entry is refused, named by
// its kind and place, with how to remove it, and the file is left as it
// was; get shows it under its kind, with no serverName; completion
// offers only servers after remove. remove used to take the permissions
// entry, deny rules and all, saying it removed a server, get showed the
// kind as a serverName, and completion offered every entry.
func TestRemoveTakesServersOnly(t *testing.T) {
	cfg := writeConfig(t, otherKinds)
	for _, c := range []struct{ name, want string }{
		{"permissions", `remove: "permissions" is the permissions entry at ` + cfg + `:2, not a server: remove takes servers (mcp-client entries) only; to remove it, delete its lines from ` + cfg},
		{"model", `remove: "model" is the model entry at ` + cfg + `:7, not a server`},
	} {
		r := mcpbridge(t, "", "remove", "--config", cfg, c.name)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("remove %s: exit %d, want 2 and %q\n%s%s", c.name, r.code, c.want, r.stdout, r.stderr)
		}
	}
	if got := readFile(t, cfg); got != otherKinds {
		t.Errorf("a refused remove changed the file:\n%s", got)
	}
	r := mcpbridge(t, "", "get", "--config", cfg, "permissions")
	if r.code != ExitOK || !strings.Contains(r.stdout, "plugin: permissions\n") || strings.Contains(r.stdout, "serverName") {
		t.Errorf("get permissions: %+v", r)
	}
	r = mcpbridge(t, "", "get", "--config", cfg, "--json", "model")
	if r.code != ExitOK || !strings.Contains(r.stdout, `"serverName": ""`) {
		t.Errorf("get --json model: %+v", r)
	}
	r = mcpbridge(t, "", "__complete", dynamicArgs()["remove"], "--config", cfg)
	if r.code != ExitOK || r.stdout != "demo\n" {
		t.Errorf("completion after remove: %+v", r)
	}
	r = mcpbridge(t, "", "__complete", dynamicArgs()["get"], "--config", cfg)
	if r.code != ExitOK || r.stdout != "permissions\nmodel\ndemo\n" {
		t.Errorf("completion after get: %+v", r)
	}
	if r := mcpbridge(t, "", "remove", "--config", cfg, "demo"); r.code != ExitOK || r.stdout != `Removed server "demo" from `+cfg+"\n" {
		t.Errorf("remove demo: %+v", r)
	}
}

// add of a name another kind of entry has says that entry's kind and to
// pick another name (it said a server had it: remove it first, which
// remove refuses).
func TestAddNameOfAnotherKind(t *testing.T) {
	cfg := writeConfig(t, otherKinds)
	r := mcpbridge(t, "", "add", "--config", cfg, "model", "https://x/mcp")
	if want := `add: ` + cfg + ` already has the model entry "model" (line 7); give the server another name`; r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("add model: %+v\nwant %q", r, want)
	}
	r = mcpbridge(t, "", "add", "--config", cfg, "demo", "https://x/mcp")
	if want := `already has a server "demo" (line 10); remove it first`; r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("add demo: %+v\nwant %q", r, want)
	}
	if got := readFile(t, cfg); got != otherKinds {
		t.Errorf("a refused add changed the file:\n%s", got)
	}
}
