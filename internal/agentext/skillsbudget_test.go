package agentext

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A server listing thousands of skills costs every model request a
// bounded prompt: descriptions while they fit, then names, then a count.
func TestSkillsSectionIsBounded(t *testing.T) {
	skills := make([]tool.Skill, 5000)
	for i := range skills {
		skills[i] = tool.Skill{Name: fmt.Sprintf("mcp__many__skill-%04d", i), Description: strings.Repeat("does a thing ", 10)}
	}
	for i := 1; i < len(skills); i += 2 {
		skills[i].Description = "short" // one that would still fit where a long one no longer does
	}
	got := skillsSection(skills)
	namesOnly := false
	listed, _, _ := strings.Cut(got, "\n(and ")
	for _, line := range strings.Split(listed, "\n- ")[1:] {
		described := strings.Contains(line, ": ")
		if namesOnly && described {
			t.Errorf("%q has its description after a skill listed by its name alone", line)
			break
		}
		namesOnly = namesOnly || !described
	}
	if len(got) > 2*skillsBudget+200 {
		t.Errorf("the section is %d bytes, over twice the budget of %d", len(got), skillsBudget)
	}
	for _, want := range []string{"- mcp__many__skill-0000: does a thing", "more skills, not listed"} {
		if !strings.Contains(got, want) {
			t.Errorf("the section lacks %q", want)
		}
	}
	if !regexp.MustCompile(`\n- mcp__many__skill-\d{4}\n`).MatchString(got) {
		t.Error("the section lists no skill by its name alone")
	}
	if few := skillsSection(skills[:4]); strings.Contains(few, "not listed") || strings.Count(few, ": does a thing") != 2 || strings.Count(few, ": short") != 2 {
		t.Errorf("three skills: %q", few)
	}
}
