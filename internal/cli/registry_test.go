package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/registry"
	"github.com/mcpbridge/mcpbridge/internal/registry/registrytest"
)

// registryDocs is the captured server.json documents the fixture serves.
const registryDocs = "../registry/testdata"

// useRegistry starts the fixture registry and points mcpbridge at it,
// with a cache of the test's own.
func useRegistry(t *testing.T) *registrytest.Registry {
	t.Helper()
	reg := registrytest.New(t, filepath.Join(registryDocs, "servers"))
	t.Setenv("MCPBRIDGE_REGISTRY_URL", reg.URL)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	return reg
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The npm package of the reference everything server, as the registry
// lists it, is written as npx -y pkg@version and starts: its tools are
// called through the entry add wrote. The registry document is the
// captured one at the version the lockfile installs, so that npx finds
// the package in testdata/thirdparty/node_modules without the network.
func TestAddFromRegistryStartsNPMServer(t *testing.T) {
	bin := mcptest.ThirdPartyBin(t, "mcp-server-everything")
	pkgDir := filepath.Join(filepath.Dir(bin), "..", "@modelcontextprotocol", "server-everything")
	var installed struct{ Version string }
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(pkgDir, "package.json"))), &installed); err != nil {
		t.Fatal(err)
	}
	reg := useRegistry(t)
	doc := strings.ReplaceAll(readFile(t, filepath.Join(registryDocs, "servers", "everything.json")), `"2.0.0"`, `"`+installed.Version+`"`)
	reg.Publish(t, []byte(doc))
	cfg := filepath.Join(t.TempDir(), "mcpbridge.yaml")
	t.Chdir(filepath.Join(filepath.Dir(bin), "..", "..")) // testdata/thirdparty: npx resolves the package there
	t.Setenv("npm_config_offline", "true")                // and never from the network, which passes the child on

	r := mcpbridge(t, "", "add", "--config", cfg, "--from-registry", "io.github.modelcontextprotocol/server-everything", "everything")
	if r.code != ExitOK {
		t.Fatalf("add: %+v", r)
	}
	want := `- id: everything
  name: mcp-client
  config:
    serverName: everything
    transport: stdio
    command: npx
    args: [-y, '@modelcontextprotocol/server-everything@` + installed.Version + `', stdio]
    registry: {name: io.github.modelcontextprotocol/server-everything, version: ` + installed.Version + `}
`
	if got := readFile(t, cfg); got != want {
		t.Errorf("written:\n%s\nwant:\n%s", got, want)
	}
	r = mcpbridge(t, "", "get", "--config", cfg, "everything")
	if want := `registry: {"name":"io.github.modelcontextprotocol/server-everything","version":"` + installed.Version + `"}`; !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), want) {
		t.Errorf("get: %+v\nwant %q", r, want)
	}
	r = mcpbridge(t, "", "call", "--config", cfg, "mcp__everything__echo", `{"message": "from the registry"}`)
	if r.code != ExitOK || !strings.Contains(r.stdout, "Echo: from the registry") {
		t.Errorf("call through the added entry: %+v", r)
	}
}

