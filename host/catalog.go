package host

import (
	"fmt"
	"slices"
	"strings"
)

// Catalog is the set of plugin kinds a host can run, by name. Build it in
// main with NewCatalog; it is never a global, so tests and embedders choose
// their own kinds. A Catalog is immutable and safe for concurrent use.
type Catalog struct {
	kinds map[string]Kind
	names []string // sorted, for messages
}

// NewCatalog returns a catalog of kinds. A nil kind, an empty name or a
// name given twice is a programming error in the caller's main, and panics
// with a message saying which.
func NewCatalog(kinds ...Kind) *Catalog {
	c := &Catalog{kinds: make(map[string]Kind, len(kinds))}
	for i, k := range kinds {
		switch {
		case k == nil:
			panic(fmt.Sprintf("host.NewCatalog: kind #%d is nil", i+1))
		case k.Name() == "":
			panic(fmt.Sprintf("host.NewCatalog: kind #%d (%T) has an empty name", i+1, k))
		case c.kinds[k.Name()] != nil:
			panic(fmt.Sprintf("host.NewCatalog: two kinds are named %q", k.Name()))
		}
		c.kinds[k.Name()] = k
		c.names = append(c.names, k.Name())
	}
	slices.Sort(c.names)
	return c
}

// Kind returns the kind named name.
func (c *Catalog) Kind(name string) (Kind, bool) {
	k, ok := c.kinds[name]
	return k, ok
}

// Names returns the names of the catalog's kinds, sorted.
func (c *Catalog) Names() []string { return slices.Clone(c.names) }

// Plan is a validated composition: what a host should run. Parse builds one
// from a file; a Go program may build one by hand.
type Plan struct {
	// Source names where the entries came from (a file name), for
	// messages.
	Source string
	// Entries in file order; ids are unique.
	Entries []PlanEntry
}

// PlanEntry is one entry of a Plan with its decoded config.
type PlanEntry struct {
	Entry Entry
	// Spec is the entry's decoded config; zero for a disabled entry, whose
	// config is not read.
	Spec Spec
}

// Enabled returns the entries that are not disabled, in order.
func (p *Plan) Enabled() []PlanEntry {
	var out []PlanEntry
	for _, e := range p.Entries {
		if !e.Entry.Disabled {
			out = append(out, e)
		}
	}
	return out
}

// Parse reads and validates a composition file without side effects:
// ParseEntries, then each enabled entry's kind Decodes its config, then
// claims (like serverName) must be unique across entries. Every problem of
// the file is returned at once as ConfigErrors in file order, each with
// file:line:col and entry; nothing is returned on error, so a caller never
// runs half a file. Disabled entries are kept but their name and config are
// not checked: disabling is how one parks a half-written entry.
func (c *Catalog) Parse(filename string, data []byte, lookup func(name string) (string, bool)) (*Plan, error) {
	entries, errs := parseEntries(filename, data)
	plan := &Plan{Source: filename}
	add := func(err error) { errs = append(errs, err.(ConfigErrors)...) } // EntryError and FormatErrors return ConfigErrors
	claimed := map[claimKey]Entry{}                                       // who holds each claim
	for _, e := range entries {
		pe := PlanEntry{Entry: e}
		if e.Disabled {
			plan.Entries = append(plan.Entries, pe)
			continue
		}
		k, ok := c.kinds[e.Name]
		if !ok {
			add(EntryError(filename, e, "name", fmt.Sprintf("unknown plugin %q (known: %s)", e.Name, strings.Join(c.names, ", "))))
			continue
		}
		spec, err := k.Decode(e.Config, lookup)
		if err != nil {
			add(FormatErrors(filename, e, err))
			continue
		}
		dup := false
		for _, cl := range spec.Claims {
			key := claimKey{e.Name, cl}
			if prev, taken := claimed[key]; taken {
				add(EntryError(filename, e, "config."+cl.Key, fmt.Sprintf(
					"%s %q is already used by entry %q (line %d); pick a unique %s for each entry", cl.Key, cl.Value, prev.ID, prev.Line, cl.Key)))
				dup = true
				continue
			}
			claimed[key] = e
		}
		if dup {
			continue
		}
		pe.Spec = spec
		plan.Entries = append(plan.Entries, pe)
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return plan, nil
}

// claimKey scopes a claim to its kind: two kinds may use the same names.
type claimKey struct {
	kind  string
	claim Claim
}
