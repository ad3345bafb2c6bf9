// Package redact removes secrets from text that leaves the bridge: the
// user info, path, query and fragment of URLs, where hosted MCP servers and
// their users put API keys (docs/decisions.md §3: expanded values are never
// printed).
package redact

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/errtext"
)

var urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// URLs returns s with every URL cut to its scheme and host, followed by
// "/…" when anything was cut. A URL as written in a config file, whose host
// is a ${VAR} reference, is cut the same way.
func URLs(s string) string {
	return urlPattern.ReplaceAllStringFunc(s, func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil && strings.Contains(raw, "${") {
			return writtenURL(raw)
		}
		if err != nil || u.Host == "" {
			return "[url]"
		}
		if u.User == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" {
			return raw
		}
		return u.Scheme + "://" + u.Host + "/…"
	})
}

// Error returns err with its message passed through URLs; errors.Is and
// errors.As still see the original. nil stays nil.
func Error(err error) error { return errtext.Map(err, URLs) }

// writtenURL cuts a URL that does not parse because its host holds a
// ${VAR} reference ("https://${HOST}/mcp?key=…") like URLs cuts the others:
// to its scheme and host (without user info), then "/…".
func writtenURL(raw string) string {
	scheme, rest, _ := strings.Cut(raw, "://")
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host := rest[:end]
	cut := end < len(rest) && rest[end:] != "/"
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host, cut = host[i+1:], true
	}
	if !cut {
		return raw
	}
	return scheme + "://" + host + "/…"
}
