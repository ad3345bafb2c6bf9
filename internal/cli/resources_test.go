package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/report"
)

// server-everything's 7 resources, 2 templates and 4 prompts, through every
// command that shows them and the model-facing resource tools.
func TestServerEverythingResourcesAndPrompts(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	r := mcpbridge(t, "", "resources", "--json", "--config", cfg)
	var listed struct {
		Resources []struct{ Server, URI, Name, MIMEType string } `json:"resources"`
		Templates []struct {
			Server      string `json:"server"`
			URITemplate string `json:"uriTemplate"`
		} `json:"resourceTemplates"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &listed); r.code != 0 || err != nil {
		t.Fatalf("resources --json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(listed.Resources) != 7 || len(listed.Templates) != 2 || listed.Resources[0].Server != "everything" || listed.Resources[0].MIMEType == "" {
		t.Errorf("resources = %+v", listed)
	}

	cases := []struct {
		args []string
		code int
		has  []string
	}{
		{[]string{"resources"}, 0, []string{"demo://resource/static/document/architecture.md", "demo://resource/dynamic/text/{resourceId} ", "(template)"}},
		{[]string{"read", "demo://resource/static/document/features.md"}, 0, []string{"#"}},
		{[]string{"read", "demo://resource/dynamic/text/3"}, 0, []string{"Resource 3"}}, // templated: its server found
		{[]string{"read", "demo://resource/dynamic/blob/3"}, 0, []string{"[binary resource demo://resource/dynamic/blob/3: text/plain, "}},
		{[]string{"read", "--json", "--server", "everything", "demo://resource/dynamic/blob/3"}, 0, []string{`"blob":"`}},
		{[]string{"read", "nope://x"}, 1, []string{`no server lists the resource "nope://x"`}},
		{[]string{"read"}, 2, []string{"read: want one URI"}},
		{[]string{"prompts"}, 0, []string{"mcp__everything__args-prompt", "(city*, state)", "mcp__everything__simple-prompt"}},
		{[]string{"prompt", "mcp__everything__args-prompt", `{"city":"Paris","state":"TX"}`}, 0, []string{"user: ", "Paris"}},
		{[]string{"prompt", "mcp__everything__resource-prompt", `{"resourceType":"Text","resourceId":"2"}`}, 0, []string{"user: Resource 2"}},
		{[]string{"prompt", "--json", "mcp__everything__simple-prompt"}, 0, []string{`"messages":[`}},
		{[]string{"prompt", "mcp__everything__args-prompt", `{"city":1}`}, 2, []string{`argument "city" must be a string`}},
		{[]string{"prompt", "mcp__everything__nope"}, 1, []string{`unknown prompt "mcp__everything__nope"`}},
		{[]string{"call", "read_mcp_resource", `{"server":"everything","uri":"demo://resource/dynamic/text/5"}`}, 0, []string{"Resource 5"}},
		{[]string{"call", "list_mcp_resources", `{"server":"everything"}`}, 0, []string{`"uri":"demo://resource/static/document/architecture.md"`, `"uriTemplate":"demo://resource/dynamic/text/{resourceId}"`}},
	}
	sideBySide(4, len(cases), func(i int) {
		c := cases[i]
		r := mcpbridge(t, "", append([]string{c.args[0], "--config", cfg}, c.args[1:]...)...)
		out := r.stdout + r.stderr
		if r.code != c.code {
			t.Errorf("%v: exit %d, want %d\n%s", c.args, r.code, c.code, out)
		}
		for _, h := range c.has {
			if !strings.Contains(out, h) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, h, out)
			}
		}
	})

	var prompts []struct {
		Name      string
		Server    string
		Arguments []struct {
			Name     string
			Required bool
		}
	}
	r = mcpbridge(t, "", "prompts", "--json", "--config", cfg)
	if err := json.Unmarshal([]byte(r.stdout), &prompts); err != nil || len(prompts) != 4 {
		t.Errorf("prompts --json: %v, %d prompts\n%s", err, len(prompts), r.stdout)
	}
}

// resourceTools: false keeps the resources from the model, not from the
// CLI.
func TestResourceToolsOptOut(t *testing.T) {
	t.Parallel()
	written, err := os.ReadFile(everythingConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(written), "    args: [stdio]\n", "    args: [stdio]\n    resourceTools: false\n", 1)
	path := writeConfig(t, cfg)
	r := mcpbridge(t, "", "tools", "--config", path)
	if r.code != 0 || strings.Contains(r.stdout, "list_mcp_resources") || strings.Contains(r.stdout, "read_mcp_resource") {
		t.Errorf("tools with resourceTools: false: exit %d\n%s", r.code, r.stdout)
	}
	if r := mcpbridge(t, "", "resources", "--config", path); r.code != 0 || !strings.Contains(r.stdout, "architecture.md") {
		t.Errorf("resources with resourceTools: false: exit %d\n%s", r.code, r.stdout)
	}
}

// Two servers offering the same URIs: the first in the config is read, and
// status, resources and read say which resources of the second are not
// used.
func TestShadowedResources(t *testing.T) {
	t.Parallel()
	written, err := os.ReadFile(everythingConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	second := strings.NewReplacer("id: everything", "id: second", "serverName: everything", "serverName: second").Replace(string(written))
	cfg := writeConfig(t, string(written)+second)
	r := mcpbridge(t, "", "status", "--json", "--config", cfg)
	var st report.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("status --json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(st.Shadowed) != 9 || st.Shadowed[0] != (report.Shadowed{Kind: "resource", Key: "demo://resource/static/document/architecture.md", Server: "second", ServedFrom: "everything"}) {
		t.Errorf("shadowed = %+v, want the 7 resources and 2 templates of second", st.Shadowed)
	}
	if st.Servers[1].Resources != 9 || st.Servers[1].Prompts != 4 {
		t.Errorf("second server: %+v", st.Servers[1])
	}
	r = mcpbridge(t, "", "read", "--config", cfg, "demo://resource/static/document/features.md")
	if r.code != 0 || !strings.Contains(r.stderr, `resource "demo://resource/static/document/features.md" of server "second" is not used: server "everything" offers it too`) {
		t.Errorf("read: exit %d\n%s", r.code, r.stderr)
	}
	// status and resources say it once, with a count, not nine times.
	const once = `mcpbridge: 7 resources and 2 resource templates of server "second" are not used: server "everything" offers the same URIs and comes first in the config (status --json lists them under "shadowed")` + "\n"
	for _, cmd := range []string{"status", "resources"} {
		r = mcpbridge(t, "", cmd, "--config", cfg)
		if r.code != 0 || !strings.Contains(r.stderr, once) || strings.Count(r.stderr, "not used") != 1 {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant one line: %s", cmd, r.code, r.stderr, once)
		}
	}
}
