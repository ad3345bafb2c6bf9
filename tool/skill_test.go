package tool_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// skill is a skill of server under public name name, whose SKILL.md says
// which server it is.
func skill(server, name string) tool.Skill {
	return tool.Skill{
		Name: name, Origin: tool.Origin{Server: server, Name: "notes"}, URI: "skill://" + server + "/notes/SKILL.md",
		Read: func(context.Context, string) ([]byte, error) { return []byte("of " + server), nil },
	}
}

// A skill's public name is one server's, as a prompt's is: a second server
// offering it is refused, and the first keeps it (ReadSkill answered the
// server first by name, the other's skill listed beside it under the same
// name and never read).
func TestSkillNameHeldByAnotherServer(t *testing.T) {
	r := tool.NewRegistry()
	mustPublishOffer(t, r, tool.Offer{Server: "zeta", Skills: []tool.Skill{skill("zeta", "mcp__notes")}})
	before := r.Version()
	err := r.NewSource().PublishOffer(tool.Offer{Server: "alpha", Skills: []tool.Skill{skill("alpha", "mcp__notes")}})
	if ce, ok := errors.AsType[*tool.ConflictError](err); !ok || ce.Kind != "skill" || err.Error() != `skill "mcp__notes" is already registered` {
		t.Fatalf("PublishOffer of a skill name another server holds: err = %v, want a skill ConflictError", err)
	}
	if r.Version() != before || len(r.Skills()) != 1 {
		t.Errorf("a refused offer changed the registry: version %d to %d, skills %v", before, r.Version(), r.Skills())
	}
	if b, err := r.ReadSkill(t.Context(), "mcp__notes", ""); err != nil || string(b) != "of zeta" {
		t.Errorf("ReadSkill: %q, %v; want zeta's", b, err)
	}

	// The server's own next offer keeps the name; once it lets go, another may take it.
	s := r.NewSource()
	publishOrFail(t, s, tool.Offer{Server: "beta", Skills: []tool.Skill{skill("beta", "mcp__beta")}})
	publishOrFail(t, s, tool.Offer{Server: "beta", Skills: []tool.Skill{skill("beta", "mcp__beta"), skill("beta", "mcp__more")}})
	s.Close()
	publishOrFail(t, r.NewSource(), tool.Offer{Server: "gamma", Skills: []tool.Skill{skill("gamma", "mcp__beta")}})
	if b, err := r.ReadSkill(t.Context(), "mcp__beta", ""); err != nil || string(b) != "of gamma" {
		t.Errorf("ReadSkill after the holder left: %q, %v; want gamma's", b, err)
	}
}
