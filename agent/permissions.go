package agent

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpbridge/mcpbridge/resourcetools"
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
	server, every := resourceServer(c)
	if p, ok := ps.DeniesServer(server); ok {
		return p, true
	}
	for _, p := range ps.Deny {
		if matches(p, c, true) || every && wholeServerPattern(p) {
			return p, true
		}
	}
	return "", false
}

// DeniesServer returns the Deny pattern that denies every tool of server
// (mcp__server, mcp__server__*, or a shorter prefix), if one does. Such a
// server is denied what else it offers too: its resources, its skills.
func (ps Permissions) DeniesServer(server string) (string, bool) {
	for _, p := range ps.Deny {
		if server != "" && coversServer(p, server) {
			return p, true
		}
	}
	return "", false
}

// wholeServerPattern reports whether pattern denies every tool of some
// server (mcp__s, mcp__s__*, or a prefix of a server's name: not
// mcp__s__create_*): a list of every server's resources would hold that
// server's.
func wholeServerPattern(pattern string) bool {
	prefix, wild := strings.CutSuffix(wholeServer(pattern), "*")
	rest, ok := strings.CutPrefix(prefix, "mcp__")
	return wild && ok && !strings.Contains(strings.TrimSuffix(rest, "__"), "__")
}

// resourceServer is the server a call of the resource tools (list or
// read a server's resources) names, "" for any other call; every is a
// list that names none, of every server's resources. A server whose every
// tool is denied is denied its resources too, which may hold what its
// tools would return.
func resourceServer(c Call) (server string, every bool) {
	if c.Name != resourcetools.ListName && c.Name != resourcetools.ReadName {
		return "", false
	}
	var a struct {
		Server string `json:"server"`
	}
	if json.Unmarshal(c.Args, &a) != nil {
		return "", c.Name == resourcetools.ListName
	}
	return a.Server, a.Server == "" && c.Name == resourcetools.ListName
}

// coversServer reports whether pattern denies every tool of server
// (mcp__server, mcp__server__*, or a shorter prefix of them).
func coversServer(pattern, server string) bool {
	prefix, wild := strings.CutSuffix(wholeServer(pattern), "*")
	// By its name, or by the name's public form (my.srv's tools are
	// mcp__my_srv__…), as a deny matches tools loosely.
	return wild && (strings.HasPrefix("mcp__"+server+"__", prefix) || strings.HasPrefix("mcp__"+publicForm(server)+"__", prefix))
}

// publicForm is name with each character a tool name may not hold made
// '_', as public names are (internal/naming).
func publicForm(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, name)
}

// wholeServer is pattern with a server alone, as Claude Code writes it
// (mcp__github), written as every tool of it (mcp__github__*).
func wholeServer(pattern string) string {
	if rest, ok := strings.CutPrefix(pattern, "mcp__"); ok && rest != "" && !strings.Contains(rest, "__") && !strings.HasSuffix(rest, "*") {
		return pattern + "__*"
	}
	return pattern
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
	pattern = wholeServer(pattern)
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
