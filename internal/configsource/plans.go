package configsource

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"

	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	permkind "github.com/mcpbridge/mcpbridge/internal/kinds/permissions"
	"github.com/mcpbridge/mcpbridge/internal/pin"
	"github.com/mcpbridge/mcpbridge/internal/scopes"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// URL is the plan of one Streamable HTTP server at url (--url), named
// name ("remote" when ""), sent headers.
func URL(name, url string, headers map[string]string) (*host.Plan, error) {
	if name == "" {
		name = "remote"
	}
	spec, err := clientkind.NewSpec(mcpclient.Config{
		ServerName: name,
		Transport:  mcpclient.TransportStreamableHTTP,
		URL:        url,
		Headers:    headers,
	})
	if err != nil {
		return nil, err
	}
	return &host.Plan{Source: "--url", Entries: []host.PlanEntry{{
		Entry: host.Entry{ID: name, Name: clientkind.Name},
		Spec:  spec,
	}}}, nil
}

// OnlyPermissions reports whether the user config is the one file read
// (plans holds its plan) and its entries are all the agent's permissions:
// it names no server nor anything else to run.
func OnlyPermissions(files []scopes.File, plans []*host.Plan) bool {
	if len(files) != 1 || files[0].Scope != scopes.User {
		return false
	}
	n := 0
	for _, p := range plans {
		for _, pe := range p.Entries {
			if pe.Entry.Name != permkind.Name {
				return false
			}
			n++
		}
	}
	return n > 0
}

// Only narrows plan to the enabled entry whose server is server, and the
// entries that are not servers (such as sampling, which serve it): a
// call needs only its own server. ok is false, and plan unchanged, when
// no enabled entry is that server's.
func Only(plan *host.Plan, server string) (_ *host.Plan, ok bool) {
	var keep []host.PlanEntry
	for _, pe := range plan.Enabled() {
		switch {
		case pe.Entry.Name != clientkind.Name:
			keep = append(keep, pe)
		case pe.Spec.Name == server && !ok:
			keep, ok = append(keep, pe), true
		}
	}
	if !ok {
		return plan, false
	}
	return &host.Plan{Source: plan.Source, Entries: keep}, true
}

// Servers keeps of plan's enabled entries the servers named and the
// entries that are not servers. missing is a name no enabled server has
// ("" when each has one).
func Servers(plan *host.Plan, servers []string) (_ *host.Plan, missing string) {
	var keep []host.PlanEntry
	for _, pe := range plan.Enabled() {
		if pe.Entry.Name != clientkind.Name || slices.Contains(servers, pe.Spec.Name) {
			keep = append(keep, pe)
		}
	}
	for _, s := range servers {
		if !slices.ContainsFunc(keep, func(pe host.PlanEntry) bool { return pe.Spec.Name == s && pe.Entry.Name == clientkind.Name }) {
			return nil, s
		}
	}
	return &host.Plan{Source: plan.Source, Entries: keep}, ""
}

// PlaceLocks fills in where ls's locks are and which servers each pins:
// beside each of files, the servers its entries define (defines, by
// file: ServersByFile), each enabled server of plan in the lock of the
// file that now defines it.
func PlaceLocks(ls *pin.Set, files []scopes.File, defines map[string][]string, plan *host.Plan) {
	for _, cf := range files {
		ls.Keep(pin.Beside(cf.Path), defines[cf.Path]...)
	}
	for _, pe := range plan.Enabled() {
		if _, ok := defines[pe.Entry.File]; ok && pe.Entry.Name == clientkind.Name {
			ls.Assign(pe.Spec.Name, pin.Beside(pe.Entry.File))
		}
	}
}

// PlaceURLLock puts the servers of plan, a --url plan of url, in one
// lock of their own under stateDir, one per URL.
func PlaceURLLock(ls *pin.Set, stateDir, url string, plan *host.Plan) {
	sum := sha256.Sum256([]byte(url))
	path := filepath.Join(stateDir, "locks", hex.EncodeToString(sum[:8])+".lock")
	ls.Keep(path)
	for _, pe := range plan.Enabled() {
		ls.Assign(pe.Spec.Name, path)
		ls.Keep(path, pe.Spec.Name)
	}
}
