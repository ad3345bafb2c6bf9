package gateway

import (
	"context"
	"net/http"
	"sync"
)

// Sessions are bound to the identity that opened them: the id in
// Mcp-Session-Id is a handle, not a credential, so a client presenting
// another's id must not act in that session (answer its elicitations, read
// its results). Today the identity is the bearer token's (one for every
// holder) unless Options.Authenticate tells clients apart.

// fromKey is the context key of who a request is from: its identity and
// its client address, one value (one context layer and one allocation
// per request; every call's handling looks both up).
type fromKey struct{}

// requestFrom is who a request is from.
type requestFrom struct {
	identity string
	address  string
}

// withIdentity returns r's context carrying who the request is from, and
// the address it came from.
func withIdentity(r *http.Request, identity string) context.Context {
	return context.WithValue(r.Context(), fromKey{}, &requestFrom{identity: identity, address: hostOnly(r.RemoteAddr)})
}

// identityOf returns who the request is from; "" when the gateway has no
// authentication (every client is the same anonymous one).
func identityOf(r *http.Request) string { return identityIn(r.Context()) }

// identityIn is identityOf for the context of a request's handling (the
// SDK's sessions are connected with the HTTP request's context).
func identityIn(ctx context.Context) string {
	if from, ok := ctx.Value(fromKey{}).(*requestFrom); ok {
		return from.identity
	}
	return ""
}

// addressIn returns the client address of the HTTP request ctx is of; ""
// off HTTP.
func addressIn(ctx context.Context) string {
	if from, ok := ctx.Value(fromKey{}).(*requestFrom); ok {
		return from.address
	}
	return ""
}

// sessionOwners maps each open session's id to the identity that opened
// it. Entries of ended sessions are dropped when a new session is bound,
// so it holds no more than the open sessions and the new one. Safe for
// concurrent use.
type sessionOwners struct {
	mu    sync.Mutex
	owner map[string]binding // session id -> who opened it
	binds uint64             // bindings made so far
}

// binding is who opened a session, and when (the count of bindings then).
type binding struct {
	identity string
	seq      uint64
}

// mark returns the count of bindings so far. Taken before listing the open
// sessions, it tells bind which bindings that list can speak for: a session
// bound after it may be missing from the list without having ended.
func (o *sessionOwners) mark() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.binds
}

// bind records that identity opened session. open holds the ids of the
// sessions still open, listed after mark was taken; bindings made since
// are kept whatever it says, since an unbound session is open to anyone.
func (o *sessionOwners) bind(session, identity string, mark uint64, open map[string]bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.owner == nil {
		o.owner = make(map[string]binding)
	}
	for id, b := range o.owner {
		if b.seq <= mark && !open[id] {
			delete(o.owner, id)
		}
	}
	o.binds++
	o.owner[session] = binding{identity: identity, seq: o.binds}
}

// identities returns who opened each session bound, by session id.
func (o *sessionOwners) identities() map[string]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]string, len(o.owner))
	for id, b := range o.owner {
		out[id] = b.identity
	}
	return out
}

// identityOf returns who opened session; "" when it is not bound.
func (o *sessionOwners) identityOf(session string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.owner[session].identity
}

// forget drops session's binding: it has ended.
func (o *sessionOwners) forget(session string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.owner, session)
}

// allowed reports whether identity may use session: it opened it, or the
// session is not bound (unknown ids are the SDK's to refuse).
func (o *sessionOwners) allowed(session, identity string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	b, bound := o.owner[session]
	return !bound || b.identity == identity
}

// bindSessions refuses a request that presents a session opened by another
// identity with 404, as the SDK answers an unknown session (a probe learns
// nothing about which ids exist), and binds each new session to the
// identity whose initialize opened it.
func (g *Gateway) bindSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		identity := identityOf(r)
		if session := r.Header.Get("Mcp-Session-Id"); session != "" {
			if !g.owners.allowed(session, identity) {
				g.log.Warn("HTTP request refused: its session was opened by another identity", "session", session)
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&bindingWriter{ResponseWriter: w, bind: func(session string) {
			mark := g.owners.mark()
			g.owners.bind(session, identity, mark, g.openSessions())
		}}, r)
	})
}

// openSessions returns the ids of the sessions the SDK serves now.
func (g *Gateway) openSessions() map[string]bool {
	open := make(map[string]bool)
	for ss := range g.server.Sessions() {
		open[ss.ID()] = true
	}
	return open
}

// bindingWriter binds the session a response opens before the response
// (and with it the session id) leaves.
type bindingWriter struct {
	http.ResponseWriter
	bind  func(session string)
	wrote bool
}

func (b *bindingWriter) WriteHeader(code int) {
	if !b.wrote {
		b.wrote = true
		if session := b.Header().Get("Mcp-Session-Id"); session != "" {
			b.bind(session)
		}
	}
	b.ResponseWriter.WriteHeader(code)
}

func (b *bindingWriter) Write(p []byte) (int, error) {
	if !b.wrote {
		b.WriteHeader(http.StatusOK)
	}
	return b.ResponseWriter.Write(p)
}

// Flush binds the session first, as Write does: a flush sends the
// headers.
func (b *bindingWriter) Flush() {
	if !b.wrote {
		b.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(b.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (b *bindingWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }
