package gatewayauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// MaxTokenBytes bounds a bearer token: a longer one is refused before it
// is parsed (a JWT of a real issuer is a few KiB at most).
const MaxTokenBytes = 16 << 10

// Leeway is the clock skew allowed on exp, nbf and iat.
const Leeway = 30 * time.Second

// refreshTimeout bounds a JWKS refresh for an unknown kid, the wait for
// the refresh limiter included.
const refreshTimeout = 10 * time.Second

// algorithms are the signature algorithms accepted: asymmetric only, so a
// public key can never be used as an HMAC secret, and never "none".
var algorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Principal is who a request is from.
type Principal struct {
	// Name is the identity: the token's sub, or a static token's name.
	Name   string
	Groups []string
	Scopes []string
	Claims map[string]any
	// Expiry is when the token stops being valid; zero for a static one.
	Expiry time.Time
}

// validAt reports whether p's token is still good at now: before its
// expiry and the leeway, or forever for a static one.
func (p *Principal) validAt(now time.Time) bool {
	return p.Expiry.IsZero() || now.Before(p.Expiry.Add(Leeway))
}

// Errors of Verify; a *ScopeError means authenticated but short of scopes.
var (
	ErrNoToken  = errors.New(`a valid "Authorization: Bearer <token>" header is required`)
	ErrTooLarge = fmt.Errorf("the bearer token is over %d bytes", MaxTokenBytes)
)

// ScopeError is a valid token without the scopes the gateway requires.
type ScopeError struct{ Missing []string }

func (e *ScopeError) Error() string {
	return "the token lacks the required scope " + strings.Join(e.Missing, " ")
}

// Verifier checks bearer tokens: named static tokens, and JWTs of one
// issuer signed by a key of its JWKS. Safe for concurrent use.
type Verifier struct {
	auth   Auth
	static map[[sha256.Size]byte]string
	keys   keyfunc.Keyfunc // nil without JWT
	parser *jwt.Parser
	now    func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]*Principal // valid JWTs, by hash, bounded
}

// maxCached bounds the verified tokens remembered.
const maxCached = 4096

// VerifierOptions are what a Verifier needs besides its config.
type VerifierOptions struct {
	// Client fetches discovery and the JWKS; nil means a client with a
	// 10 s timeout.
	Client *http.Client
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// RefreshUnknownKID bounds the JWKS refreshes an unknown kid causes;
	// nil means one per 10 s.
	RefreshUnknownKID *rate.Limiter
}

