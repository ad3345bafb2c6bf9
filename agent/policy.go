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

// Policy is the Approver of the CLI. It refuses, before anything else, a
// call a Rules.Deny pattern matches (telling Refused). It approves
// everything else with All (--yes); search_tools always; a tool marked
// readOnlyHint when its server is trusted (annotations of other servers
// are not believed); a call Rules.Allow matches, or what the person
// allowed for good earlier in the run; and asks Ask the rest (nil Ask:
// denied). An "always" answer is told to Keep, to outlast the run. It is
// safe for concurrent use; Rules is not changed.
type Policy struct {
	All     bool
	Trusted func(server string) bool
	Ask     func(ctx context.Context, c Call) (Answer, error)
	Rules   Permissions
	// Refused is told of each call a Deny pattern refused; nil: nothing.
	Refused func(c Call, pattern string)
	// Keep is told the Allow pattern of an "always" answer (the tool's
	// name, or ServerPattern); nil: it lasts the run.
	Keep func(c Call, pattern string)

	mu      sync.Mutex
	allowed []string // patterns allowed for good during the run
}

var _ Approver = (*Policy)(nil)

// Approve decides c.
func (p *Policy) Approve(ctx context.Context, c Call) (bool, error) {
	if pattern, ok := p.Rules.denies(c); ok {
		if p.Refused != nil {
			p.Refused(c, pattern)
		}
		return false, nil
	}
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
	if pattern := alwaysPattern(c, ans); pattern != "" {
		p.mu.Lock()
		p.allowed = append(p.allowed, pattern)
		p.mu.Unlock()
		if p.Keep != nil {
			p.Keep(c, pattern)
		}
	}
	return ans != Deny, nil
}

// auto reports whether c is approved without asking.
func (p *Policy) auto(c Call) bool {
	if p.All || c.Name == toolview.SearchName || p.Rules.allows(c) {
		return true
	}
	server := c.Tool.Origin.Server
	if server != "" && p.Trusted != nil && p.Trusted(server) && readOnly(c.Tool.Annotations) {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return Permissions{Allow: p.allowed}.allows(c)
}

// alwaysPattern is the Allow pattern of an answer: the tool's name, or
// its server's pattern; "" for an answer that is not for good.
func alwaysPattern(c Call, ans Answer) string {
	switch {
	case ans == AlwaysTool:
		return c.Name
	case ans == AlwaysServer && c.Tool.Origin.Server != "":
		return ServerPattern(c.Tool.Origin.Server)
	}
	return ""
}

// readOnly reports readOnlyHint: true in a tool's annotations.
func readOnly(annotations json.RawMessage) bool {
	var a struct {
		ReadOnly bool `json:"readOnlyHint"`
	}
	return json.Unmarshal(annotations, &a) == nil && a.ReadOnly
}
