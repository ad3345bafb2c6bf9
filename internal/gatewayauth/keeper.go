package gatewayauth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"golang.org/x/time/rate"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/audit"
	"github.com/mcpbridge/mcpbridge/internal/store"
	"github.com/mcpbridge/mcpbridge/tool"
)

// JSON-RPC error codes of refused requests: server-defined, clear of the
// codes the go-sdk and MCP give meanings (-32000 to -32005, -32002,
// -32020 to -32022, -32042).
const (
	CodeDenied      = -32030
	CodeRateLimited = -32031
	CodeUnaudited   = -32032
)

// Options are what a Keeper needs besides the config.
type Options struct {
	Logger *slog.Logger
	// Stdout receives an audit trail configured as "-".
	Stdout io.Writer
	// Client fetches the issuer's metadata and JWKS; nil means a client
	// with a 10 s timeout.
	Client *http.Client
	// BearerToken is serve's --token-env token: a static token named
	// "bearer", accepted whatever the config says.
	BearerToken string
	// Stdio says the gateway serves one local client over stdio, whose
	// caller is "stdio"; Builtin are the gateway's own tool names. Both
	// tell a policy's rules that can never match (Policy.Warnings).
	Stdio   bool
	Builtin []string
	// Refused is called for each request refused, with the audit outcome
	// (denied, rate_limited, unauthenticated, refused): a metric; nil
	// counts nothing.
	Refused func(reason string)
	// Changed is called after a new policy took effect, or what is
	// served without one changed (Require, Unrequire): the gateway's
	// Rescreen; nil does nothing.
	Changed func()
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// StoreObserve is told of each call to the store and its error (nil
	// when it worked); StoreFallback of each call a replica's own rate
	// limit decided because the store failed. Metrics; nil counts nothing.
	StoreObserve  func(op string, err error)
	StoreFallback func()
	// Listed, when set, are the only tools sessions list (serve
	// --code-mode: search_api, describe_api, run_code): a rule granting
	// tools but none of these is warned about, its callers listing
	// nothing while calling by name what it grants.
	Listed []string
	// RefreshUnknownKID bounds the JWKS refreshes that tokens with an
	// unknown kid cause; 0 means one per 10 s.
	RefreshUnknownKID rate.Limit
}

// Keeper is the gateway's Gate, Screen and Authenticate: who is calling
// (static tokens and JWTs), may they (the policy, the rate limits), and
// the record (the audit trail). Apply swaps its config as a whole, so a
// reload applies to open sessions. Safe for concurrent use.
type Keeper struct {
	opts  Options
	now   func() time.Time
	log   *slog.Logger
	salt  []byte
	state atomic.Pointer[state] // nil: no gateway entry
	gens  atomic.Uint64         // numbers the applied configs (state.gen)
	// fallback checks requests while no gateway entry is applied: the
	// --token-env token only, or nothing at all.
	fallback *Verifier
	// required is set once a gateway entry is known to guard the run
	// (Require, or any Apply): from then on, no applied config means no
	// call is served, never every call.
	required atomic.Bool
	// unloaded says why no gateway entry is to load until the config
	// changes (RequireUnloaded, or the last Apply failed while none was
	// in force); nil while one is on its way.
	unloaded atomic.Pointer[string]
	// unauthenticated is set when HTTP requests reach the gateway
	// without Authenticate (NoRequestAuth): a config asking for tokens
	// cannot take effect there.
	unauthenticated atomic.Bool
	// authenticated is set when HTTP requests must pass Authenticate
	// (RequireRequestAuth): a config under which no token passes would
	// refuse them all.
	authenticated atomic.Bool
	mu            sync.Mutex // serializes Apply
}

// state is one applied config.
type state struct {
	gen      uint64 // which applied config it is, from 1
	cfg      Config
	verifier *Verifier
	policy   *Policy
	limits   *limiter
	store    *store.Redis // nil: no store; what limits share
	trail    *audit.Log   // nil: no audit
	// kept says the trail went on in the config that replaced this one
	// (the same file), storeKept the store's client (the same store): its
	// release leaves them open. Guarded by Keeper.mu.
	kept, storeKept bool
	logged          atomic.Bool // the trail's failure was logged
	stop            context.CancelFunc
	metaURL         string
	tools           *tool.Registry // names a tool's server in the audit; may be nil
}

var (
	_ gateway.Gate           = (*Keeper)(nil)
	_ gateway.Screen         = (*Keeper)(nil)
	_ gateway.SharedTasks    = (*Keeper)(nil)
	_ gateway.QuestionWaiter = (*Keeper)(nil)
	_ gateway.Resumer        = (*Keeper)(nil)
)