// NewVerifier builds a Verifier. With an issuer, it discovers the JWKS URL
// (RFC 8414, then OpenID Connect discovery) unless a.JWKSURL is set, and
// fetches the keys; the JWKS is refreshed hourly and when an unknown kid
// appears, until ctx ends. A JWKS that cannot be fetched later leaves the
// cached keys in use (logged).
func NewVerifier(ctx context.Context, a Auth, o VerifierOptions) (*Verifier, error) {
	v := &Verifier{auth: a, static: map[[sha256.Size]byte]string{}, now: o.Now, cache: map[[sha256.Size]byte]*Principal{}}
	if v.now == nil {
		v.now = time.Now
	}
	for _, name := range slices.Sorted(maps.Keys(a.TokenValues)) {
		sum := sha256.Sum256([]byte(a.TokenValues[name]))
		if other, dup := v.static[sum]; dup {
			return nil, sharedToken(other, name)
		}
		v.static[sum] = name
	}
	if !a.JWT() {
		return v, nil
	}
	client := o.Client
	if client == nil {
		client = defaultClient()
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	jwks := a.JWKSURL
	if jwks == "" {
		var err error
		if jwks, err = discoverJWKS(ctx, a.Issuer, client); err != nil {
			return nil, fmt.Errorf("gateway auth: discovering the JWKS of %s (or set auth.jwksUrl): %w", a.Issuer, err)
		}
	}
	limiter := o.RefreshUnknownKID
	if limiter == nil {
		limiter = rate.NewLimiter(rate.Every(10*time.Second), 1)
	}
	strict := false
	kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{jwks}, keyfunc.Override{
		Client:                    client,
		NoErrorReturnFirstHTTPReq: &strict,
		RefreshUnknownKID:         limiter,
		// jwkset bounds the refresh itself by this too, not only the
		// wait for the limiter: at 1 ms a refresh over any real network
		// never finished, and a rotated key was refused until the hourly
		// refresh. A flood waits no longer for it: a wait that would end
		// past this fails at once (rate.Limiter.Wait), so at most one
		// request per refresh interval waits, at most this long.
		RateLimitWaitMax: refreshTimeout,
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) {
				log.Warn("gateway auth: refreshing the JWKS failed; the cached keys stay in use", "url", u, "error", err)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("gateway auth: fetching the JWKS %s: %w", jwks, err)
	}
	v.keys = kf
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(algorithms),
		jwt.WithIssuer(a.Issuer),
		jwt.WithAudience(a.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(Leeway),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(v.now),
	)
	return v, nil
}

// bearerName is the identity of serve's --token-env token.
const bearerName = "bearer"

// stdioName is the identity of serve --stdio's caller, the local user.
const stdioName = "stdio"

// sharedToken refuses two names of one token value, whose holder would
// be either (a different one each start); the value is never shown.
func sharedToken(a, b string) error {
	msg := fmt.Sprintf("gateway auth: the static tokens %q and %q have the same value, so whoever holds it would be either: give each identity its own token", a, b)
	if a == bearerName || b == bearerName {
		msg += fmt.Sprintf(" (%q is serve's --token-env token)", bearerName)
	}
	return errors.New(msg)
}

// Request returns who r is from, by its Authorization header.
func (v *Verifier) Request(r *http.Request) (*Principal, error) {
	return v.Verify(r.Context(), r.Header.Get("Authorization"))
}

// Verify checks an Authorization header value.
func (v *Verifier) Verify(ctx context.Context, header string) (*Principal, error) {
	if len(header) > MaxTokenBytes+len("Bearer ") {
		return nil, ErrTooLarge
	}
	scheme, tok, ok := strings.Cut(header, " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return nil, ErrNoToken
	}
	sum := sha256.Sum256([]byte(tok))
	if name, ok := v.staticName(sum); ok {
		return &Principal{Name: name}, nil
	}
	if v.keys == nil {
		return nil, ErrNoToken
	}
	p, err := v.jwt(ctx, tok, sum)
	if err != nil {
		return nil, err
	}
	if missing := missingScopes(v.auth.Scopes, p.Scopes); len(missing) > 0 {
		return p, &ScopeError{Missing: missing}
	}
	return p, nil
}

// staticName looks sum up among the static tokens, comparing every one in
// constant time.
func (v *Verifier) staticName(sum [sha256.Size]byte) (string, bool) {
	found := ""
	for k, name := range v.static {
		if subtle.ConstantTimeCompare(k[:], sum[:]) == 1 {
			found = name
		}
	}
	return found, found != ""
}

func (v *Verifier) jwt(ctx context.Context, tok string, sum [sha256.Size]byte) (*Principal, error) {
	v.mu.Lock()
	p, ok := v.cache[sum]
	v.mu.Unlock()
	if ok && p.validAt(v.now()) {
		return p, nil
	}
	// The key is looked up (and the JWKS refreshed for an unknown kid)
	// under a context the request's end does not cancel: a refresh that
	// spent the limiter must finish, or a caller cancelling its requests
	// could spend every refresh allowed and keep a rotated key refused.
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
	defer cancel()
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(tok, claims, v.keys.KeyfuncCtx(kctx)); err != nil {
		return nil, fmt.Errorf("invalid token: %w", err)
	}
	if cnf, _ := claims["cnf"].(map[string]any); len(cnf) > 0 {
		// A sender-constrained token (DPoP's cnf.jkt, mTLS's cnf.x5t#S256)
		// is good only with its proof, which the gateway does not check:
		// taken as a bearer token, a stolen one would work (RFC 9449 §7.2).
		return nil, errors.New("invalid token: it is sender-constrained (a cnf claim), and the gateway accepts bearer tokens only; ask the identity provider for a token without DPoP or certificate binding for this audience")
	}
	p, err := principalOf(claims, v.auth.GroupsClaim)
	if err != nil {
		return nil, err
	}
	if err := v.notReserved(p.Name); err != nil {
		return nil, err
	}
	v.remember(sum, p)
	return p, nil
}

// notReserved refuses sub when it names a static token, or stdioName:
// identities are names, so its holder would be that token's identity (its
// grants, sessions, tasks and audit lines), or get the grants of serve
// --stdio's local user, and an issuer whose users choose their subject
// would hand it to whoever signs up under the name.
func (v *Verifier) notReserved(sub string) error {
	if sub == stdioName {
		return fmt.Errorf("invalid token: its sub %q is the identity of serve --stdio's local user, whose grants its holder would get; a JWT cannot be that user", sub)
	}
	for _, name := range v.static {
		if name == sub {
			msg := fmt.Sprintf("invalid token: its sub %q is the name of a static token of the gateway", sub)
			if name == bearerName {
				msg += " (serve's --token-env token)"
			}
			return errors.New(msg + ", whose identity its holder would take; name the static token so that no subject of the issuer is the same")
		}
	}
	return nil
}

// remember caches p, dropping expired entries (then any) when full.
func (v *Verifier) remember(sum [sha256.Size]byte, p *Principal) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) >= maxCached {
		now := v.now()
		for k, c := range v.cache {
			if now.After(c.Expiry) {
				delete(v.cache, k)
			}
		}
		for k := range v.cache {
			if len(v.cache) < maxCached {
				break
			}
			delete(v.cache, k)
		}
	}
	v.cache[sum] = p
}

func principalOf(claims jwt.MapClaims, groupsClaim string) (*Principal, error) {
	sub, _ := claims.GetSubject()
	if sub == "" {
		return nil, errors.New("invalid token: it has no sub claim")
	}
	exp, _ := claims.GetExpirationTime()
	p := &Principal{Name: sub, Claims: claims, Expiry: exp.Time}
	// A string groups claim is one group, whose name may hold spaces; a
	// string scope or scp is scopes separated by spaces (RFC 8693 §4.2).
	p.Groups = claimList(claims[groupsClaim], oneName)
	if s, ok := claims["scope"].(string); ok {
		p.Scopes = strings.Fields(s)
	} else {
		p.Scopes = claimList(claims["scp"], strings.Fields)
	}
	return p, nil
}

// claimList reads a claim that is a list of strings, or one string that
// split reads.
func claimList(v any, split func(string) []string) []string {
	switch v := v.(type) {
	case string:
		return split(v)
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// oneName is s as a list of one name ("" names none).
func oneName(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func missingScopes(required, have []string) []string {
	var out []string
	for _, s := range required {
		if !slices.Contains(have, s) {
			out = append(out, s)
		}
	}
	return out
}
