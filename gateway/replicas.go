package gateway

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sessions shared by the replicas of a gateway. When the Gate has a
// store (SharedSessions: the gateway entry's store), each replica
// records there which replica owns each client session it opens (the
// session id → the address the other replicas reach the owner at),
// renewing the record while the session lives. A request naming a
// session this replica does not have is proxied to its owner, streams
// included, flushed as they go. The owner serves it as it serves a
// client's own request: the client's credentials travel with it and are
// checked again, and so is the session's binding to its identity, so a
// replica cannot act as anyone the client's credentials do not prove.
// The forwarding replica signs the request (replicaHeader: an HMAC under
// the secret the replicas share through the store, bound to the session
// and a time), so the owner answers it itself and never forwards it
// again; a request whose signature does not verify is refused. When the
// owner is gone (no record, or it cannot be reached), the client gets
// 404 and initializes again, as the protocol says.

// SessionOwners keeps which replica owns each session, and the replicas'
// shared secret (store.Redis).
type SessionOwners interface {
	PutOwners(ctx context.Context, sessions []string, owner string, ttl time.Duration) error
	Owner(ctx context.Context, session string) (string, bool, error)
	DropOwners(ctx context.Context, sessions []string) error
	ReplicaSecret(ctx context.Context) ([]byte, error)
}

// SharedSessions is implemented by a Gate whose config shares sessions
// across replicas: SessionOwners returns the store and the base URL the
// other replicas reach this one at ("": the address each client's
// connection reached it at), or a nil store when sessions stay in the
// process.
type SharedSessions interface {
	SessionOwners() (SessionOwners, string)
}

// replicaHeader carries a forwarding replica's signature:
// "UNIXSECONDS.HEXHMAC".
const replicaHeader = "Mcp-Gateway-Replica"

// Bounds of the records and signatures: a record lapses ownerTTL after
// its owner stopped renewing it (every ownerTTL/3); a signature is
// accepted signatureSkew either side of its time.
const (
	ownerTTL      = 30 * time.Second
	signatureSkew = time.Minute
)

// replicaSessions is a gateway's part in the shared sessions: the
// sessions it owns, the shared secret, and the goroutine that renews the
// records (started with the first, stopped by Close).
type replicaSessions struct {
	mu       sync.Mutex
	owned    map[string]string // session → the address recorded
	secret   []byte
	secretOf SessionOwners
	renewing bool
	wg       sync.WaitGroup
	// transport reaches the other replicas.
	transport http.RoundTripper
}

// sessionOwners returns the Gate's session store and advertised address,
// nil when it has none.
func (g *Gateway) sessionOwners() (SessionOwners, string) {
	if s, ok := g.gate.(SharedSessions); ok {
		return s.SessionOwners()
	}
	return nil, ""
}

// forwardSessions sends a request for a session another replica owns to
// that replica, records the sessions this one opens, and checks the
// signature of a request another replica forwarded. Without a store it
// is next.
func (g *Gateway) forwardSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		owners, advertise := g.sessionOwners()
		session := r.Header.Get("Mcp-Session-Id")
		switch {
		case owners == nil:
			next.ServeHTTP(w, r)
		case r.Header.Get(replicaHeader) != "":
			if err := g.verifyForwarded(r, owners, session); err != nil {
				g.log.Warn("HTTP request refused: a forwarded request's replica signature does not verify", "session", session, "remote", r.RemoteAddr, "err", err)
				refuse(w, http.StatusForbidden, "Forbidden: "+err.Error())
				return
			}
			next.ServeHTTP(w, r) // answered here, never forwarded again
		case session == "":
			owner := cmp.Or(advertise, localURL(r))
			next.ServeHTTP(&bindingWriter{ResponseWriter: w, bind: func(id string) { g.recordOwner(owners, id, owner) }}, r)
		case g.sessionByID(session) != nil:
			next.ServeHTTP(w, r)
		default:
			g.forwardToOwner(w, r, next, owners, session)
		}
	})
}

// localURL is the base URL of the address r's connection reached this
// replica at.
func localURL(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return "http://" + a.String()
	}
	return ""
}

// recordOwner records this replica, reached at owner, as session's owner
// before the client hears of the session, so that its next request may
// reach any replica.
func (g *Gateway) recordOwner(owners SessionOwners, session, owner string) {
	if owner == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	if err := owners.PutOwners(ctx, []string{session}, owner, ownerTTL); err != nil {
		g.log.Warn("gateway store: recording a session's owner: other replicas will answer it 404", "session", session, "err", err)
	}
	rs := &g.replicas
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.owned == nil {
		rs.owned = make(map[string]string)
	}
	rs.owned[session] = owner
	if !rs.renewing {
		rs.renewing = true
		rs.wg.Go(g.renewOwners)
	}
}

// renewOwners renews the records of the sessions this replica owns
// while they are open, and drops those of the sessions that ended, until
// the gateway closes.
func (g *Gateway) renewOwners() {
	tick := time.NewTicker(ownerTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-tick.C:
		}
		owners, _ := g.sessionOwners()
		if owners == nil {
			continue
		}
		live, ended := g.ownedSessions()
		ctx, cancel := context.WithTimeout(context.Background(), storeWait)
		for owner, ids := range live {
			if err := owners.PutOwners(ctx, ids, owner, ownerTTL); err != nil {
				g.log.Warn("gateway store: renewing sessions' owners", "sessions", len(ids), "err", err)
			}
		}
		if err := owners.DropOwners(ctx, ended); err != nil {
			g.log.Warn("gateway store: forgetting ended sessions' owners", "sessions", len(ended), "err", err)
		}
		cancel()
	}
}

