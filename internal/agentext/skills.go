package agentext

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/tool"
)

// The agent's skills, as Claude Code has them: the system prompt names
// each skill with its description, and the model loads one with
// load_skill only when the task calls for it; only then is its SKILL.md
// read from its server, and only once verified against the listing.

// LoadSkillName is the agent's tool that loads a skill.
const LoadSkillName = "load_skill"

// skillsPrompt follows the system prompt when servers offer skills.
const skillsPrompt = "\n\nSkills are instructions for kinds of tasks, listed below as name: description. " +
	"When the task fits a skill, first call " + LoadSkillName + `({"name": "<name>"}) and follow what it says; ` +
	`read a file the skill mentions with ` + LoadSkillName + `({"name": "<name>", "file": "<its URI>"}).`

// skillsBudget bounds, in bytes, the skills' part of the system prompt,
// which every model request carries: a server listing thousands of skills
// must not make every turn cost that much.
const skillsBudget = 16 << 10

// skillsSection is the part of the system prompt that lists skills; ""
// when there are none. Within skillsBudget each skill has its
// description; past it, the names alone, then a count of the rest.
func skillsSection(skills []tool.Skill) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(skillsPrompt)
	namesOnly := false // once a description does not fit, none after it has one
	for i, s := range skills {
		line := fmt.Sprintf("\n- %s: %s", s.Name, termsafe.Summary(s.Description))
		if namesOnly = namesOnly || b.Len()+len(line) > skillsBudget; namesOnly {
			line = "\n- " + s.Name
		}
		if b.Len()+len(line) > 2*skillsBudget {
			fmt.Fprintf(&b, "\n(and %d more skills, not listed: the list is over its share of the prompt)", len(skills)-i)
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// loadSkillTool is the tool the model loads a skill with: a skill's
// SKILL.md (or one of its files), read from reg verified, unless rules
// deny its server.
func loadSkillTool(reg *tool.Registry, rules agent.Permissions) tool.Tool {
	return tool.Tool{
		Name: LoadSkillName,
		Description: "Load a skill's instructions (its SKILL.md) by the skill's name from the system prompt, " +
			"or one of its files by URI. Load a skill before doing a task it fits.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the skill's name"},` +
			`"file":{"type":"string","description":"a file of the skill by URI; absent: its SKILL.md"}},"required":["name"],"additionalProperties":false}`),
		Annotations: json.RawMessage(`{"readOnlyHint":true}`),
		Execute: func(ctx context.Context, args json.RawMessage) (tool.Output, error) {
			var in struct {
				Name string `json:"name"`
				File string `json:"file"`
			}
			if err := json.Unmarshal(args, &in); err != nil || in.Name == "" {
				return tool.Output{}, fmt.Errorf(`%s: arguments need "name", a skill's name from the system prompt`, LoadSkillName)
			}
			if err := checkServer(reg, rules, in.Name); err != nil {
				return tool.Output{}, err
			}
			body, err := reg.ReadSkill(ctx, in.Name, in.File)
			if err != nil {
				return tool.Output{}, err
			}
			return tool.Output{Content: []tool.Content{tool.Text(string(body))}}, nil
		},
	}
}

// checkServer refuses the skill of public name name when rules deny its
// server whole: a server denied its tools is denied its skills, as it is
// its resources. An unknown name is ReadSkill's to report.
func checkServer(reg *tool.Registry, rules agent.Permissions, name string) error {
	s, err := reg.Skill(name)
	if err != nil {
		return nil
	}
	if pattern, denied := rules.DeniesServer(s.Origin.Server); denied {
		return fmt.Errorf("skill %q is of server %q, whose every tool permissions.deny denies (%q): its skills are not loaded either; "+
			"the user would have to remove that pattern from permissions.deny", name, s.Origin.Server, pattern)
	}
	return nil
}

// Skills gives the agent of opts the skills of reg but those of servers
// rules deny whole: their list after opts.System and load_skill
// registered in reg, run without asking (it only reads what the
// configured servers listed, verified, and refuses a denied server's
// skill). It reports whether there were any (none: opts unchanged); a
// caller that defers loading tools keeps LoadSkillName always shown. Call
// it once the options are complete, before agent.New.
func Skills(opts *agent.Options, reg *tool.Registry, rules agent.Permissions) (bool, error) {
	skills := slices.DeleteFunc(reg.Skills(), func(s tool.Skill) bool {
		_, denied := rules.DeniesServer(s.Origin.Server)
		return denied
	})
	if len(skills) == 0 {
		return false, nil
	}
	if _, err := reg.Register(loadSkillTool(reg, rules)); err != nil {
		return false, fmt.Errorf("skills: %w", err)
	}
	opts.System += skillsSection(skills)
	opts.Approver = skillApprover{opts.Approver}
	return true, nil
}

// skillApprover runs load_skill without asking and asks inner about the
// rest.
type skillApprover struct{ inner agent.Approver }

func (a skillApprover) Approve(ctx context.Context, c agent.Call) (bool, error) {
	if c.Name == LoadSkillName {
		return true, nil
	}
	return a.inner.Approve(ctx, c)
}