// Each package type and each remote is written as the registry
// describes it; what the user must give is a ${VAR} reference, listed on
// stderr, and never a value, even one set in the environment.
func TestAddFromRegistryWritesEveryKind(t *testing.T) {
	useRegistry(t)
	t.Setenv("BRAVE_API_KEY", "s3cret-from-the-shell")
	const name = "io.github.mcpbridge/every-package-type"
	tests := []struct {
		flags  []string
		config string
		notes  []string
	}{
		{[]string{"--package", "npm"}, `    transport: stdio
    command: npx
    args: [-y, '@modelcontextprotocol/server-brave-search@1.0.2']
    env:
      BRAVE_API_KEY: ${BRAVE_API_KEY}
`, []string{"mcpbridge: add: it runs: npx -y @modelcontextprotocol/server-brave-search@1.0.2\n", "mcpbridge: add: set BRAVE_API_KEY: Brave Search API Key; a secret"}},
		{[]string{"--package", "pypi"}, `    transport: stdio
    command: uvx
    args: [weather-mcp-server==0.5.0]
    env:
      WEATHER_API_KEY: ${WEATHER_API_KEY}
`, []string{"set WEATHER_API_KEY"}},
		{[]string{"--package", "oci"}, `    transport: stdio
    command: docker
    args: [run, -i, --rm, --network, host, -e, 'DB_TYPE=${DB_TYPE}', -e, DB_USERNAME, -e, DB_PASSWORD, -e, SSL_MODE, 'docker.io/example/database-manager-mcp:3.1.0', --host, '${MCP_HOST:-localhost}', '${DATABASE_NAME}']
    env:
      DB_USERNAME: ${DB_USERNAME}
      DB_PASSWORD: ${DB_PASSWORD}
`, []string{"set DB_TYPE ({db_type})", "set DATABASE_NAME (database_name)"}},
		{[]string{"--package", "nuget"}, `    transport: stdio
    command: dnx
    args: [Knapcode.SampleMcpServer@0.4.0-beta, --yes, --, mcp, start]
`, nil},
		{[]string{"--remote", "1"}, `    transport: streamable-http
    url: https://mcp.anonymous.modelcontextprotocol.io/http
    headers:
      X-API-Key: ${X_API_KEY}
`, []string{"set X_API_KEY (X-API-Key): API key for authentication; a secret"}},
		{[]string{"--remote", "2"}, `    transport: sse
    url: https://mcp.anonymous.modelcontextprotocol.io/sse
`, nil},
	}
	for _, tt := range tests {
		cfg := filepath.Join(t.TempDir(), "mcpbridge.yaml")
		args := append([]string{"add", "--config", cfg, "--from-registry", name}, tt.flags...)
		r := mcpbridge(t, "", args...)
		if r.code != ExitOK {
			t.Errorf("%v: %+v", tt.flags, r)
			continue
		}
		want := "- id: every-package-type\n  name: mcp-client\n  config:\n    serverName: every-package-type\n" + tt.config +
			"    registry: {name: " + name + ", version: 1.0.0}\n"
		if got := readFile(t, cfg); got != want {
			t.Errorf("%v: written:\n%s\nwant:\n%s", tt.flags, got, want)
		}
		for _, n := range tt.notes {
			if !strings.Contains(r.stderr, n) {
				t.Errorf("%v: stderr lacks %q:\n%s", tt.flags, n, r.stderr)
			}
		}
		if strings.Contains(readFile(t, cfg)+r.stdout+r.stderr, "s3cret-from-the-shell") {
			t.Errorf("%v: a value of the environment was written or shown", tt.flags)
		}
	}
}

// What add --from-registry cannot do is refused with what to do instead,
// and nothing is written.
func TestAddFromRegistryRefuses(t *testing.T) {
	useRegistry(t)
	cfg := filepath.Join(t.TempDir(), "mcpbridge.yaml")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--from-registry", "io.github.mcpbridge/every-package-type", "--package", "mcpb"}, ExitUsage, "MCP bundle"},
		{[]string{"--from-registry", "io.github.mcpbridge/every-package-type", "--remote", "3"}, ExitUsage, "has 2 remotes"},
		{[]string{"--from-registry", "io.github.mcpbridge/every-package-type", "--remote", "first"}, ExitUsage, `--remote "first": want the remote's number`},
		{[]string{"--from-registry", "io.github.mcpbridge/every-package-type", "--package", "npm", "--remote", "1"}, ExitUsage, "not both"},
		{[]string{"--package", "npm", "brave"}, ExitUsage, "go with --from-registry"},
		{[]string{"--from-registry", "io.github.mcpbridge/every-package-type", "x", "--", "npx", "y"}, ExitUsage, "give only [NAME]"},
		{[]string{"--from-registry", "io.github.nobody/nothing"}, ExitFailed, `has no server "io.github.nobody/nothing"`},
		{[]string{"--from-registry", "io.github.modelcontextprotocol/filesystem@9.9.9"}, ExitFailed, `no version 9.9.9`},
		{[]string{"--from-registry", filepath.Join(registryDocs, "invalid", "missing-name.json")}, ExitUsage, `"name" is required`},
		{[]string{"--from-registry", "./no-such-server.json"}, ExitUsage, "no such file"},
	}
	for _, tt := range tests {
		r := mcpbridge(t, "", append([]string{"add", "--config", cfg}, tt.args...)...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, r.code, r.stderr, tt.code, tt.want)
		}
	}
	if _, err := os.Stat(cfg); err == nil {
		t.Errorf("a refused add wrote %s:\n%s", cfg, readFile(t, cfg))
	}
}

