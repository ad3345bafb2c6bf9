package agent

import (
	"strings"
)

// Permissions are the person's standing answers, in Claude Code's shape:
// patterns of public tool names that run without asking (Allow) or never
// run (Deny). A pattern is a name (mcp__github__create_issue), a prefix
// ending in * (mcp__github__* : every tool of the server github), or, as
// Claude Code writes it, a server alone (mcp__github). Deny wins over
// Allow and over every other approval.
type Permissions struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// ServerPattern is the pattern of every tool of server.
func ServerPattern(server string) string { return "mcp__" + server + "__*" }

// CheckPattern says what is wrong with a pattern; "" when nothing is.
func CheckPattern(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "is empty: write a tool's name (mcp__server__tool) or every tool of a server (mcp__server__*)"
	case strings.Contains(strings.TrimSuffix(p, "*"), "*"):
		return "may hold * only at its end: mcp__server__* is every tool of a server"
	}
	return ""
}

// denies returns the Deny pattern that matches c, if one does. A prefix
// is matched against the public name too, so a deny errs on the side of
// refusing.
func (ps Permissions) denies(c Call) (string, bool) {
	for _, p := range ps.Deny {
		if matches(p, c, true) {
			return p, true
		}
	}
	return "", false
}

// allows reports whether an Allow pattern matches c.
func (ps Permissions) allows(c Call) bool {
	for _, p := range ps.Allow {
		if matches(p, c, false) {
			return true
		}
	}
	return false
}

// matches reports whether pattern matches c. A name matches c's public
// name, or the name joined from its server and raw name (a long or
// unusual name is hashed in public, and a person writes what the server
// calls it). A prefix matches the joined name of a server's tool, since a
// hashed public name's prefix may be another server's (my.srv's tools are
// mcp__my_srv__…_hash); the public name too when loose.
func matches(pattern string, c Call, loose bool) bool {
	if rest, ok := strings.CutPrefix(pattern, "mcp__"); ok && rest != "" && !strings.Contains(rest, "__") && !strings.HasSuffix(rest, "*") {
		pattern += "__*" // mcp__server: the whole server
	}
	joined := ""
	if o := c.Tool.Origin; o.Server != "" {
		joined = "mcp__" + o.Server + "__" + o.Name
	}
	prefix, wild := strings.CutSuffix(pattern, "*")
	switch {
	case !wild:
		return c.Name == pattern || joined == pattern
	case joined != "" && strings.HasPrefix(joined, prefix):
		return true
	}
	return (loose || joined == "") && strings.HasPrefix(c.Name, prefix)
}
