// Package permissions is the permissions entry kind: the agent's standing
// approvals, in Claude Code's shape, kept in the user's config file.
//
//   - id: permissions
//     name: permissions
//     config:
//     allow: [mcp__demo__add, "mcp__github__*"]   # run without asking
//     deny: [mcp__fs__delete]                    # never run; checked first
//
// Patterns are those of [agent.Permissions]. The entry starts nothing: the
// agent reads it at its start (Decode gives the agent.Permissions), and
// writes to it when the person answers "always" (Allow). Several entries
// add up.
package permissions

import (
	"context"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// Name is the entry name that selects the kind.
const Name = "permissions"

// Kind is the permissions kind.
type Kind struct{}

var _ host.Kind = Kind{}

// Name implements host.Kind.
func (Kind) Name() string { return Name }

// Decode implements host.Kind: the spec's Config is an agent.Permissions.
func (Kind) Decode(n *yaml.Node, lookup func(string) (string, bool)) (host.Spec, error) {
	ps, err := Decode(n, lookup)
	if err != nil {
		return host.Spec{}, err
	}
	return host.Spec{Config: ps, Name: Name, Summary: fmt.Sprintf("%d allowed, %d denied", len(ps.Allow), len(ps.Deny))}, nil
}

// Decode reads an entry's config mapping (nil: no patterns); each
// pattern is checked (agent.CheckPattern) at its position.
func Decode(n *yaml.Node, lookup func(string) (string, bool)) (agent.Permissions, error) {
	var ps agent.Permissions
	d := yamlconf.NewDecoder(lookup)
	m, ok := d.Map(n, "config")
	if !ok {
		return ps, d.Err()
	}
	m.RejectListing("allow", "deny")
	ps.Allow = patterns(d, m, "allow")
	ps.Deny = patterns(d, m, "deny")
	return ps, d.Err()
}

// patterns is the list under key, each pattern checked.
func patterns(d *yamlconf.Decoder, m *yamlconf.Map, key string) []string {
	list, ok := m.StringList(key)
	if !ok {
		return nil
	}
	items := m.Value(key).Content
	for i, p := range list {
		if problem := agent.CheckPattern(p); problem != "" && i < len(items) {
			d.Errorf(items[i], fmt.Sprintf("%s[%d]", m.Path(key), i), "%q %s", p, problem)
		}
	}
	return list
}

// Start implements host.Kind: nothing runs; the instance is ready at
// once, for status to show.
func (Kind) Start(_ context.Context, spec host.Spec, _ host.Env) (host.Instance, error) {
	ready := make(chan struct{})
	close(ready)
	return &instance{ready: ready, summary: spec.Summary}, nil
}

type instance struct {
	ready   chan struct{}
	summary string
}

func (in *instance) Ready() <-chan struct{} { return in.ready }
func (in *instance) StartErr() error        { return nil }
func (in *instance) Close() error           { return nil }

func (in *instance) Status() host.Status {
	return host.Status{State: host.StateReady, Name: Name, Transport: "builtin", PeerName: in.summary}
}
