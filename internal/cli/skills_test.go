package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/agentext"
	"github.com/mcpbridge/mcpbridge/internal/chatapi/chattest"
	"github.com/mcpbridge/mcpbridge/internal/report"
	"github.com/mcpbridge/mcpbridge/internal/skillpeer"
)

// skillsConfig is a config of one skills fixture child, serverName sk,
// serving a SKILL.md tampered as tamper says ("" for none).
func skillsConfig(t *testing.T, tamper string) string {
	cmd, args, env := skillpeer.ChildCommand(t, tamper)
	argsJSON, _ := json.Marshal(args)
	envJSON, _ := json.Marshal(env)
	return writeConfig(t, fmt.Sprintf(`- id: sk
  name: mcp-client
  config:
    serverName: sk
    transport: stdio
    command: %s
    args: %s
    env: %s
`, cmd, argsJSON, envJSON))
}

// skills lists the skills under their public names; skill prints one's
// SKILL.md by its public or own name; a name nobody offers is told apart
// with the names there are.
func TestSkillsCommands(t *testing.T) {
	cfg := skillsConfig(t, "")
	r := mcpbridge(t, "", "skills", "--config", cfg)
	want := "mcp__sk__code-review     Review a change for bugs\nmcp__sk__pdf-processing  Extract, fill, and assemble PDF documents\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("skills: exit %d\n%q\nwant %q\n%s", r.code, r.stdout, want, r.stderr)
	}
	r = mcpbridge(t, "", "skills", "--json", "--config", cfg)
	var listed []report.Skill
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed) != 2 || len(listed[1].Files) != 2 || listed[1].Skill != "pdf-processing" {
		t.Errorf("skills --json: %v\n%s", err, r.stdout)
	}
	body := strings.TrimRight(skillpeer.SkillFiles["skill://pdf-processing/SKILL.md"], "\n") + "\n"
	for _, name := range []string{"mcp__sk__pdf-processing", "pdf-processing"} {
		if r := mcpbridge(t, "", "skill", "--config", cfg, name); r.code != 0 || r.stdout != body {
			t.Errorf("skill %s: exit %d\n%q\n%s", name, r.code, r.stdout, r.stderr)
		}
	}
	r = mcpbridge(t, "", "skill", "--config", cfg, "pdf")
	if r.code == 0 || !strings.Contains(r.stderr, `unknown skill "pdf"`) || !strings.Contains(r.stderr, "mcp__sk__pdf-processing") {
		t.Errorf("unknown skill: exit %d\n%s", r.code, r.stderr)
	}
}

// A SKILL.md that does not match its listing is never printed: skill
// fails and says which check failed.
func TestSkillTamperedRefused(t *testing.T) {
	r := mcpbridge(t, "", "skill", "--config", skillsConfig(t, "frontmatter"), "pdf-processing")
	if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, `frontmatter field "description" is "Exfiltrate credentials" in the file`) {
		t.Errorf("tampered skill: exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// The agent sees each skill's name and description in its system prompt
// and loads one with load_skill when it chooses (no approval asked: it
// only reads what the listing vouches for); the body reaches the model
// as the tool's result.
func TestAgentSkills(t *testing.T) {
	agentEnv(t)
	srv := chattest.New(t, chattest.Turns(
		chattest.Turn{Calls: []chattest.Call{{Name: agentext.LoadSkillName, Args: `{"name":"mcp__sk__pdf-processing"}`}}},
		chattest.Turn{Text: "Done."},
	))
	r := mcpbridge(t, "", "agent", "--config", skillsConfig(t, ""), "--base-url", srv.URL, "-p", "Fill the PDF form.")
	if r.code != 0 || r.stdout != "Done.\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	first := srv.Requests()[0].Messages
	if sys, _ := first[0].Content.(string); !strings.Contains(sys, "\n- mcp__sk__pdf-processing: Extract, fill, and assemble PDF documents") || !strings.Contains(sys, agentext.LoadSkillName) {
		t.Errorf("system prompt:\n%v", first[0].Content)
	}
	second := srv.Requests()[1].Messages
	if got, _ := second[len(second)-1].Content.(string); got != skillpeer.SkillFiles["skill://pdf-processing/SKILL.md"] {
		t.Errorf("load_skill result %q", got)
	}
}
