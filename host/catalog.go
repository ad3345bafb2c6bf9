package host

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
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
	// replaced are the credentials (PlanEntry.Credentials) of the entries
	// Merge left out, a later plan replacing them.
	replaced []string
}

// PlanEntry is one entry of a Plan with its decoded config.
type PlanEntry struct {
	Entry Entry
	// Spec is the entry's decoded config; zero for a disabled entry, whose
	// config is not read, and for an invalid one.
	Spec Spec
	// Err is why the entry's config is invalid ([confpos.Errors], positioned),
	// in a plan of ParseIsolated; nil otherwise. The host does not start an
	// invalid entry: it shows it failed with Err, or keeps the entry's
	// running instance (make before break).
	Err error
	// Credentials are the variables the entry's config as written names
	// as holding credentials (its kind's CredentialNamer), set by Parse
	// for every entry: disabled and invalid ones name them too, and one
	// that failed to decode (or would, were it not disabled) or whose kind
	// is unknown names every variable it references but those every shell
	// sets.
	Credentials []string
}

// Invalid returns the entries whose config is invalid (Err set), in order.
func (p *Plan) Invalid() []PlanEntry {
	var out []PlanEntry
	for _, e := range p.Entries {
		if e.Err != nil {
			out = append(out, e)
		}
	}
	return out
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

// CredentialVars are the variables the plan's configs name as holding
// credentials (a model's API key's, those a header, a URL's userinfo or an
// OAuth secret is written with, the gateway's tokens' and its store's):
// those of every entry as written (PlanEntry.Credentials), disabled and
// invalid ones too, since the user may enable or fix it and the variable
// holds the secret now, those of an entry another file's replaced
// (Merge), and those of a config built in Go, which says so by a
// CredentialVars method. A child the plan starts inherits none of them
// unless its own env passes it.
func (p *Plan) CredentialVars() []string {
	names := slices.Clone(p.replaced)
	for _, e := range p.Entries {
		names = append(names, e.Credentials...)
		if c, ok := e.Spec.Config.(interface{ CredentialVars() []string }); ok {
			names = append(names, c.CredentialVars()...)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Parse reads and validates a composition file without side effects:
// ParseEntries, then each enabled entry's kind Decodes its config, then
// claims (like serverName) must be unique across entries. Every problem of
// the file is returned at once as [confpos.Errors] in file order, each with
// file:line:col and entry; nothing is returned on error, so a caller never
// runs half a file. Disabled entries are kept but their name and config are
// not checked: disabling is how one parks a half-written entry.
func (c *Catalog) Parse(filename string, data []byte, lookup func(name string) (string, bool)) (*Plan, error) {
	plan, fileErrs := c.parse(filename, data, lookup)
	errs := slices.Clone(fileErrs)
	for _, pe := range plan.Invalid() {
		errs = append(errs, pe.Err.(confpos.Errors)...)
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return plan, nil
}

// ParseIsolated is Parse where an entry whose config is invalid fails
// alone: it stays in the plan with its problems in PlanEntry.Err, and the
// other entries run. Only a problem that leaves the file without a usable
// list of ids is an error: invalid YAML, a file that is not a list, an
// entry without a valid id, an id used twice. Such an error holds every
// problem of the file, as Parse's.
func (c *Catalog) ParseIsolated(filename string, data []byte, lookup func(name string) (string, bool)) (*Plan, error) {
	plan, fileErrs := c.parse(filename, data, lookup)
	if len(fileErrs) > 0 {
		return c.Parse(filename, data, lookup)
	}
	return plan, nil
}

// parse builds the plan of a file: the invalid entries with their
// problems (PlanEntry.Err), and apart the problems that concern no single
// usable entry (fileErrs).
func (c *Catalog) parse(filename string, data []byte, lookup func(name string) (string, bool)) (plan *Plan, fileErrs confpos.Errors) {
	entries, fileErrs := parseEntries(filename, data)
	plan = &Plan{Source: filename}
	claimed := map[claimKey]Entry{} // who holds each claim
	for _, pe := range entries {
		if !pe.Entry.Disabled && pe.Err == nil {
			pe.Spec, pe.Err = c.decode(filename, pe.Entry, lookup, claimed)
		}
		if pe.Err != nil && pe.Spec.Name == "" {
			pe.Spec.Name = displayName(pe.Entry)
		}
		pe.Credentials = c.credentials(pe, lookup)
		plan.Entries = append(plan.Entries, pe)
	}
	return plan, fileErrs
}

// decode checks one enabled entry: its kind, its config, and its claims
// against those of the entries before it (recorded in claimed).
func (c *Catalog) decode(filename string, e Entry, lookup func(name string) (string, bool), claimed map[claimKey]Entry) (Spec, error) {
	k, ok := c.kinds[e.Name]
	if !ok {
		return Spec{}, EntryError(filename, e, "name", fmt.Sprintf("unknown plugin %q (known: %s)", e.Name, strings.Join(c.names, ", ")))
	}
	spec, err := k.Decode(e.Config, lookup)
	if err != nil {
		return Spec{}, FormatErrors(filename, e, err)
	}
	for _, cl := range spec.Claims {
		if prev, taken := claimed[claimKey{e.Name, cl}]; taken {
			return Spec{}, EntryError(filename, e, "config."+cl.Key, fmt.Sprintf(
				"%s %q is already used by entry %q (line %d); pick a unique %s for each entry", cl.Key, cl.Value, prev.ID, prev.Line, cl.Key))
		}
	}
	for _, cl := range spec.Claims {
		claimed[claimKey{e.Name, cl}] = e
	}
	return spec, nil
}

// credentials are the variables pe's config as written names as holding
// credentials, when its kind can say (CredentialNamer). An entry that
// failed to decode, or would were it not disabled, or of a kind no one
// reads, may hold one where its kind does not look (header: for headers:,
// name: mcp-clinet), so every variable it references is taken, less those
// every shell sets (PATH, HOME): every child needs them, and they hold no
// secret.
func (c *Catalog) credentials(pe PlanEntry, lookup func(name string) (string, bool)) []string {
	k, known := c.kinds[pe.Entry.Name]
	var names []string
	if n, ok := k.(CredentialNamer); ok {
		names = n.CredentialVars(pe.Entry.Config)
	}
	if pe.Err == nil && known && !parkedInvalid(k, pe.Entry, lookup) {
		return names
	}
	for _, name := range yamlconf.NodeRefs(pe.Entry.Node) {
		if !yamlconf.ShellVar(name) {
			names = append(names, name)
		}
	}
	return names
}

// parkedInvalid reports whether e is disabled, its config not checked,
// and would fail to decode (Decode has no side effects). Without a config
// nothing can be misspelt in it.
func parkedInvalid(k Kind, e Entry, lookup func(name string) (string, bool)) bool {
	if !e.Disabled || e.Config == nil {
		return false
	}
	_, err := k.Decode(e.Config, lookup)
	return err != nil
}

// DisplayName names an entry that is not decoded (invalid, or disabled)
// in listings: its config's serverName as written, when it is a plain
// string, else its id.
func DisplayName(e Entry) string { return displayName(e) }

// displayName is DisplayName.
func displayName(e Entry) string {
	if n := yamlconf.Locate(e.Node, "config.serverName"); n != nil && n.Kind == yaml.ScalarNode && n.Value != "" && !strings.Contains(n.Value, "${") {
		return n.Value
	}
	return e.ID
}

// claimKey scopes a claim to its kind: two kinds may use the same names.
type claimKey struct {
	kind  string
	claim Claim
}