// NewKeeper returns a Keeper with no config: its Gate lets every call
// through (refuses every call once Require was called), and its
// Authenticate accepts only the --token-env token (none without one),
// until Apply.
func NewKeeper(o Options) *Keeper {
	k := &Keeper{opts: o, now: o.Now, log: o.Logger, salt: make([]byte, 32)}
	if k.now == nil {
		k.now = time.Now
	}
	if k.log == nil {
		k.log = slog.New(slog.DiscardHandler)
	}
	rand.Read(k.salt)
	static := map[string]string{}
	if o.BearerToken != "" {
		static[bearerName] = o.BearerToken
	}
	k.fallback, _ = NewVerifier(context.Background(), Auth{TokenValues: static}, VerifierOptions{}) // no issuer: nothing to fetch
	return k
}

// Apply builds cfg (discovering the issuer, fetching its JWKS, opening the
// audit trail) and, once all of it worked, puts it in place of the
// previous config, which it then closes: a config that cannot be applied
// leaves the old one serving. The JWKS is refreshed until lifetime ends;
// tools, when not nil, names each called tool's server in the audit.
func (k *Keeper) Apply(lifetime context.Context, cfg Config, tools *tool.Registry) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	old := k.state.Load()
	if err := k.authChange(cfg, old != nil); err != nil {
		if old == nil {
			k.unloaded.Store(&notApplied)
		}
		return err
	}
	st, err := k.build(lifetime, cfg, old)
	if err != nil {
		if old == nil {
			k.unloaded.Store(&notApplied)
		}
		return err
	}
	st.tools = tools
	st.gen = k.gens.Add(1)
	k.unloaded.Store(nil)
	k.required.Store(true)
	k.state.Store(st)
	if old != nil && old.trail != nil && old.trail == st.trail {
		old.kept = true
	}
	if old != nil && old.store != nil && old.store == st.store {
		old.storeKept = true
	}
	k.release(old)
	changed := old == nil || !samePolicy(old.cfg, cfg)
	if reach := k.reach(cfg); changed || !sameReach(k.reach(old.cfg), reach) {
		k.warnPolicy(st.policy, reach)
	}
	if changed && k.opts.Changed != nil {
		k.opts.Changed()
	}
	return nil
}

// sameReach reports whether a and b let the same callers call.
func sameReach(a, b Reach) bool {
	return slices.Equal(a.Subjects, b.Subjects) && (a.Subjects == nil) == (b.Subjects == nil) && a.NoGroups == b.NoGroups
}

// reach is who may call under cfg in this run.
func (k *Keeper) reach(cfg Config) Reach {
	return ReachOf(cfg, k.opts.Builtin, Way{Stdio: k.opts.Stdio, Bearer: k.opts.BearerToken != ""})
}

// warnPolicy logs what a new policy hides without saying so, once per
// policy (or callers) taken into use: a reload that keeps both says
// nothing again.
func (k *Keeper) warnPolicy(p *Policy, reach Reach) {
	for _, w := range append(p.Warnings(reach), p.UnlistedWarnings(k.opts.Listed)...) {
		k.log.Warn("gateway policy: "+w.Msg, "line", w.Line, "callers", w.Callers)
	}
}

// ErrAuthNeedsRestart refuses a config that asks for tokens on a gateway
// whose HTTP requests are not authenticated (NoRequestAuth).
var ErrAuthNeedsRestart = errors.New("auth: serve started without a token to require, so its HTTP requests are not authenticated, and a reload cannot begin requiring one: restart serve to apply auth")

// ErrAuthRemovalNeedsRestart refuses a config without identities on a
// gateway whose HTTP requests must carry a token (RequireRequestAuth):
// no token would pass, and the console would fall back to its own token.
var ErrAuthRemovalNeedsRestart = errors.New("auth: serve started requiring a token on its HTTP requests, and a reload cannot stop requiring one (without auth no token passes, so every request would be refused): keep auth in the gateway entry, or restart serve to run without it")

// authChange refuses a config that would change whether HTTP requests
// carry a token (serve decides that at start), saying what the gateway
// does instead: keep the config in force (kept), or, with none, serve no
// call (Require).
func (k *Keeper) authChange(cfg Config, kept bool) error {
	identities := cfg.Auth.JWT() || len(cfg.Auth.Tokens) > 0
	var err error
	var instead string
	switch {
	case k.unauthenticated.Load() && identities:
		err, instead = ErrAuthNeedsRestart, "no gateway entry was in force, so the gateway serves no call until one loads, or this one is removed"
	case k.authenticated.Load() && !identities && k.opts.BearerToken == "":
		err, instead = ErrAuthRemovalNeedsRestart, "no gateway entry is in force, so the gateway serves no call until one with auth loads"
	default:
		return nil
	}
	if kept {
		instead = "the gateway keeps the config it had"
	}
	return fmt.Errorf("%w (%s)", err, instead)
}

