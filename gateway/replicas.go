package gateway

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/loopback"
	"github.com/mcpbridge/mcpbridge/internal/store"
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
// 404 and initializes again, as the protocol says; when it hangs (it
// accepts connections and answers nothing: ownerwatch.go), 503, and the
// client sends the request again.
//
// A call parked for its client's answers (questions.go) is another
// replica's the same way: each requestState names the replica that gave
// it (its tag), each replica records its address under its tag, and a
// call again with another replica's state is proxied to that replica.
// When that replica is gone, the call is answered here, as a state this
// replica does not hold.

// SessionOwners keeps which replica owns each session, and the replicas'
// shared secret (store.Redis).
// The names owned are "session:ID" and "replica:TAG".
type SessionOwners interface {
	PutOwners(ctx context.Context, names []string, owner string, ttl time.Duration) error
	Owner(ctx context.Context, name string) (string, bool, error)
	DropOwners(ctx context.Context, names []string) error
	DropOwnerIf(ctx context.Context, name, owner string) error
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
	mu    sync.Mutex
	owned map[string]ownedName // "session:ID" → where it is recorded
	// records counts the names recorded so far (ownedName.seq).
	records uint64
	self    string // the address recorded under this replica's tag
	// selfAdvertised reports that self is the config's advertise.
	selfAdvertised bool
	// secret is the replicas' shared secret as read from secretOf at
	// secretAt; previous the one it replaced at changedAt (the store lost
	// its key and a replica made a new one), still taken from replicas
	// that have not read the new one yet.
	secret, previous    []byte
	secretOf            SessionOwners
	secretAt, changedAt time.Time
	// outAt is when this replica last found the store out of reach
	// (storeWasOut).
	outAt   time.Time
	closed  bool
	renewed chan struct{} // closed when renewOwners returns; nil until it starts
	// transport reaches the other replicas.
	transport *http.Transport
}

// stop waits for renewOwners, which returns once the gateway is done,
// and starts no other; Close calls it.
func (rs *replicaSessions) stop() {
	rs.mu.Lock()
	rs.closed = true
	renewed, transport := rs.renewed, rs.transport
	rs.mu.Unlock()
	if renewed != nil {
		<-renewed
	}
	if transport != nil {
		transport.CloseIdleConnections()
	}
}

// sessionOwners returns the Gate's session store and advertised address,
// nil when it has none.
func (g *Gateway) sessionOwners() (SessionOwners, string) {
	if s, ok := gateAs[SharedSessions](g.gate); ok {
		return s.SessionOwners()
	}
	return nil, ""
}

// forwardSessions sends a request for a session, a parked call or a
// task's answers, which another replica owns, to that replica, records
// the sessions this one opens and where it is reached, and checks the
// signature of a request another replica forwarded. Without a store it is
// next.
func (g *Gateway) forwardSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		owners, advertise := g.sessionOwners()
		if owners == nil {
			next.ServeHTTP(w, r)
			return
		}
		session := r.Header.Get("Mcp-Session-Id")
		state := requestStateOf(r)
		switch {
		case r.Header.Get(replicaHeader) != "":
			if err := g.verifyForwarded(r, owners, cmp.Or(session, state)); errors.Is(err, errSecretUnread) {
				g.log.Warn("HTTP request refused: a forwarded request's replica signature cannot be checked", "session", session, "remote", r.RemoteAddr, "err", err)
				w.Header().Set("Retry-After", "1")
				refuse(w, http.StatusServiceUnavailable, "Service Unavailable: "+err.Error())
				return
			} else if err != nil {
				g.log.Warn("HTTP request refused: a forwarded request's replica signature does not verify", "session", session, "remote", r.RemoteAddr, "err", err)
				refuse(w, http.StatusForbidden, "Forbidden: "+err.Error())
				return
			}
			next.ServeHTTP(w, r) // answered here, never forwarded again
		case session != "" && !g.holdsSession(session):
			g.forwardToOwner(w, r, owners, "session:"+session, session, sessionGone)
		case session != "":
			next.ServeHTTP(w, r)
		case stateTag(state) != "" && stateTag(state) != g.parked.tag:
			g.forwardToOwner(w, r, owners, "replica:"+stateTag(state), state, next.ServeHTTP)
		default:
			owner := cmp.Or(advertise, localURL(r))
			g.recordSelf(owners, owner, advertise != "")
			next.ServeHTTP(&bindingWriter{ResponseWriter: w, bind: func(id string) { g.recordOwner(owners, "session:"+id, owner) }}, r)
		}
	})
}

