package host

import (
	"fmt"
	"strings"
)

// Merge merges the plans of config files read in order of precedence,
// lowest first (a user's file, then a project's), by id: an entry of a
// later plan replaces the one of an earlier plan with its id, in the
// later plan's place. An entry that claims what a kept entry of an
// earlier plan claims (a serverName) is invalid (Err), its message naming
// both places; the host shows it failed and starts the rest. The merged
// Source joins the plans' with " + ". The credentials a replaced entry
// names stay the merged plan's (CredentialVars): the variables hold the
// secrets of the earlier file's entry still. One plan is returned as it
// is; the plans are not changed.
func Merge(plans ...*Plan) *Plan {
	if len(plans) == 1 {
		return plans[0]
	}
	merged := &Plan{}
	var sources []string
	for i, p := range plans {
		sources = append(sources, p.Source)
		merged.replaced = append(merged.replaced, p.replaced...)
		later := map[string]bool{}
		for _, q := range plans[i+1:] {
			for _, pe := range q.Entries {
				later[pe.Entry.ID] = true
			}
		}
		for _, pe := range p.Entries {
			if later[pe.Entry.ID] {
				merged.replaced = append(merged.replaced, pe.Credentials...)
				continue
			}
			if clash := claimClash(merged.Entries, pe); clash != nil {
				pe.Err, pe.Spec = clash, Spec{Name: pe.Spec.Name}
			}
			merged.Entries = append(merged.Entries, pe)
		}
	}
	merged.Source = strings.Join(sources, " + ")
	return merged
}

// claimClash is the problem of pe, from a later plan, whose claim an
// entry of an earlier plan (in kept) holds; nil when there is none.
func claimClash(kept []PlanEntry, pe PlanEntry) error {
	if pe.Err != nil || pe.Entry.Disabled {
		return nil
	}
	for _, k := range kept {
		if k.Err != nil || k.Entry.Disabled || k.Entry.Name != pe.Entry.Name {
			continue
		}
		for _, cl := range pe.Spec.Claims {
			for _, kc := range k.Spec.Claims {
				if cl == kc {
					return EntryError(pe.Entry.File, pe.Entry, "config."+cl.Key, fmt.Sprintf(
						"%s %q is already used by entry %q in %s:%d; pick another %s, or give this entry the id %q to replace that one",
						cl.Key, cl.Value, k.Entry.ID, k.Entry.File, k.Entry.Line, cl.Key, k.Entry.ID))
				}
			}
		}
	}
	return nil
}
