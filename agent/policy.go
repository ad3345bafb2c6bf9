package agent

import (
	"context"
	"encoding/json"
	"strings"
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
// denied), but for a call of no registered tool, which is denied. An
// "always" answer is told to Keep, to outlast the run: the tool's exact
// name, or its server's pattern. It is safe for concurrent use; Rules is
// not changed.
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
	// A name no tool has cannot run, and an "always" answer to it would
	// be kept as a pattern (mcp__github: every tool of github): it is
	// refused unasked.
	if p.Ask == nil || c.Tool.Name == "" {
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

// alwaysPattern is the Allow pattern of an answer: the registered tool's
// exact name, or its server's pattern; "" for an answer that is not for
// good, or whose pattern would allow more than was asked about (a name
// that reads as a prefix or a whole server, a server named with a *):
// that answer holds for the one call.
func alwaysPattern(c Call, ans Answer) string {
	pattern := ""
	switch {
	case ans == AlwaysTool && c.Tool.Name == c.Name && !strings.Contains(c.Name, "*") && wholeServer(c.Name) == c.Name:
		pattern = c.Name
	case ans == AlwaysServer && c.Tool.Origin.Server != "":
		pattern = ServerPattern(c.Tool.Origin.Server)
	}
	if CheckPattern(pattern) != "" {
		return ""
	}
	return pattern
}

// readOnly reports readOnlyHint: true in a tool's annotations.
func readOnly(annotations json.RawMessage) bool {
	var a struct {
		ReadOnly bool `json:"readOnlyHint"`
	}
	return json.Unmarshal(annotations, &a) == nil && a.ReadOnly
}
