package gateway

import (
	"context"
	"net/http"
	"strings"
)

// ConsolePath is where Options.Console is served: this path and every
// path under it.
const ConsolePath = "/console"

// console reports whether r is for Options.Console, which authenticates
// its viewers itself (a browser sends no bearer token): it is served after
// the Host and Origin checks, without the gateway's authentication.
func (g *Gateway) console(r *http.Request) bool {
	return g.opts.Console != nil && (r.URL.Path == ConsolePath || strings.HasPrefix(r.URL.Path, ConsolePath+"/"))
}

// IdentityOf returns the identity the gateway authenticated the request
// a call's ctx descends from, "" when none (stdio, no authentication).
func IdentityOf(ctx context.Context) string { return identityIn(ctx) }