// A server.json file needs no registry: add --from-registry FILE and
// import FILE work with the registry out of reach.
func TestServerJSONFileOffline(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	t.Setenv("MCPBRIDGE_REGISTRY_URL", gone.URL)
	doc := filepath.Join(registryDocs, "servers", "multi-tenant-server.json")
	cfg := filepath.Join(t.TempDir(), "mcpbridge.yaml")
	r := mcpbridge(t, "", "add", "--config", cfg, "--from-registry", doc, "tenant")
	if r.code != ExitOK || !strings.Contains(r.stderr, "set TENANT_ID ({tenant_id})") {
		t.Fatalf("add from a file: %+v", r)
	}
	want := `- id: tenant
  name: mcp-client
  config:
    serverName: tenant
    transport: streamable-http
    url: https://anonymous.modelcontextprotocol.io/mcp/${TENANT_ID}
    registry: {name: io.modelcontextprotocol.anonymous/multi-tenant-server, version: 1.0.0}
`
	if got := readFile(t, cfg); got != want {
		t.Errorf("written:\n%s\nwant:\n%s", got, want)
	}
	// show of the file offers the add that works offline: from the file.
	r = mcpbridge(t, "", "registry", "show", doc)
	if r.code != ExitOK || !strings.Contains(r.stdout, "Add it: mcpbridge add --from-registry "+doc+"\n") {
		t.Errorf("registry show of a file: %+v, want it to offer the add from the file", r)
	}
	r = mcpbridge(t, "", "import", doc)
	if r.code != ExitOK || r.stdout != strings.ReplaceAll(want, "tenant\n", "multi-tenant-server\n") {
		t.Errorf("import: %+v\nwant stdout:\n%s", r, strings.ReplaceAll(want, "tenant\n", "multi-tenant-server\n"))
	}
	r = mcpbridge(t, "", "import", filepath.Join(registryDocs, "servers", "text-editor.json"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, "MCP bundle") {
		t.Errorf("import of an mcpb-only server: %+v", r)
	}
}

// search follows the registry's cursors; show numbers the packages and
// remotes as add takes them; a second show is revalidated by ETag.
func TestRegistrySearchAndShow(t *testing.T) {
	reg := useRegistry(t)
	reg.PageSize = 2
	r := mcpbridge(t, "", "registry", "search", "io.github")
	if r.code != ExitOK {
		t.Fatalf("search: %+v", r)
	}
	for _, name := range []string{"io.github.example/database-manager", "io.github.modelcontextprotocol/server-everything", "io.github.example/weather-mcp"} {
		if !strings.Contains(r.stdout, name) {
			t.Errorf("search lacks %s:\n%s", name, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "6 servers") {
		t.Errorf("search stderr: %q", r.stderr)
	}
	cursors := 0
	for _, q := range reg.Requests() {
		if strings.Contains(q, "cursor=") {
			cursors++
		}
	}
	if cursors != 2 {
		t.Errorf("%d pages after the first, want 2 (6 servers, 2 a page): %v", cursors, reg.Requests())
	}

	r = mcpbridge(t, "", "registry", "show", "io.github.mcpbridge/every-package-type")
	for _, want := range []string{
		"package 1 (--package npm): @modelcontextprotocol/server-brave-search 1.0.2, stdio",
		"runs: npx -y @modelcontextprotocol/server-brave-search@1.0.2",
		"package 5 (--package mcpb)", "not added by mcpbridge: the mcpb package",
		"remote 2 (--remote 2): sse https://mcp.anonymous.modelcontextprotocol.io/sse",
		"Add it: mcpbridge add --from-registry io.github.mcpbridge/every-package-type@1.0.0",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	before := reg.NotModified()
	r = mcpbridge(t, "", "registry", "--json", "show", "io.github.mcpbridge/every-package-type") // flags may stand before the subcommand
	if r.code != ExitOK || !strings.Contains(r.stdout, `"registryType": "mcpb"`) {
		t.Errorf("show --json: %+v", r)
	}
	if reg.NotModified() != before+1 {
		t.Errorf("the second show was not revalidated by ETag (%d answers 304)", reg.NotModified())
	}
}

// registry outdated names the entries whose registry has a newer version.
func TestRegistryOutdated(t *testing.T) {
	reg := useRegistry(t)
	cfg := filepath.Join(t.TempDir(), "mcpbridge.yaml")
	for _, name := range []string{"io.github.joelverhagen/knapcode-samplemcpserver", "io.modelcontextprotocol.anonymous/brave-search"} {
		if r := mcpbridge(t, "", "add", "--config", cfg, "--from-registry", name); r.code != ExitOK {
			t.Fatalf("add %s: %+v", name, r)
		}
	}
	r := mcpbridge(t, "", "registry", "outdated", "--config", cfg)
	if r.code != ExitOK || strings.Count(r.stdout, "up to date") != 2 {
		t.Errorf("before a release: %+v", r)
	}
	reg.Publish(t, []byte(readFile(t, filepath.Join(registryDocs, "newer", "knapcode-samplemcpserver-0.5.0.json"))))
	r = mcpbridge(t, "", "registry", "outdated", "--config", cfg, "--json")
	var got []registry.Outdated
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != ExitOK {
		t.Fatalf("outdated --json: %v %+v", err, r)
	}
	want := []registry.Outdated{
		{ID: "knapcode-samplemcpserver", Name: "io.github.joelverhagen/knapcode-samplemcpserver", Version: "0.4.0-beta", Latest: "0.5.0", Outdated: true},
		{ID: "brave-search", Name: "io.modelcontextprotocol.anonymous/brave-search", Version: "1.0.2", Latest: "1.0.2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	r = mcpbridge(t, "", "registry", "outdated", "--config", cfg)
	// The advice keeps the entry's file, name and kind of package: taken
	// as written, it updates that entry and no other. It used to name
	// neither the file nor the entry's name.
	want2 := "0.5.0 is published: mcpbridge remove knapcode-samplemcpserver --config " + shellQuote(cfg) +
		", then mcpbridge add --from-registry io.github.joelverhagen/knapcode-samplemcpserver --config " + shellQuote(cfg) + " knapcode-samplemcpserver --package nuget"
	if !strings.Contains(r.stdout, want2) {
		t.Fatalf("outdated: %+v\nwant %q", r, want2)
	}
	advice, _, _ := strings.Cut(r.stdout[strings.Index(r.stdout, "mcpbridge remove"):], "\n")
	for _, command := range strings.Split(strings.TrimSpace(advice), ", then ") {
		if r := mcpbridge(t, "", strings.Fields(command)[1:]...); r.code != ExitOK {
			t.Fatalf("%s: %+v", command, r)
		}
	}
	r = mcpbridge(t, "", "registry", "outdated", "--config", cfg)
	if r.code != ExitOK || strings.Count(r.stdout, "up to date") != 2 {
		t.Errorf("after following the advice: %+v", r)
	}

	// An entry whose server the registry no longer has cannot be checked:
	// it says so, and the status says one check failed.
	other := writeConfig(t, `- id: gone
  name: mcp-client
  config:
    serverName: gone
    transport: stdio
    command: npx
    args: [-y, gone@1.0.0]
    registry: {name: io.github.nobody/gone, version: 1.0.0}
`)
	r = mcpbridge(t, "", "registry", "outdated", "--config", other)
	if r.code != ExitFailed || !strings.Contains(r.stdout, `unknown: the registry at `+reg.URL+` has no server "io.github.nobody/gone"`) {
		t.Errorf("outdated, a server the registry does not have: %+v", r)
	}
}

// A version the registry marks deprecated is still added, with its
// status and message said; show says it too.
func TestAddFromRegistryDeprecated(t *testing.T) {
	reg := useRegistry(t)
	reg.Deprecate("io.github.example/weather-mcp", "0.5.0", "use io.github.example/weather-v2")
	cfg := filepath.Join(t.TempDir(), "mcpbridge.yaml")
	r := mcpbridge(t, "", "add", "--config", cfg, "--from-registry", "io.github.example/weather-mcp")
	if want := "mcpbridge: add: the registry marks io.github.example/weather-mcp 0.5.0 deprecated: use io.github.example/weather-v2\n"; r.code != ExitOK || !strings.Contains(r.stderr, want) {
		t.Errorf("add: %+v\nwant %q on stderr", r, want)
	}
	r = mcpbridge(t, "", "registry", "show", "io.github.example/weather-mcp")
	if want := "The registry marks this version deprecated: use io.github.example/weather-v2\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("show: %+v", r)
	}
}

// A registry that cannot be used says why and how to fix it.
func TestRegistryErrors(t *testing.T) {
	reg := useRegistry(t)
	reg.Answer("/v0.1/servers", 200, "text/html", "<html>captive portal</html>")
	r := mcpbridge(t, "", "registry", "search", "x")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "not JSON") || !strings.Contains(r.stderr, "MCPBRIDGE_REGISTRY_URL") {
		t.Errorf("HTML answer: %+v", r)
	}
	t.Setenv("MCPBRIDGE_REGISTRY_URL", "registry.example.test")
	r = mcpbridge(t, "", "registry", "show", "io.github.a/b")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "want the registry's http(s) base URL") {
		t.Errorf("a bad MCPBRIDGE_REGISTRY_URL: %+v", r)
	}
	for _, args := range [][]string{{"registry"}, {"registry", "find", "x"}, {"registry", "search"}, {"registry", "show", "a", "b"}} {
		if r := mcpbridge(t, "", args...); r.code != ExitUsage {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if r := mcpbridge(t, "", "registry", "serch", "x"); r.code != ExitUsage || !strings.Contains(r.stderr, `unknown subcommand "serch": did you mean "search"?`) {
		t.Errorf("a misspelt subcommand: %+v", r)
	}
}

// A registry's text reaches the terminal escaped, its package type too: a
// hostile server.json cannot write to the clipboard (OSC 52) or draw
// lines of its own through `registry show`.
func TestRegistryShowEscapesThePackageType(t *testing.T) {
	reg := useRegistry(t)
	reg.Publish(t, []byte(`{
  "name": "io.github.example/hostile",
  "description": "x",
  "version": "1.0.0",
  "packages": [{"registryType": "npm\u001b]52;c;cHduZWQ=\u0007\nrunning: rm -rf ~", "identifier": "x", "version": "1.0.0", "transport": {"type": "stdio"}}]
}`))
	r := mcpbridge(t, "", "registry", "show", "io.github.example/hostile")
	if strings.ContainsAny(r.stdout, "\x1b\x07") || strings.Contains(r.stdout, "\nrunning:") {
		t.Errorf("show printed the registry's control characters:\n%q", r.stdout)
	}
	if !strings.Contains(r.stdout, "package 1 (--package npm") {
		t.Errorf("show lacks the package:\n%s", r.stdout)
	}
}

// A remote entry that sends a variable already set in the user's
// environment to its host says so: the publisher chose the name, and a
// value set for something else would leave unasked. A package, which
// runs here, does not.
func TestAddFromRegistryWarnsOfVariablesSentAway(t *testing.T) {
	t.Setenv("TENANT_ID", "set-for-something-else")
	t.Setenv("BRAVE_API_KEY", "set")
	cfg := filepath.Join(t.TempDir(), "mcpbridge.yaml")
	r := mcpbridge(t, "", "add", "--config", cfg, "--from-registry", filepath.Join(registryDocs, "servers", "multi-tenant-server.json"), "tenant")
	if r.code != ExitOK || !strings.Contains(r.stderr, "TENANT_ID is set in your environment, and this entry sends its value to anonymous.modelcontextprotocol.io") {
		t.Errorf("remote: %+v", r)
	}
	r = mcpbridge(t, "", "add", "--config", cfg, "--from-registry", filepath.Join(registryDocs, "servers", "brave-search.json"), "brave")
	if r.code != ExitOK || strings.Contains(r.stderr, "sends its value") {
		t.Errorf("package: %+v", r)
	}
}

// A server whose own version is "latest" is refused as a package
// pinned to "latest" is, by show and add alike; and show offers no add
// of a server of which nothing can be added, saying why. Show printed
// both, and offered "add --from-registry NAME@latest", which failed.
func TestRegistryShowOffersOnlyWhatAdds(t *testing.T) {
	reg := useRegistry(t)
	cargo := func(name, version string) []byte {
		return []byte(`{"name": "io.github.example/` + name + `", "description": "x", "version": "` + version + `",
  "packages": [{"registryType": "cargo", "identifier": "` + name + `", "version": "0.3.1", "transport": {"type": "stdio"}}]}`)
	}
	reg.Publish(t, cargo("floating", "latest"))
	reg.Publish(t, cargo("crate-only", "1.0.0"))
	cfg := filepath.Join(t.TempDir(), "mcpbridge.yaml")

	const latest = `"version" must be a specific version, not "latest"`
	for _, args := range [][]string{
		{"registry", "show", "io.github.example/floating"},
		{"add", "--config", cfg, "--from-registry", "io.github.example/floating"},
	} {
		r := mcpbridge(t, "", args...)
		if r.code != ExitFailed || !strings.Contains(r.stderr, latest) || strings.Contains(r.stdout, "Add it") {
			t.Errorf("%v: %+v, want exit %d and %q", args, r, ExitFailed, latest)
		}
	}

	r := mcpbridge(t, "", "registry", "show", "io.github.example/crate-only")
	if r.code != ExitOK || strings.Contains(r.stdout, "Add it") || !strings.Contains(r.stdout, "mcpbridge cannot add it: ") {
		t.Errorf("show of a server nothing of which can be added: %+v, want no add offered and why", r)
	}
	if r := mcpbridge(t, "", "add", "--config", cfg, "--from-registry", "io.github.example/crate-only@1.0.0"); r.code == ExitOK {
		t.Errorf("add of the server show offers no add of: %+v", r)
	}
	if _, err := os.Stat(cfg); err == nil {
		t.Errorf("a refused add wrote %s:\n%s", cfg, readFile(t, cfg))
	}

	// add's own choice (the first npm or other package it runs) fails:
	// show offers the package that adds.
	reg.Publish(t, []byte(`{"name": "io.github.example/first-fails", "description": "x", "version": "1.0.0", "packages": [
  {"registryType": "npm", "identifier": "first", "version": "1.0.0", "transport": {"type": "stdio"}, "runtimeArguments": [{"type": "positional", "value": "other"}]},
  {"registryType": "pypi", "identifier": "second", "version": "2.0.0", "transport": {"type": "stdio"}}]}`))
	r = mcpbridge(t, "", "registry", "show", "io.github.example/first-fails")
	const offered = "Add it: mcpbridge add --from-registry io.github.example/first-fails@1.0.0 --package pypi\n"
	if r.code != ExitOK || !strings.HasSuffix(r.stdout, offered) {
		t.Fatalf("show of a server whose first package cannot be added: %+v, want %q", r, offered)
	}
	if r := mcpbridge(t, "", "add", "--config", cfg, "--from-registry", "io.github.example/first-fails@1.0.0", "--package", "pypi"); r.code != ExitOK || !strings.Contains(readFile(t, cfg), "second==2.0.0") {
		t.Errorf("the add show offers: %+v", r)
	}
}

// What add --from-registry suggests when it refuses is the user's own
// command, its --config, its server (a file here, not the name the file
// gives: the registry does not list it) and its NAME kept, with the
// choice to add: each line, pasted, adds the server. The hints used to
// drop them ("give one, as in mcpbridge add --from-registry NAME NAME",
// "it offers --package npm, pypi or --remote 1").
func TestAddFromRegistryHintsRepeatTheCommand(t *testing.T) {
	useRegistry(t)
	dir := filepath.Join(t.TempDir(), "my servers")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(dir, "server.json")
	// The npm package, add's own choice, cannot be added; no serverName
	// can be made of the name.
	if err := os.WriteFile(doc, []byte(`{"name": "io.github.example/...", "description": "x", "version": "1.0.0",
  "packages": [
    {"registryType": "npm", "identifier": "first", "version": "1.0.0", "transport": {"type": "stdio"}, "runtimeArguments": [{"type": "positional", "value": "other"}]},
    {"registryType": "pypi", "identifier": "second", "version": "2.0.0", "transport": {"type": "stdio"}},
    {"registryType": "mcpb", "identifier": "https://example.com/x.mcpb", "fileSha256": "ab", "transport": {"type": "stdio"}}],
  "remotes": [{"type": "streamable-http", "url": "https://example.com/mcp"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "mcpbridge.yaml")
	paste := func(what string, line []string, want string) {
		t.Helper()
		os.Remove(cfg)
		if r := mcpbridge(t, "", line...); r.code != ExitOK || !strings.Contains(readFile(t, cfg), want) {
			t.Errorf("%s, pasted: %q: %+v, want %q written", what, line, r, want)
		}
	}

	r := mcpbridge(t, "", "add", "--config", cfg, "--from-registry", doc, "--package", "pypi")
	hint := hintAfter(t, r.stderr, "give one, as in: mcpbridge ")
	want := []string{"add", "--config", cfg, "--from-registry", doc, "NAME", "--package", "pypi"}
	if r.code != ExitUsage || !slices.Equal(hint, want) {
		t.Fatalf("no name: exit %d, hint %q; want %d and %q\n%s", r.code, hint, ExitUsage, want, r.stderr)
	}
	hint[5] = "second"
	paste("the name hint", hint, "second==2.0.0")

	for _, refused := range [][]string{{"ex", "--remote", "2"}, {"ex", "--package", "cargo"}, {"ex"}, {"ex", "--package", "mcpb"}} {
		r := mcpbridge(t, "", append([]string{"add", "--config", cfg, "--from-registry", doc}, refused...)...)
		var lines [][]string
		for l := range strings.Lines(r.stderr) {
			if rest, ok := strings.CutPrefix(l, "  mcpbridge "); ok {
				lines = append(lines, shellWords(t, strings.TrimSuffix(rest, "\n")))
			}
		}
		line := func(choice ...string) []string {
			return append([]string{"add", "--config", cfg, "--from-registry", doc, "ex"}, choice...)
		}
		want := [][]string{line("--package", "pypi"), line("--remote", "1")}
		if r.code != ExitUsage || !cmp.Equal(lines, want) {
			t.Errorf("%q: exit %d, lines %q; want %d and %q\n%s", refused, r.code, lines, ExitUsage, want, r.stderr)
			continue
		}
		paste(strings.Join(refused, " "), lines[0], "second==2.0.0")
		paste(strings.Join(refused, " "), lines[1], "https://example.com/mcp")
	}
}
