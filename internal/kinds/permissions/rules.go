package permissions

import (
	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/host"
)

// Rules are an agent run's standing permissions, gathered from the
// permissions entries of its config files, and the file each pattern
// came from (for the notices that name it). The zero Rules has none.
type Rules struct {
	agent.Permissions
	From map[string]string // pattern: the file it was first read from
}

// Add adds the allow and deny patterns of file.
func (r *Rules) Add(file string, allow, deny []string) {
	if r.From == nil {
		r.From = map[string]string{}
	}
	for _, list := range [][]string{allow, deny} {
		for _, p := range list {
			if _, ok := r.From[p]; !ok {
				r.From[p] = file
			}
		}
	}
	r.Allow = append(r.Allow, allow...)
	r.Deny = append(r.Deny, deny...)
}

// AddPlan adds the enabled permissions entries of plan; mayAllow says
// whether a file's allow patterns count (a project's may only deny). The
// error of an entry that did not decode is returned as the plan has it:
// an agent must not start on permissions it could not read.
func (r *Rules) AddPlan(plan *host.Plan, mayAllow func(file string) bool) error {
	for _, pe := range plan.Entries {
		if pe.Entry.Name != Name || pe.Entry.Disabled {
			continue
		}
		if pe.Err != nil {
			return pe.Err
		}
		ps, _ := pe.Spec.Config.(agent.Permissions)
		allow := ps.Allow
		if len(allow) > 0 && !mayAllow(pe.Entry.File) {
			allow = nil
		}
		r.Add(pe.Entry.File, allow, ps.Deny)
	}
	return nil
}
