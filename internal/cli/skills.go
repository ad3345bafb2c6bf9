package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/mcpbridge/mcpbridge/internal/report"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/tool"
)

// skillHelp is the help of `skill` beyond its synopsis.
const skillHelp = `NAME is a skill's public name (mcp__server__skill, as 'mcpbridge skills'
lists it) or its own name when one server alone offers a skill of that name.
The skill's SKILL.md is read only now, and printed only once its size,
digest and frontmatter match what the server listed; any mismatch is an
error and nothing is printed.`

// skills lists the servers' skills, reading none of their files:
// `skills [SOURCE] [--json]`.
func (e *env) skills(ctx context.Context, argv []string) error {
	return e.withBridge(ctx, "skills", argv, func(b *bridge, f *flags) error {
		if len(f.args) > 0 {
			return usagef("skills: unexpected argument %q", f.args[0])
		}
		sks := b.reg.Skills()
		if f.json {
			return writeJSON(e.Stdout, report.NewSkills(sks))
		}
		w := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
		for _, s := range sks {
			fmt.Fprintf(w, "%s\t%s\n", termsafe.Line(s.Name), termsafe.Summary(s.Description))
		}
		return e.endListing(w, b, fmt.Sprintf("%d skills", len(sks)))
	})
}

// skill prints a skill's SKILL.md, verified: `skill [SOURCE] NAME`.
func (e *env) skill(ctx context.Context, argv []string) error {
	return e.withBridge(ctx, "skill", argv, func(b *bridge, f *flags) error {
		if len(f.args) != 1 {
			return usagef("skill: want NAME (see 'mcpbridge help skill')")
		}
		name, err := skillName(b.reg.Skills(), f.args[0])
		if err != nil {
			return err
		}
		body, err := b.reg.ReadSkill(ctx, name, "")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(e.Stdout, termsafe.Text(strings.TrimRight(string(body), "\n")))
		return err
	})
}

// skillName resolves arg to a skill's public name: the public name
// itself, or a skill's own name that one server alone offers.
func skillName(skills []tool.Skill, arg string) (string, error) {
	var names, owners []string
	for _, s := range skills {
		if s.Name == arg {
			return arg, nil
		}
		if s.Origin.Name == arg {
			owners = append(owners, s.Name)
		}
		names = append(names, s.Name)
	}
	switch {
	case len(owners) == 1:
		return owners[0], nil
	case len(owners) > 1:
		return "", fmt.Errorf("skill %q is offered by more than one server: name one of %s", arg, strings.Join(owners, ", "))
	}
	err := fmt.Errorf("%w %q", tool.ErrUnknownSkill, arg)
	if len(names) == 0 {
		return "", fmt.Errorf("%w: no server offers skills", err)
	}
	if m := yamlconf.Suggest(arg, names); m != "" {
		return "", fmt.Errorf("%w: did you mean %s?", err, m)
	}
	return "", fmt.Errorf("%w: the skills are %s", err, strings.Join(names, ", "))
}
