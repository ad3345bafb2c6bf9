package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/tool"
)

// The agent's skills, as Claude Code has them: the system prompt names
// each skill with its description, and the model loads one with
// load_skill only when the task calls for it; only then is its SKILL.md
// read from its server, and only once verified against the listing.

// loadSkillName is the agent's tool that loads a skill.
const loadSkillName = "load_skill"

// skillsPrompt follows the system prompt when servers offer skills.
const skillsPrompt = "\n\nSkills are instructions for kinds of tasks, listed below as name: description. " +
	"When the task fits a skill, first call " + loadSkillName + `({"name": "<name>"}) and follow what it says; ` +
	`read a file the skill mentions with ` + loadSkillName + `({"name": "<name>", "file": "<its URI>"}).`

// skillsSection is the part of the system prompt that lists skills; ""
// when there are none.
func skillsSection(skills []tool.Skill) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(skillsPrompt)
	for _, s := range skills {
		fmt.Fprintf(&b, "\n- %s: %s", s.Name, termsafe.Summary(s.Description))
	}
	return b.String()
}

// loadSkillTool is the tool the model loads a skill with: a skill's
// SKILL.md (or one of its files), read from reg verified.
func loadSkillTool(reg *tool.Registry) tool.Tool {
	return tool.Tool{
		Name: loadSkillName,
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
				return tool.Output{}, fmt.Errorf(`%s: arguments need "name", a skill's name from the system prompt`, loadSkillName)
			}
			body, err := reg.ReadSkill(ctx, in.Name, in.File)
			if err != nil {
				return tool.Output{}, err
			}
			return tool.Output{Content: []tool.Content{tool.Text(string(body))}}, nil
		},
	}
}

// addSkills gives the agent of opts the servers' skills: their list in
// the system prompt and load_skill among its tools, run without asking
// (it only reads what the configured servers listed, verified). A no-op
// when no server offers skills.
func (r *agentRun) addSkills(opts *agent.Options) error {
	skills := r.b.reg.Skills()
	if len(skills) == 0 {
		return nil
	}
	if _, err := r.b.reg.Register(loadSkillTool(r.b.reg)); err != nil {
		return fmt.Errorf("agent: skills: %w", err)
	}
	r.named[loadSkillName] = true // deferred loading never hides it
	opts.System += skillsSection(skills)
	opts.Approver = skillApprover{opts.Approver}
	return nil
}

// skillApprover runs load_skill without asking and asks inner about the
// rest.
type skillApprover struct{ inner agent.Approver }

func (a skillApprover) Approve(ctx context.Context, c agent.Call) (bool, error) {
	if c.Name == loadSkillName {
		return true, nil
	}
	return a.inner.Approve(ctx, c)
}
