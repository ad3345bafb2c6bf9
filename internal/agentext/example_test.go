package agentext_test

import (
	"context"
	"fmt"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/agentext"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A harness's agent gets the skills its servers offer: listed in the
// system prompt, loaded with load_skill when the task fits one.
func ExampleSkills() {
	reg := tool.NewRegistry()
	err := reg.NewSource().PublishOffer(tool.Offer{Server: "docs", Skills: []tool.Skill{{
		Name: "mcp__docs__release-notes", URI: "skill://release-notes/SKILL.md",
		Description: "Write release notes from merged changes.",
		Origin:      tool.Origin{Server: "docs", Name: "release-notes"},
		Read:        func(context.Context, string) ([]byte, error) { return []byte("# Release notes\n..."), nil },
	}}})
	if err != nil {
		panic(err)
	}
	opts := agent.Options{System: "You are a helpful agent.", Registry: reg}
	added, err := agentext.Skills(&opts, reg, agent.Permissions{})
	fmt.Println(added, err)
	_, registered := reg.Get(agentext.LoadSkillName)
	fmt.Println(registered)
	// Output:
	// true <nil>
	// true
}