// NoRequestAuth tells the Keeper that the gateway's HTTP requests are not
// authenticated by it (serve started with neither --token-env nor auth):
// from then on Apply refuses a config with auth (ErrAuthNeedsRestart),
// which would check the calls' tokens while sessions, streams and limits
// went on as one anonymous client's.
func (k *Keeper) NoRequestAuth() { k.unauthenticated.Store(true) }

// RequireRequestAuth tells the Keeper that the gateway's HTTP requests
// must pass its Authenticate (serve started with auth): from then on
// Apply refuses a config under which no token would pass
// (ErrAuthRemovalNeedsRestart).
func (k *Keeper) RequireRequestAuth() { k.authenticated.Store(true) }

// Require makes the Keeper fail closed: until a config is applied, and
// after one is cleared, its Gate refuses every call and its Screen hides
// everything. serve calls it when its config has a gateway entry, at
// start and at each reload, so an entry that fails to apply never leaves
// the gateway open. Apply implies it.
func (k *Keeper) Require() {
	k.unloaded.Store(nil)
	if !k.required.Swap(true) {
		k.rescreen()
	}
}

// RequireUnloaded is Require for a gateway entry that will not load as
// the config has it (disabled, invalid, removed): why says so, and is
// what the refusals say while no config is in force. Requests are then
// authenticated as without an entry (the --token-env token), rather than
// told the gateway is starting, and the Gate refuses their calls.
func (k *Keeper) RequireUnloaded(why string) {
	k.unloaded.Store(&why)
	if !k.required.Swap(true) {
		k.rescreen()
	}
}

// Unrequire undoes Require while no config was ever applied: the gateway
// entry that asked for it was removed before it loaded, so the gateway is
// open again as it was before the entry came. It reports whether it was
// required until then. Once a config was applied, the Keeper stays
// required: removing that entry does not open the gateway (Clear).
func (k *Keeper) Unrequire() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gens.Load() > 0 || !k.required.Swap(false) {
		return false
	}
	k.unloaded.Store(nil)
	k.rescreen()
	return true
}

// rescreen tells the sessions that what the Screen hides changed while
// no config is applied (Require, Unrequire); with one, the config decides.
func (k *Keeper) rescreen() {
	if k.state.Load() == nil && k.opts.Changed != nil {
		k.opts.Changed()
	}
}

// Required reports whether the Keeper fails closed without a config
// (Require, or a config applied once): with none in force, it refuses
// every call.
func (k *Keeper) Required() bool { return k.required.Load() }

// Clear removes the config (its entry was removed) if it is still cfg.
// The gateway then serves no call (Require): removing the entry that
// guarded a running gateway does not open it.
func (k *Keeper) Clear(cfg *Config) {
	k.mu.Lock()
	defer k.mu.Unlock()
	st := k.state.Load()
	if st == nil || &st.cfg != cfg {
		return
	}
	k.log.Info("gateway entry stopped: until one is applied again, the gateway serves no call")
	k.state.Store(nil)
	k.release(st)
	if k.opts.Changed != nil {
		k.opts.Changed()
	}
}

// QuestionWait is the applied entry's questionWaitMs, 0 without one
// (gateway.QuestionWaiter).
func (k *Keeper) QuestionWait() time.Duration {
	if cfg := k.Current(); cfg != nil {
		return cfg.QuestionWait
	}
	return 0
}

// Current returns the applied config, nil when none.
func (k *Keeper) Current() *Config {
	if st := k.state.Load(); st != nil {
		return &st.cfg
	}
	return nil
}

func (k *Keeper) release(st *state) {
	if st == nil {
		return
	}
	st.stop()
	if st.trail != nil && !st.kept {
		if err := st.trail.Close(); err != nil {
			k.log.Warn("gateway audit: closing the trail", "error", err)
		}
	}
	if st.store != nil && !st.storeKept {
		if err := st.store.Close(); err != nil {
			k.log.Warn("gateway store: closing", "error", err)
		}
	}
}

// sameAuth reports whether a and b authenticate callers alike.
func sameAuth(a, b Auth) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb) && maps.Equal(a.TokenValues, b.TokenValues) // the values are not encoded
}

func samePolicy(a, b Config) bool {
	ja, _ := json.Marshal(a.Policy)
	jb, _ := json.Marshal(b.Policy)
	return a.HasPolicy == b.HasPolicy && string(ja) == string(jb)
}

