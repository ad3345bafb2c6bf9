package gateway

import (
	"errors"
	"net/http"
	"strings"
)

// Challenge is an error Options.Authenticate returns to choose the answer
// to a refused request: Status (401, or 403 for a token short of scopes)
// and the WWW-Authenticate value (an OAuth resource server's challenge,
// with its resource_metadata and error parameters). Status 503 says no
// token can be judged yet (the gateway is starting): it sends no
// WWW-Authenticate, which would tell an OAuth client to drop its token,
// and asks to retry in a second.
type Challenge struct {
	Status          int
	WWWAuthenticate string
	Err             error
}

func (c *Challenge) Error() string { return c.Err.Error() }
func (c *Challenge) Unwrap() error { return c.Err }

// challenge refuses a request Authenticate refused with err.
func challenge(w http.ResponseWriter, err error) {
	status, header := http.StatusUnauthorized, `Bearer realm="mcpbridge"`
	if c, ok := errors.AsType[*Challenge](err); ok {
		if c.Status != 0 {
			status = c.Status
		}
		if c.WWWAuthenticate != "" {
			header = c.WWWAuthenticate
		}
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	} else {
		w.Header().Set("WWW-Authenticate", header)
	}
	// An unauthorized client keeps no connection open, whatever body it
	// declared: a flood of them must not hold the gateway's connections.
	refuse(w, status, http.StatusText(status)+": "+err.Error())
}

// wellKnown reports whether r asks for a document Options.WellKnown serves
// to everyone: OAuth metadata a client reads before it has a token.
func (g *Gateway) wellKnown(r *http.Request) bool {
	return g.opts.WellKnown != nil && strings.HasPrefix(r.URL.Path, "/.well-known/")
}