// ownedSessions returns the open sessions this replica owns, by the
// address recorded, and forgets (returns) those that ended.
func (g *Gateway) ownedSessions() (live map[string][]string, ended []string) {
	open := g.openSessions()
	rs := &g.replicas
	rs.mu.Lock()
	defer rs.mu.Unlock()
	live = make(map[string][]string)
	for id, owner := range rs.owned {
		if open[id] {
			live[owner] = append(live[owner], id)
			continue
		}
		ended = append(ended, id)
		delete(rs.owned, id)
	}
	return live, ended
}

// forwardToOwner proxies r, for session, to the replica that owns it; a
// session no replica owns is left to next (its 404), and one whose owner
// cannot be reached is answered 404 and its record dropped.
func (g *Gateway) forwardToOwner(w http.ResponseWriter, r *http.Request, next http.Handler, owners SessionOwners, session string) {
	ctx, cancel := context.WithTimeout(r.Context(), storeWait)
	owner, ok, err := owners.Owner(ctx, session)
	var secret []byte
	if err == nil && ok {
		secret, err = g.replicaSecret(ctx, owners)
	}
	cancel()
	if err != nil {
		g.log.Warn("gateway store: finding a session's owner", "session", session, "err", err)
	}
	target, perr := url.Parse(owner)
	if !ok || err != nil || perr != nil || target.Host == "" {
		next.ServeHTTP(w, r)
		return
	}
	g.log.Debug("HTTP request forwarded to the session's replica", "session", session, "replica", owner)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
			pr.Out.Header.Set(replicaHeader, signForward(secret, session, time.Now()))
		},
		FlushInterval: -1, // an event stream's events go on as they come
		Transport:     g.replicaTransport(),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			g.log.Warn("the replica owning a session cannot be reached: the client must initialize again", "session", session, "replica", owner, "err", err)
			dctx, dcancel := context.WithTimeout(context.Background(), storeWait)
			defer dcancel()
			_ = owners.DropOwners(dctx, []string{session})
			http.Error(w, "session not found", http.StatusNotFound)
		},
	}
	proxy.ServeHTTP(w, r)
}

// replicaTransport is the HTTP transport to the other replicas, made
// once.
func (g *Gateway) replicaTransport() http.RoundTripper {
	rs := &g.replicas
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil // the replicas reach each other directly
		t.DialContext = (&net.Dialer{Timeout: 2 * time.Second}).DialContext
		rs.transport = t
	}
	return rs.transport
}

// replicaSecret returns the replicas' secret in owners, read once per
// store.
func (g *Gateway) replicaSecret(ctx context.Context, owners SessionOwners) ([]byte, error) {
	rs := &g.replicas
	rs.mu.Lock()
	if rs.secretOf == owners && rs.secret != nil {
		defer rs.mu.Unlock()
		return rs.secret, nil
	}
	rs.mu.Unlock()
	secret, err := owners.ReplicaSecret(ctx)
	if err != nil {
		return nil, err
	}
	rs.mu.Lock()
	rs.secret, rs.secretOf = secret, owners
	rs.mu.Unlock()
	return secret, nil
}

// verifyForwarded checks the replica signature of r, forwarded for
// session.
func (g *Gateway) verifyForwarded(r *http.Request, owners SessionOwners, session string) error {
	ctx, cancel := context.WithTimeout(r.Context(), storeWait)
	defer cancel()
	secret, err := g.replicaSecret(ctx, owners)
	if err != nil {
		return fmt.Errorf("the %s header cannot be checked: %w", replicaHeader, err)
	}
	return checkForward(secret, r.Header.Get(replicaHeader), session, time.Now())
}

// signForward is the signature of a request for session forwarded at
// now.
func signForward(secret []byte, session string, now time.Time) string {
	ts := strconv.FormatInt(now.Unix(), 10)
	return ts + "." + hex.EncodeToString(forwardMAC(secret, session, ts))
}

// forwardMAC is the HMAC of a forward of session at ts.
func forwardMAC(secret []byte, session, ts string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("mcpbridge replica forward\n" + session + "\n" + ts))
	return m.Sum(nil)
}

// checkForward checks sig, a forward's signature for session, at now.
func checkForward(secret []byte, sig, session string, now time.Time) error {
	ts, mac, ok := strings.Cut(sig, ".")
	sec, err := strconv.ParseInt(ts, 10, 64)
	got, herr := hex.DecodeString(mac)
	if !ok || err != nil || herr != nil {
		return fmt.Errorf("the %s header is only sent by the gateway's replicas to each other", replicaHeader)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > signatureSkew || d < -signatureSkew {
		return fmt.Errorf("the %s header is %v old: the replicas' clocks differ, or it is replayed", replicaHeader, d.Round(time.Second))
	}
	if !hmac.Equal(got, forwardMAC(secret, session, ts)) {
		return fmt.Errorf("the %s header is only sent by the gateway's replicas to each other", replicaHeader)
	}
	return nil
}