// build makes the state of cfg, replacing old (nil: none). A trail to
// the file old writes is old's, which goes on: two writers of one file
// would each chain to the line they last saw, and break the chain.
func (k *Keeper) build(lifetime context.Context, cfg Config, old *state) (*state, error) {
	a := cfg.Auth
	if k.opts.BearerToken != "" {
		if _, taken := a.TokenValues[bearerName]; taken {
			return nil, fmt.Errorf("gateway auth: auth.tokens names a token %q, which is the identity of serve's --token-env token: name it otherwise", bearerName)
		}
		a.TokenValues = withToken(a.TokenValues, bearerName, k.opts.BearerToken)
	}
	ctx, stop := context.WithCancel(lifetime)
	st := &state{cfg: cfg, stop: stop, metaURL: metadataURL(cfg.Auth.Audience)}
	var err error
	if st.verifier, err = NewVerifier(ctx, a, VerifierOptions{Client: k.opts.Client, Logger: k.log, Now: k.now, RefreshUnknownKID: k.refreshLimiter()}); err != nil {
		stop()
		return nil, err
	}
	if st.policy, err = NewPolicy(cfg.Policy, cfg.HasPolicy); err != nil {
		stop()
		return nil, err
	}
	switch {
	case cfg.Audit == nil:
	case old != nil && old.trail != nil && old.cfg.Audit != nil && old.cfg.Audit.File == cfg.Audit.File:
		st.trail = old.trail
	default:
		if st.trail, err = audit.Open(cfg.Audit.File, k.opts.Stdout); err != nil {
			stop()
			return nil, fmt.Errorf("gateway audit: %w", err)
		}
	}
	switch {
	case cfg.Store == nil:
	case old != nil && old.store != nil && sameConnection(*old.cfg.Store, *cfg.Store):
		// Its calls in flight go on: closed, they would fail.
		st.store = old.store
	default:
		if st.store, err = store.OpenRedis(ctx, redisOptions(*cfg.Store, k.opts.StoreObserve)); err != nil {
			st.kept = old != nil && st.trail == old.trail // old's, still in force
			k.release(st)
			return nil, fmt.Errorf("gateway store: %w", err)
		}
	}
	if cfg.RateLimit != nil {
		st.limits = k.limiter(*cfg.RateLimit, st.store)
	}
	return st, nil
}

// redisOptions are the options of cfg's Redis.
// sameConnection reports whether a and b open the same client: the same
// URL, key prefix and TLS.
func sameConnection(a, b Store) bool {
	var ta, tb StoreTLS
	if a.TLS != nil {
		ta = *a.TLS
	}
	if b.TLS != nil {
		tb = *b.TLS
	}
	return a.URL == b.URL && a.KeyPrefix == b.KeyPrefix && ta.ServerName == tb.ServerName && bytes.Equal(ta.CA, tb.CA)
}

func redisOptions(cfg Store, observe func(string, error)) store.RedisOptions {
	o := store.RedisOptions{URL: cfg.URL, KeyPrefix: cfg.KeyPrefix, Observe: observe}
	if cfg.TLS != nil {
		o.CA, o.ServerName = cfg.TLS.CA, cfg.TLS.ServerName
	}
	return o
}

// Tasks implements gateway.SharedTasks: the applied config's store and
// task lease; nil without a store (tasks stay in the process).
func (k *Keeper) Tasks() (gateway.TaskStore, time.Duration) {
	st := k.state.Load()
	if st == nil || st.store == nil {
		return nil, 0
	}
	return st.store, st.cfg.Store.TaskLease
}

// SessionOwners implements gateway.SharedSessions: the applied config's
// store and advertised address; nil without a store (sessions stay in
// the process).
func (k *Keeper) SessionOwners() (gateway.SessionOwners, string) {
	st := k.state.Load()
	if st == nil || st.store == nil {
		return nil, ""
	}
	return st.store, st.cfg.Store.Advertise
}

// limiter is a new config's rate limiter: shared by the replicas through
// the store when there is one.
func (k *Keeper) limiter(cfg RateLimit, shared *store.Redis) *limiter {
	l := newLimiter(cfg, k.now)
	l.log = k.log
	if shared != nil {
		l.shared = shared
	}
	if k.opts.StoreFallback != nil {
		l.fellBack = k.opts.StoreFallback
	}
	return l
}

// refreshLimiter is a new config's bound on unknown-kid refreshes.
func (k *Keeper) refreshLimiter() *rate.Limiter {
	if k.opts.RefreshUnknownKID == 0 {
		return nil
	}
	return rate.NewLimiter(k.opts.RefreshUnknownKID, 1)
}

func withToken(m map[string]string, name, tok string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for n, v := range m {
		out[n] = v
	}
	out[name] = tok
	return out
}