// holdsSession reports whether this replica serves the session called
// id: the session table answers every request of a session it keeps
// state of, and only the rest (a forward, or a session before its first
// request reached the middleware) pays for sessionByID's scan.
func (g *Gateway) holdsSession(id string) bool {
	g.mu.Lock()
	st := g.byID[id]
	g.mu.Unlock()
	return st != nil || g.sessionByID(id) != nil
}

// sessionGone answers a request for a session no replica serves.
func sessionGone(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "session not found", http.StatusNotFound)
}

// requestStateOf returns what r's one message names that a replica gave
// (tagged): a call's requestState, or the task a tasks/update answers,
// whose questions only the replica running it can take. "" when it names
// neither (or is a batch: a batch's messages are not forwarded).
func requestStateOf(r *http.Request) string {
	body := bodyOf(r)
	if !bytes.Contains(body, []byte(tagPrefix)) || isBatch(body) {
		return "" // names nothing a replica tagged
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			RequestState string `json:"requestState"`
			TaskID       string `json:"taskId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return "" // not JSON: the transport answers it with a parse error
	}
	if m.Method == "tasks/update" {
		return m.Params.TaskID
	}
	return m.Params.RequestState
}

// stateTag returns the tag of the replica that gave state, "" for a
// state not of this form.
func stateTag(state string) string {
	if tag, _, ok := cutTag(state); ok {
		return tag
	}
	return ""
}

// Untagged returns id, a task id or requestState a replica gave, without
// its "mcpbridge.TAG." start (the same for everything one replica gives);
// id itself when it has none.
func Untagged(id string) string {
	if _, rest, ok := cutTag(id); ok {
		return rest
	}
	return id
}

// cutTag splits what tagged made into the replica's tag and the rest.
func cutTag(s string) (tag, rest string, ok bool) {
	after, ok := strings.CutPrefix(s, tagPrefix)
	if tag, rest, found := strings.Cut(after, "."); ok && found {
		return tag, rest, true
	}
	return "", "", false
}

// replicaTag returns a new gateway's tag: random, short.
func replicaTag() string {
	var b [9]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// localURL is the base URL of the address r's connection reached this
// replica at.
func localURL(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return "http://" + a.String()
	}
	return ""
}

// recordOwner records this replica, reached at owner, as the owner of
// name ("session:ID") before the client hears of the session, so that
// its next request may reach any replica. A store that does not answer
// does not stop the session: its record is written at the next renewal
// that reaches the store (renewOwners).
func (g *Gateway) recordOwner(owners SessionOwners, name, owner string) {
	if owner == "" {
		return
	}
	g.putOwner(owners, name, owner)
	rs := &g.replicas
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.owned == nil {
		rs.owned = make(map[string]ownedName)
	}
	rs.records++
	rs.owned[name] = ownedName{owner: owner, seq: rs.records}
	g.renewingLocked()
}

// recordSelf records where this replica is reached, under its tag (then
// renewed): before it parks a call, whose state names the tag. It is
// recorded again when a better address comes (betterSelf).
func (g *Gateway) recordSelf(owners SessionOwners, owner string, advertised bool) {
	rs := &g.replicas
	rs.mu.Lock()
	better := betterSelf(rs.self, rs.selfAdvertised, owner, advertised)
	if better {
		rs.self, rs.selfAdvertised = owner, advertised
	}
	rs.mu.Unlock()
	if !better {
		return
	}
	g.putOwner(owners, "replica:"+g.parked.tag, owner)
	rs.mu.Lock()
	g.renewingLocked()
	rs.mu.Unlock()
}

// betterSelf reports whether next (the config's advertise when
// advertised) is a better address of this replica than cur: the first
// one; the config's advertise, new or changed, over anything; once the
// config no longer advertises, the address a client reached; and an
// address off loopback over one on it (the first request may come from
// a probe or a sidecar on the same host, which no other replica could
// reach this one at).
func betterSelf(cur string, curAdvertised bool, next string, advertised bool) bool {
	switch {
	case next == "" || next == cur:
		return false
	case cur == "" || advertised || curAdvertised:
		return true
	}
	return onLoopback(cur) && !onLoopback(next)
}

// onLoopback reports whether the base URL u names a loopback address.
func onLoopback(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	return loopback.Host(p.Hostname())
}

// putOwner records owner as name's owner.
func (g *Gateway) putOwner(owners SessionOwners, name, owner string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	if err := owners.PutOwners(ctx, []string{name}, owner, ownerTTL); err != nil {
		g.storeOut()
		g.log.Warn("gateway store: recording an owner: other replicas will not find it", "name", name, "err", err)
	}
}

// renewingLocked starts renewOwners once, unless the gateway closed;
// g.replicas.mu is held.
func (g *Gateway) renewingLocked() {
	rs := &g.replicas
	if rs.renewed != nil || rs.closed {
		return
	}
	rs.renewed = make(chan struct{})
	go func() {
		defer close(rs.renewed)
		g.renewOwners()
	}()
}

// renewOwners renews the records of the sessions this replica owns
// while they are open, and drops those of the sessions that ended, and
// the record of the config it applies (renewConfig, also as soon as that
// config changes), until the gateway closes.
func (g *Gateway) renewOwners() {
	every := cmp.Or(g.opts.renewEvery, ownerTTL/3)
	tick := time.NewTicker(every)
	defer tick.Stop()
	check := time.NewTicker(min(every, configCheck))
	defer check.Stop()
	defer g.dropConfig()
	g.renewConfig()
	for {
		select {
		case <-g.done:
			return
		case <-check.C:
			if !g.configRecorded() {
				g.renewConfig()
			}
		case <-tick.C:
			g.renewConfig()
			g.renewSessions()
		}
	}
}

// renewSessions renews the records of the sessions this replica owns
// and drops those of the sessions that ended.
func (g *Gateway) renewSessions() {
	owners, _ := g.sessionOwners()
	if owners == nil {
		return
	}
	live, ended := g.ownedSessions()
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	for owner, ids := range live {
		if err := owners.PutOwners(ctx, ids, owner, ownerTTL); err != nil {
			g.storeOut()
			g.log.Warn("gateway store: renewing sessions' owners", "sessions", len(ids), "err", err)
		}
	}
	if err := owners.DropOwners(ctx, ended); err != nil {
		g.log.Warn("gateway store: forgetting ended sessions' owners", "sessions", len(ended), "err", err)
	}
}

// ownedSessions returns the names this replica owns (its tag, its open
// sessions), by the address recorded, and forgets (returns) the sessions
// that ended.
func (g *Gateway) ownedSessions() (live map[string][]string, ended []string) {
	rs := &g.replicas
	rs.mu.Lock()
	mark := rs.records // a session recorded after it may be open but missing from the list
	rs.mu.Unlock()
	open := g.openSessions()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	live, ended = rs.sweepLocked(open, mark)
	if rs.self != "" {
		live[rs.self] = append(live[rs.self], "replica:"+g.parked.tag)
	}
	return live, ended
}

// sweepLocked sorts the names owned by where they are to be recorded
// (where the replica is best reached now, or where each was first), but
// those of sessions not open, listed after mark, which it forgets and
// returns; rs.mu is held. A session opened before advertise changed, or
// over loopback, is renewed where the other replicas now reach this one.
func (rs *replicaSessions) sweepLocked(open map[string]bool, mark uint64) (live map[string][]string, ended []string) {
	live = make(map[string][]string)
	for name, o := range rs.owned {
		if open[strings.TrimPrefix(name, "session:")] || o.seq > mark {
			at := cmp.Or(rs.self, o.owner)
			live[at] = append(live[at], name)
			continue
		}
		ended = append(ended, name)
		delete(rs.owned, name)
	}
	return live, ended
}

// ownedName is where a name this replica owns is recorded, and when (the
// count of records then).
type ownedName struct {
	owner string
	seq   uint64
}

// forwardToOwner proxies r to the replica that owns name, signed for
// subject (the session, or the state, r names); r is left to gone when
// no replica owns name or its owner cannot be reached (its record is
// then dropped), and answered 503 when the store cannot say which owns
// it or the owner does not answer (watchOwner).
func (g *Gateway) forwardToOwner(w http.ResponseWriter, r *http.Request, owners SessionOwners, name, subject string, gone http.HandlerFunc) {
	owner, ok, secret, err := g.findOwner(r.Context(), owners, name)
	if err != nil {
		// Not known to be gone: the client may send it again, where a 404
		// would have it drop a live session.
		g.log.Warn("gateway store: finding an owner", "name", name, "err", err)
		w.Header().Set("Retry-After", "1")
		why := "the gateway's store cannot be reached to find the replica serving this request"
		switch {
		case errors.Is(err, store.ErrOwnersSettling):
			why = "the gateway's store restarted moments ago and does not know yet which replica serves this request"
		case errors.Is(err, errStoreWasOut):
			why = "the gateway's store was out of reach moments ago and does not know yet which replica serves this request"
		}
		refuse(w, http.StatusServiceUnavailable, "Service Unavailable: "+why+"; send it again")
		return
	}
	target, perr := url.Parse(owner)
	if !ok || perr != nil || target.Host == "" {
		gone(w, r)
		return
	}
	g.log.Debug("HTTP request forwarded to the replica that owns it", "name", name, "replica", owner)
	body := bodyOf(r)
	// MCP never switches protocols, and the proxy answers a switch it
	// refuses through ErrorHandler, as if the owner could not be reached.
	r.Header.Del("Upgrade")
	watch := g.watchOwner(r.Context(), name, target)
	defer watch.end()
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
			pr.Out.Header.Set(replicaHeader, signForward(secret, subject, time.Now()))
		},
		FlushInterval: -1, // an event stream's events go on as they come
		Transport:     g.replicaTransport(),
		// A stream broken mid-way (its owner cut as silent, or gone) is
		// told at Warn by the cut, or by its client's next forward.
		ErrorLog: slog.NewLogLogger(g.log.Handler(), slog.LevelDebug),
		ModifyResponse: func(*http.Response) error {
			watch.answered()
			return nil
		},
		// Given the outgoing request, the handler answers r, as received.
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			g.forwardFailed(w, r, forwardTo{owners: owners, name: name, owner: owner, body: body, gone: gone, watch: watch}, err)
		},
	}
	proxy.ServeHTTP(w, r.WithContext(watch.ctx))
}

// errStoreWasOut is a name without a record while the store may not hold
// every record yet: it was out of reach less than a record's ttl ago, and
// a replica that opened a session meanwhile records it at its first
// renewal after.
var errStoreWasOut = errors.New("no record, and the store was out of reach less than " + ownerTTL.String() + " ago: the owner may not have recorded it again yet")

// findOwner returns the address of the replica that owns name and the
// replicas' secret to sign a forward with, for a request made under
// rctx; ok is false when no replica owns it.
func (g *Gateway) findOwner(rctx context.Context, owners SessionOwners, name string) (owner string, ok bool, secret []byte, err error) {
	ctx, cancel := context.WithTimeout(rctx, storeWait)
	defer cancel()
	owner, ok, err = owners.Owner(ctx, name)
	if err == nil && ok {
		secret, _, err = g.replicaSecret(ctx, owners, false)
	}
	switch {
	case err != nil:
		// A client that left says nothing of the store (a client could
		// otherwise keep every replica from answering 404).
		if !errors.Is(err, store.ErrOwnersSettling) && rctx.Err() == nil {
			g.storeOut()
		}
		return "", false, nil, err
	case !ok && g.storeWasOut():
		return "", false, nil, errStoreWasOut
	}
	return owner, ok, secret, nil
}

// storeOut notes that the store was out of reach now.
func (g *Gateway) storeOut() {
	rs := &g.replicas
	rs.mu.Lock()
	rs.outAt = time.Now()
	rs.mu.Unlock()
}

// storeWasOut reports whether this replica found the store out of reach
// less than a record's ttl ago.
func (g *Gateway) storeWasOut() bool {
	rs := &g.replicas
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return !rs.outAt.IsZero() && time.Since(rs.outAt) < ownerTTL
}

// forwardTo is what forwardFailed answers a failed forward of r with:
// where it went, the body the proxy read, gone for an owner not there.
type forwardTo struct {
	owners      SessionOwners
	name, owner string
	body        []byte
	gone        http.HandlerFunc
	watch       *ownerWatch
}

// forwardFailed answers r, whose forward to f.owner failed with err: not
// at all when its client left, 503 when the owner does not answer (it
// may come back: its record stays, and lapses if it does not), else as
// gone, dropping the record of an owner that cannot be dialled.
func (g *Gateway) forwardFailed(w http.ResponseWriter, r *http.Request, f forwardTo, err error) {
	if r.Context().Err() != nil {
		return // the client left, not the owner: its record stays (a client could drop any replica's)
	}
	if f.watch.silent() { // logged as it was cut
		w.Header().Set("Retry-After", "1")
		refuse(w, http.StatusServiceUnavailable, "Service Unavailable: the gateway replica that serves this request does not answer; send it again (the gateway's operator should check that replica)")
		return
	}
	g.log.Warn("the replica that owns a request cannot be reached: answered here", "name", f.name, "replica", f.owner, "err", err)
	if unreachable(err) {
		dctx, dcancel := context.WithTimeout(context.Background(), storeWait)
		defer dcancel()
		_ = f.owners.DropOwnerIf(dctx, f.name, f.owner)
	}
	if f.body != nil { // the proxy read it
		r.Body = newScreenedBody(f.body)
	}
	f.gone(w, r)
}

// unreachable reports whether err, a forward's, says its owner could not
// be dialled: only then is its record dropped, since whatever else fails
// a forward (a connection the owner closed as it was reused, a request
// the proxy refuses) says nothing of the owner being gone, and some of it
// a client can cause.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// replicaTransport is the HTTP transport to the other replicas, made
// once.
func (g *Gateway) replicaTransport() *http.Transport {
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

// replicaSecret returns the replicas' secret in owners, and the one it
// replaced while replicas may still sign with it (nil otherwise). It is
// read again from the store once the copy here is secretTTL old, or when
// fresh asks (a signature that does not verify; only an authenticated
// client's request gets that far, each bounded by its identity's limits):
// a store that lost the key (restarted empty, or evicted it) gets a new
// secret from the next replica that asks, and every replica must come to
// it.
func (g *Gateway) replicaSecret(ctx context.Context, owners SessionOwners, fresh bool) (current, previous []byte, err error) {
	rs := &g.replicas
	rs.mu.Lock()
	if rs.secretOf == owners && rs.secret != nil && time.Since(rs.secretAt) < secretTTL && !fresh {
		defer rs.mu.Unlock()
		return rs.secret, rs.previousLocked(), nil
	}
	rs.mu.Unlock()
	secret, err := owners.ReplicaSecret(ctx)
	if err != nil {
		return nil, nil, err
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	switch {
	case rs.secretOf != owners:
		rs.previous = nil
	case !bytes.Equal(rs.secret, secret):
		rs.previous, rs.changedAt = rs.secret, time.Now()
	}
	rs.secret, rs.secretOf, rs.secretAt = secret, owners, time.Now()
	return rs.secret, rs.previousLocked(), nil
}

// previousLocked is the secret replaced, while replicas that read it
// before the change may still sign with it; rs.mu is held.
func (rs *replicaSessions) previousLocked() []byte {
	if rs.previous == nil || time.Since(rs.changedAt) > secretTTL+signatureSkew {
		return nil
	}
	return rs.previous
}

// errSecretUnread is a forward's signature left unchecked: the store,
// which holds the secret, cannot be read (503: the request may be sent
// again).
var errSecretUnread = errors.New("the " + replicaHeader + " header cannot be checked: the replicas' secret cannot be read")

// secretTTL is how long a replica signs and checks with the secret it
// read before reading it again.
const secretTTL = ownerTTL / 3

// verifyForwarded checks the replica signature of r, forwarded for
// subject (the session or state it names): by the secret, the one it
// replaced, or, read again, a new one.
func (g *Gateway) verifyForwarded(r *http.Request, owners SessionOwners, subject string) error {
	ctx, cancel := context.WithTimeout(r.Context(), storeWait)
	defer cancel()
	sig, now := r.Header.Get(replicaHeader), time.Now()
	var err error
	for _, fresh := range []bool{false, true} {
		current, previous, rerr := g.replicaSecret(ctx, owners, fresh)
		if rerr != nil {
			return fmt.Errorf("%w: %w", errSecretUnread, rerr)
		}
		if err = checkForward(current, sig, subject, now); err == nil || previous != nil && checkForward(previous, sig, subject, now) == nil {
			return nil
		}
	}
	return err
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
		// Well formed and fresh: most often a replica whose store is not
		// this one's (a reload changed its url or keyPrefix), whose
		// secret is another.
		return fmt.Errorf("the %s header's signature does not verify under this replica's secret: the replicas do not share one store (every replica's gateway entry must name the same store url and keyPrefix), or the header is forged", replicaHeader)
	}
	return nil
}
