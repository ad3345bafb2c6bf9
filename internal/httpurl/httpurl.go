// Package httpurl says what keeps a string written as a server's or an
// API's address from being an absolute http(s) URL, without quoting it
// (it may hold an expanded secret).
package httpurl

import (
	"net/url"
	"strings"
)

// Problem is why s is not an absolute http:// or https:// URL, as a
// parenthesis for a message ("it has no host"); "" when it is one.
func Problem(s string) string {
	if !strings.Contains(s, "://") {
		// localhost:3001/mcp parses, its "scheme" localhost.
		return "it has no scheme: start it with http:// or https://"
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "it does not parse as a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "the scheme is not http or https"
	case u.Host == "":
		return "it has no host"
	}
	return ""
}