// Authenticate is the gateway's Options.Authenticate: a request's
// identity, or a *gateway.Challenge saying how to refuse it.
func (k *Keeper) Authenticate(r *http.Request) (string, error) {
	st := k.state.Load()
	if k.starting(st) {
		// No token can be judged before the entry's tokens and issuer
		// load: a 401 would tell a client to drop a token that will pass.
		// (An entry that will not load, or was removed, leaves the
		// --token-env token in use.)
		k.log.Debug("HTTP request refused: the gateway entry has not loaded yet", "remote", r.RemoteAddr)
		return "", &gateway.Challenge{Status: http.StatusServiceUnavailable, Err: errStarting}
	}
	if st == nil && k.required.Load() && k.opts.BearerToken == "" {
		// No entry in force, and no --token-env token to judge by: a 401
		// would tell a client to drop a token that passes once it loads.
		k.log.Debug("HTTP request refused: no gateway entry is in force", "remote", r.RemoteAddr)
		return "", &gateway.Challenge{Status: http.StatusServiceUnavailable, Err: errors.New(k.absent())}
	}
	v := k.fallback
	if st != nil {
		v = st.verifier
	}
	p, err := v.Request(r)
	if err == nil {
		return p.Name, nil
	}
	return "", k.challenge(st, r, err)
}

// challenge is the refusal of a request whose token failed with err, as
// the MCP authorization spec has it: 401 with the resource metadata's URL,
// or 403 insufficient_scope naming the scopes for step-up.
func (k *Keeper) challenge(st *state, r *http.Request, err error) error {
	k.log.Info("HTTP request refused: authentication failed", "error", err, "remote", r.RemoteAddr)
	var params []string
	status := http.StatusUnauthorized
	var se *ScopeError
	switch {
	case errors.As(err, &se):
		status = http.StatusForbidden
		params = append(params, `error="insufficient_scope"`, fmt.Sprintf("scope=%q", strings.Join(st.cfg.Auth.Scopes, " ")))
	case !errors.Is(err, ErrNoToken):
		params = append(params, `error="invalid_token"`)
	}
	if st != nil && st.metaURL != "" && st.cfg.Auth.JWT() {
		params = append([]string{fmt.Sprintf("resource_metadata=%q", st.metaURL)}, params...)
	} else {
		params = append([]string{`realm="mcpbridge"`}, params...)
	}
	return &gateway.Challenge{Status: status, WWWAuthenticate: "Bearer " + strings.Join(params, ", "), Err: err}
}

// principal is who a call is from, by its request's headers: nil headers
// (stdio) are the local user "stdio"; without authentication, everyone is
// "anonymous".
func (st *state) principal(ctx context.Context, header http.Header) (*Principal, error) {
	if header == nil {
		return &Principal{Name: stdioName}, nil
	}
	if len(st.verifier.static) == 0 && !st.cfg.Auth.JWT() {
		return &Principal{Name: "anonymous"}, nil // whatever header it sent: nothing checks it
	}
	return st.verifier.Verify(ctx, header.Get("Authorization"))
}

// Screen implements gateway.Screen: what the caller's policy lets it see.
// The caller is authenticated here, once; each decision is the policy in
// force when it is made, so a screen the gateway keeps (a subscription's)
// follows a reloaded policy. After a reload that changed the
// authentication the caller is authenticated again, by its request's
// header, as a new request would be: a token that no longer passes sees
// nothing.
func (k *Keeper) Screen(ctx context.Context, header http.Header, _ string) func(gateway.Offer, string) bool {
	s := &screen{k: k, header: authorizationOf(header)}
	s.authenticate(ctx, k.state.Load())
	return s.may
}

// screen is one caller's Screen. It keeps what authenticates its caller
// again, and of the config it was authenticated under only what says
// whether a later one authenticates alike: a screen kept for a
// subscription holds neither the request's other headers nor a config
// that was replaced.
type screen struct {
	k      *Keeper
	header http.Header // the request's Authorization only; nil off HTTP

	mu   sync.Mutex
	gen  uint64     // the config the caller was authenticated under (state.gen); 0: none
	auth Auth       // that config's authentication
	who  *Principal // nil: not authenticated
}

// authorizationOf is h reduced to what authenticates its caller.
func authorizationOf(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	return http.Header{"Authorization": slices.Clone(h.Values("Authorization"))}
}

// authenticate authenticates the caller under st, when st has a policy
// to decide by (without one, no decision needs the caller). s.mu must be
// held or s not yet shared.
func (s *screen) authenticate(ctx context.Context, st *state) {
	s.gen, s.who = 0, nil
	if st == nil || !st.cfg.HasPolicy {
		return
	}
	s.gen, s.auth = st.gen, st.cfg.Auth
	if who, err := st.principal(ctx, s.header); err == nil {
		s.who = who
	}
}

// reauthWait bounds authenticating a kept screen's caller again, which
// may fetch an issuer's keys, on the path of an update or a list.
const reauthWait = 2 * time.Second

