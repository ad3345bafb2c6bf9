package agent

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpbridge/mcpbridge/toolview"
)

// Answer is a person's answer to a call.
type Answer int

// The answers.
const (
	Deny         Answer = iota // this call does not run
	Once                       // this call runs
	AlwaysTool                 // this call and every later one of the tool
	AlwaysServer               // every call of the tool's server
)

// Policy is the Approver of the CLI: it approves everything with All
// (--yes); search_tools always; a tool marked readOnlyHint when its server
// is trusted (annotations of other servers are not believed); what the
// person allowed for good earlier; and asks Ask the rest (nil Ask: denied).
// It is safe for concurrent use.
type Policy struct {
	All     bool
	Trusted func(server string) bool
	Ask     func(ctx context.Context, c Call) (Answer, error)

	mu      sync.Mutex
	tools   map[string]bool
	servers map[string]bool
}

var _ Approver = (*Policy)(nil)

// Approve decides c.
func (p *Policy) Approve(ctx context.Context, c Call) (bool, error) {
	if p.auto(c) {
		return true, nil
	}
	if p.Ask == nil {
		return false, nil
	}
	ans, err := p.Ask(ctx, c)
	if err != nil {
		return false, err
	}
	p.remember(c, ans)
	return ans != Deny, nil
}

// auto reports whether c is approved without asking.
func (p *Policy) auto(c Call) bool {
	if p.All || c.Name == toolview.SearchName {
		return true
	}
	server := c.Tool.Origin.Server
	if server != "" && p.Trusted != nil && p.Trusted(server) && readOnly(c.Tool.Annotations) {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tools[c.Name] || server != "" && p.servers[server]
}

func (p *Policy) remember(c Call, ans Answer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case ans == AlwaysTool:
		if p.tools == nil {
			p.tools = map[string]bool{}
		}
		p.tools[c.Name] = true
	case ans == AlwaysServer && c.Tool.Origin.Server != "":
		if p.servers == nil {
			p.servers = map[string]bool{}
		}
		p.servers[c.Tool.Origin.Server] = true
	}
}

// readOnly reports readOnlyHint: true in a tool's annotations.
func readOnly(annotations json.RawMessage) bool {
	var a struct {
		ReadOnly bool `json:"readOnlyHint"`
	}
	return json.Unmarshal(annotations, &a) == nil && a.ReadOnly
}
