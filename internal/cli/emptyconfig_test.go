package cli

import (
	"os"
	"strings"
	"testing"
)

// A user config left with no servers (add, then remove, the only one) is
// still the config in use: listing it and calling a tool say that it holds
// no servers, and how to go on, naming the file.
func TestEmptyConfigSaysHowToGoOn(t *testing.T) {
	t.Chdir(t.TempDir())
	user := userConfig(t, "")
	if err := os.Remove(user); err != nil {
		t.Fatal(err)
	}
	if r := mcpbridge(t, "", "add", "foo", "--", "/bin/true"); r.code != ExitOK {
		t.Fatalf("add: %+v", r)
	}
	if r := mcpbridge(t, "", "remove", "foo"); r.code != ExitOK {
		t.Fatalf("remove: %+v", r)
	}
	hint := user + " holds no servers: add one with mcpbridge add NAME -- COMMAND [ARGS...] (or mcpbridge add NAME URL), or remove " + user + ", now empty, to run the embedded demo again"
	r := mcpbridge(t, "", "tools")
	if r.code != ExitOK || !strings.Contains(r.stderr, "0 tools from 0 of 0 servers\n") || !strings.Contains(r.stderr, hint) {
		t.Errorf("tools: %+v\nwant the hint %q", r, hint)
	}
	r = mcpbridge(t, "", "call", "mcp__demo__add", `{"a": 1, "b": 2}`)
	if r.code != ExitFailed || !strings.Contains(r.stderr, hint) {
		t.Errorf("call: %+v\nwant the hint %q", r, hint)
	}
	r = mcpbridge(t, "", "tools", "mcp__demo__add")
	if r.code == ExitOK || !strings.Contains(r.stderr, hint) {
		t.Errorf("tools NAME: %+v\nwant the hint %q", r, hint)
	}
	// A file that holds other entries is not offered for removal.
	model := "- id: m\n  name: model\n  config: {model: deepseek-chat}\n"
	if err := os.WriteFile(user, []byte(model), 0o600); err != nil {
		t.Fatal(err)
	}
	r = mcpbridge(t, "", "tools")
	if want := user + " holds no servers: add one with mcpbridge add NAME -- COMMAND [ARGS...] (or mcpbridge add NAME URL)\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("tools with a model entry only: %+v\nwant %q", r, want)
	}
}

// A config named by --config that holds no servers says how to add one to
// it: add with that --config for mcpbridge YAML, the client's own way for
// its mcpServers JSON or Codex TOML, which add does not edit. It said
// "mcpbridge add NAME", which writes another file, the one named being
// read alone, or (with --config) is refused for a JSON file.
func TestEmptyNamedConfigSaysHowToAdd(t *testing.T) {
	yamlFile := writeFile(t, "servers.yaml", "[]\n")
	for path, want := range map[string]string{
		writeFile(t, "mcp.json", `{"mcpServers": {}}`): `holds no servers: add one under its "mcpServers"`,
		writeFile(t, "config.toml", "[mcp_servers]\n"): `holds no servers: add one as an [mcp_servers.NAME] table`,
		yamlFile: "holds no servers: add one with mcpbridge add --config " + yamlFile + " NAME -- COMMAND [ARGS...] (or mcpbridge add --config " + yamlFile + " NAME URL)",
	} {
		r := mcpbridge(t, "", "tools", "--config", path)
		if r.code != ExitOK || !strings.Contains(r.stderr, path+" "+want+"\n") {
			t.Errorf("tools --config %s: %+v\nwant the hint %q", path, r, want)
		}
	}
	if r := mcpbridge(t, "", "add", "--config", yamlFile, "foo", "--", "/bin/true"); r.code != ExitOK {
		t.Errorf("the add said: %+v", r)
	}
}

// A tool called by name in a config without servers says its server is not
// configured, and that none is: it listed the servers there are as
// "(servers: )".
func TestToolOfNoServerInEmptyConfig(t *testing.T) {
	cfg := writeFile(t, "mcp.json", `{"mcpServers": {}}`)
	r := mcpbridge(t, "", "call", "--config", cfg, "mcp__x__add", `{}`)
	if want := `no tool "mcp__x__add": no server "x" is configured (none is)`; r.code != ExitFailed || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "servers: )") {
		t.Errorf("call: %+v\nwant %q", r, want)
	}
}