func (s *screen) may(kind gateway.Offer, name string) bool {
	st := s.k.state.Load()
	switch {
	case st == nil:
		return !s.k.required.Load()
	case !st.cfg.HasPolicy:
		return true
	}
	s.mu.Lock()
	if s.gen != st.gen {
		if s.gen != 0 && sameAuth(s.auth, st.cfg.Auth) {
			s.gen = st.gen
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), reauthWait) // not the request's: it may be over
			s.authenticate(ctx, st)
			cancel()
		}
	}
	if s.who != nil && !s.who.validAt(s.k.now()) {
		s.who = nil // a kept screen outlives its request, not its token
	}
	who := s.who
	s.mu.Unlock()
	return who != nil && st.policy.Decide(who, kindOf(kind), name).Allow
}

func kindOf(o gateway.Offer) Target {
	switch o {
	case gateway.OfferPrompt:
		return Prompt
	case gateway.OfferResource:
		return Resource
	}
	return Tool
}

// Enter implements gateway.Gate: the policy decides, the rate limit
// admits, and the audit trail records the call when it ends (or its
// refusal at once).
func (k *Keeper) Enter(ctx context.Context, c gateway.Call) (context.Context, func(gateway.Outcome) error, error) {
	st := k.state.Load()
	if st == nil {
		return k.enterUnguarded(ctx)
	}
	rec := k.record(st, c)
	rec.Parent = parentID(ctx, c)
	who, err := st.principal(ctx, c.Header)
	if err != nil {
		return nil, nil, k.refuse(st, rec, "unauthenticated", err.Error(), unauthenticated(st, err))
	}
	rec.Identity = who.Name
	kind, subject, bucket := asked(c)
	if d := st.policy.Decide(who, kind, subject); !d.Allow {
		// What the policy denies is in none of the caller's lists
		// (Screen): a tool call, prompt get or resource read of it is
		// answered as one of an item that does not exist, whatever else
		// would refuse it (a trail that cannot be written), so the caller
		// learns nothing of it; the audit records the denial.
		return nil, nil, k.refuse(st, rec, "denied", ruleReason(d, kind, subject), gateway.ErrHidden)
	}
	if k.unaudited(st, rec) {
		return nil, nil, &jsonrpc.Error{Code: CodeUnaudited, Message: unauditedMsg}
	}
	if err := k.admit(ctx, st, who.Name, bucket); err != nil {
		return nil, nil, k.refuse(st, rec, "rate_limited", err.Message, err)
	}
	if st.cfg.HasPolicy {
		// A search run by this call finds only what the caller may use.
		ctx = tool.WithVisible(ctx, func(name string) bool { return st.policy.Decide(who, Tool, name).Allow })
	}
	start := k.now()
	ctx, link := withLink(ctx)
	return ctx, func(o gateway.Outcome) error {
		if o.EndedElsewhere {
			return nil // the replica that ended its task wrote its line (Resume)
		}
		rec.Duration = float64(k.now().Sub(start).Microseconds()) / 1000
		rec.Outcome = outcome(o)
		rec.Call = link.made()
		return k.write(st, rec)
	}, nil
}

// unauthenticated is the refusal of a caller the Gate could not
// authenticate (err): under a policy, whose Screen shows such a caller
// nothing, an item of which it asks is answered as one that does not
// exist (ErrHidden), so that it cannot tell the gateway's items from
// names it made up; without one, nothing is hidden, and it is told why.
func unauthenticated(st *state, err error) error {
	if st.cfg.HasPolicy {
		return gateway.ErrHidden
	}
	return &jsonrpc.Error{Code: CodeDenied, Message: "the caller could not be authenticated: " + err.Error()}
}

// asked is what c asks for: its kind, the name the policy decides on,
// and the name of its per-tool bucket. A tool or prompt is asked for by
// public name; a resource by its server, for both: its URI is the
// caller's to choose (a template expands to any number), so a bucket per
// URI would give each new URI a full one.
func asked(c gateway.Call) (kind Target, subject, bucket string) {
	switch c.Method {
	case gateway.MethodGetPrompt:
		return Prompt, c.Public, c.Public
	case gateway.MethodReadResource:
		return Resource, c.Server, gateway.MethodReadResource + " " + c.Server // no public name holds a space
	}
	return Tool, c.Public, c.Public
}

// Resume implements gateway.Resumer: the audit line of a call this
// replica follows to its end for identity, begun on a replica that
// stopped (which audited its part, handed_over or failed), or of one it
// ends failed as the replica that ran it was lost (which audited none).
func (k *Keeper) Resume(c gateway.Call, identity string) func(gateway.Outcome) {
	st := k.state.Load()
	if st == nil {
		return func(gateway.Outcome) {}
	}
	rec := k.record(st, c)
	rec.Identity, rec.Reason = identity, "taken over from the replica that began it"
	start := k.now()
	return func(o gateway.Outcome) {
		rec.Duration = float64(k.now().Sub(start).Microseconds()) / 1000
		rec.Outcome = outcome(o)
		if o.Lost {
			rec.Reason = lostReason
		}
		_ = k.write(st, rec) // a task's end: its client polls for it, nothing to hold back
	}
}

// lostReason is the reason in the line of a task's call whose replica was
// lost, written by the replica that ended the task failed.
const lostReason = "the gateway replica running this task was lost (its lease lapsed) before the call ended; ended failed by another replica"

// enterUnguarded is Enter without an applied config: every call passes
// when no gateway entry guards the run, none when one should (Require).
func (k *Keeper) enterUnguarded(ctx context.Context) (context.Context, func(gateway.Outcome) error, error) {
	if !k.required.Load() {
		return ctx, func(gateway.Outcome) error { return nil }, nil
	}
	if k.opts.Refused != nil {
		k.opts.Refused("refused")
	}
	return nil, nil, &jsonrpc.Error{Code: CodeDenied, Message: k.absent()}
}

// starting reports whether the gateway entry that guards the run has not
// loaded yet and is on its way (st is the config in force).
func (k *Keeper) starting(st *state) bool {
	return st == nil && k.required.Load() && k.gens.Load() == 0 && k.unloaded.Load() == nil
}

// absent is the refusal of every call while the gateway entry that guards
// the run is not in force: that it is starting, or why it is not in
// force when that is known.
func (k *Keeper) absent() string {
	if k.starting(nil) {
		return errStarting.Error()
	}
	why := "see serve's log"
	if u := k.unloaded.Load(); u != nil {
		why = *u
	}
	return "the config's gateway entry is not in force (" + why + "), so the gateway serves no calls"
}

// notApplied is why no entry is in force after Apply failed with none.
var notApplied = "it could not be applied: serve's log and /healthz say why"

// errStarting is the refusal of every request before the gateway entry
// first loaded.
var errStarting = errors.New("the gateway is starting: its gateway entry has not loaded yet, so no request is served; retry shortly (if this lasts, serve's log says why the entry does not load)")

// Refusing says why the Gate refuses every call now: a gateway entry
// guards the run (Require) and none is in force (absent: it is starting,
// or why not), or its audit trail cannot take a line and it fails closed
// (checked now, without writing one: a probe asking it puts the gateway
// back once the trail can be written, with no call needed to find out).
// "" otherwise.
func (k *Keeper) Refusing() string {
	if k.state.Load() == nil && k.required.Load() {
		return k.absent()
	}
	return k.Unaudited()
}

// Unaudited says why nothing done now could have its audit line: the
// trail cannot take one (checked now, without writing one) and fails
// closed. "" when a line can be written, under failOpen, and without a
// trail. A console action asks it first: done, it could not be undone
// when its line then failed.
func (k *Keeper) Unaudited() string {
	st := k.state.Load()
	if st == nil || st.trail == nil || st.cfg.Audit.FailOpen {
		return ""
	}
	if err := st.trail.Check(); err != nil {
		return unauditedMsg + ": " + err.Error()
	}
	return ""
}

// unauditedMsg is the refusal of every call while the trail cannot be
// written.
const unauditedMsg = "the gateway cannot write its audit trail, so it serves no calls (audit.failOpen is false)"

// ruleReason is a denial's audit reason: which rule decided (the first
// that grants and applies, which may be about other names: first match),
// and what it did not allow.
func ruleReason(d Decision, kind Target, name string) string {
	what := name
	if kind == Resource {
		what = "the resources of server " + name
	}
	switch {
	case d.Line == 0:
		return "no policy rule that grants applies to this caller, so it may use nothing (" + what + ")"
	case d.Denied:
		return fmt.Sprintf("policy rule at line %d denies %s", d.Line, what)
	}
	return fmt.Sprintf("policy rule at line %d (the first rule that grants and applies to this caller) does not allow %s", d.Line, what)
}

func outcome(o gateway.Outcome) string {
	switch {
	case o.HandedOver:
		return "handed_over"
	case o.Failed:
		return "failed"
	case o.IsError:
		return "error"
	}
	return "ok"
}

// admit applies the rate limit, per identity or per identity and bucket
// (asked); the error says when to retry.
func (k *Keeper) admit(ctx context.Context, st *state, identity, bucket string) *jsonrpc.Error {
	if st.limits == nil {
		return nil
	}
	key := identity
	if st.limits.cfg.PerTool {
		key += "\x00" + bucket
	}
	ok, wait := st.limits.allow(ctx, key)
	if ok {
		return nil
	}
	retry := wait.Round(time.Millisecond)
	data, _ := json.Marshal(map[string]any{"retryAfterMs": retry.Milliseconds()})
	return &jsonrpc.Error{Code: CodeRateLimited, Message: fmt.Sprintf("rate limit %s for %q reached; retry in %v", st.limits.cfg.Spec, identity, retry), Data: data}
}

// refuse records a refusal and returns err (nil: only record it).
func (k *Keeper) refuse(st *state, rec audit.Entry, outcome, reason string, err error) error {
	rec.Outcome, rec.Reason = outcome, reason
	_ = k.write(st, rec) // refused either way
	if err != nil && k.opts.Refused != nil {
		k.opts.Refused(outcome)
	}
	return err
}

// record is the audit entry of c so far.
func (k *Keeper) record(st *state, c gateway.Call) audit.Entry {
	e := audit.Entry{Time: k.now().UTC(), Session: c.Session, Client: c.Client, Method: cmpOr(c.Method, "tools/call"), Name: c.Public, Server: c.Server, TraceID: traceID(c.Meta)}
	if e.Server == "" && c.Method == "" && st.tools != nil {
		if t, ok := st.tools.Get(c.Public); ok {
			e.Server = t.Origin.Server
		}
	}
	if st.cfg.Audit != nil {
		k.args(&e, st.cfg.Audit.Args, c.Arguments)
	}
	return e
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// args puts the call's arguments in e as mode says: their keys, an HMAC
// of the bytes under the process's random salt, or the values.
func (k *Keeper) args(e *audit.Entry, mode string, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	switch mode {
	case "keys":
		e.ArgKeys = argKeys(raw)
	case "hash":
		mac := hmac.New(sha256.New, k.salt)
		mac.Write(raw)
		e.ArgsHash = hex.EncodeToString(mac.Sum(nil))
	case "full":
		e.Args = raw
	}
}

// traceID is the trace id of a W3C traceparent in _meta, "" without one.
func traceID(meta map[string]any) string {
	tp, _ := meta["traceparent"].(string)
	if strings.Count(tp, "-") != 3 { // version-traceid-parentid-flags
		return ""
	}
	_, rest, _ := strings.Cut(tp, "-")
	if id, _, _ := strings.Cut(rest, "-"); len(id) == 32 {
		return id
	}
	return ""
}

// unaudited reports whether a call must be refused because the trail
// cannot be written (fail closed): its last write failed and failOpen is
// off. The refusal is written too: once a line can be written again,
// calls are served again. The failure is logged once per outage.
func (k *Keeper) unaudited(st *state, rec audit.Entry) bool {
	if st.trail == nil {
		return false
	}
	err := st.trail.Err()
	if err == nil {
		if st.logged.Swap(false) {
			k.log.Info("gateway audit: the trail is written again")
		}
		return false
	}
	if !st.logged.Swap(true) {
		k.log.Error("gateway audit: the trail cannot be written", "error", err, "failOpen", st.cfg.Audit.FailOpen)
	}
	if st.cfg.Audit.FailOpen {
		return false
	}
	k.refuse(st, rec, "refused", "the audit trail could not be written", nil)
	return true
}

// write appends e to st's trail (or the one in force, st's being
// replaced meanwhile). The error, when the line was not written and the
// trail fails closed (failOpen off), is the refusal the call gets instead
// of its result: answered, it would have no line. The failure is also
// seen by the next call (unaudited).
func (k *Keeper) write(st *state, e audit.Entry) error {
	if st.trail == nil {
		return nil // no audit
	}
	for range 3 {
		err := st.trail.Write(e)
		if !errors.Is(err, audit.ErrClosed) {
			if err != nil && !st.cfg.Audit.FailOpen {
				return &jsonrpc.Error{Code: CodeUnaudited, Message: "the gateway could not write the call's audit line, so it does not answer it (audit.failOpen is false): " + err.Error()}
			}
			return nil
		}
		// The config was replaced while the call ran, its trail by one
		// to another file: the call's end goes to the trail in force.
		if st = k.state.Load(); st == nil || st.trail == nil {
			break
		}
	}
	k.log.Warn("gateway audit: a call's line was not written: the config that admitted it was replaced by one without a trail", "name", e.Name, "identity", e.Identity, "outcome", e.Outcome)
	return nil
}

// StoreHealth is the applied config's store as /healthz reports it: its
// address and whether it answers a ping now (err). present is false
// without a store: the state then lives in the process and needs no
// check.
func (k *Keeper) StoreHealth(ctx context.Context) (addr string, err error, present bool) {
	st := k.state.Load()
	if st == nil || st.store == nil {
		return "", nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	return st.store.Addr(), st.store.Ping(ctx), true
}

var _ gateway.SharedSessions = (*Keeper)(nil)
