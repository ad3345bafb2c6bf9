package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/audit"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// The identity row: what the gateway entry (JWT auth, a policy, the audit
// trail) adds to a call over HTTP, and its parts on their own.

// identityResults is what the identity row measured.
type identityResults struct {
	static, full  []time.Duration // per-call latencies: static token; JWT, rules and audit
	noAudit       []time.Duration // JWT and rules, no audit
	firstVerify   time.Duration   // per token, first seen: signature checked against the cached JWKS
	cachedVerify  time.Duration   // per request, a token seen before
	auditPerSec   float64
	auditLines    int
	rules, tokens int
}

// jwksIssuer serves one RSA key's JWKS on loopback and signs tokens.
type jwksIssuer struct {
	key *rsa.PrivateKey
	srv *http.Server
	url string
}

func newJWKSIssuer() (*jwksIssuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	body, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}}})
	is := &jwksIssuer{key: key, url: "http://" + ln.Addr().String()}
	is.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }), ReadHeaderTimeout: time.Second}
	go is.srv.Serve(ln)
	return is, nil
}

func (is *jwksIssuer) token(sub, aud string, n int) (string, error) {
	now := time.Now()
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": is.url, "aud": aud, "sub": sub, "jti": fmt.Sprint(n),
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "groups": []string{"benchers"}})
	t.Header["kid"] = "k1"
	return t.SignedString(is.key)
}

// identityConfig is a gateway entry with JWT auth, rules policy rules
// (the caller's the last) and an audit trail in dir.
func identityConfig(is *jwksIssuer, aud, dir string, rules int) (gatewayauth.Config, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "auth: {issuer: %q, audience: %q, jwksUrl: %q}\npolicy:\n", is.url, aud, is.url+"/jwks")
	for i := range rules - 1 {
		fmt.Fprintf(&b, "  - {groups: [team%d], allow: [\"mcp__x%d__*\"]}\n", i, i)
	}
	fmt.Fprintf(&b, "  - {groups: [benchers], allow: [\"mcp__bench__*\"]}\naudit: {file: %q, args: keys}\n", filepath.Join(dir, "audit.jsonl"))
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(b.String()), &n); err != nil {
		return gatewayauth.Config{}, err
	}
	return gatewayauth.Decode(n.Content[0], nil)
}

// authCaller calls echo over HTTP through a gateway in front of a bridged
// responder: with a plain static token (keeper nil), or through keeper.
func authCaller(ctx context.Context, spec childSpec, keeper *gatewayauth.Keeper, token string) (*goCaller, error) {
	srv, reg, err := startBridge(ctx, "bench", spec, "")
	if err != nil {
		return nil, err
	}
	opts := gateway.Options{BearerToken: "static-token"}
	if keeper != nil {
		opts = gateway.Options{Gate: keeper, Authenticate: keeper.Authenticate, WellKnown: keeper.WellKnown()}
	}
	gw := gateway.New(reg, opts)
	ln, err := gateway.Listen("127.0.0.1:0", opts)
	if err != nil {
		return nil, errors.Join(err, gw.Close(), srv.Close())
	}
	serveCtx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- gw.ServeListener(serveCtx, ln) }()
	url := "http://" + ln.Addr().String() + "/mcp"
	shutdown := func() error { stop(); return errors.Join(gw.Close(), <-served, srv.Close()) }
	hc := &http.Client{Transport: bearerTransport{token}}
	sess, err := newSDKClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("connecting: %w", err), shutdown())
	}
	name := mcpclient.PublicToolName("bench", "echo")
	call := func(ctx context.Context) error {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: echoArgs})
		if err != nil {
			return err
		}
		if tc, ok := firstText(res); !ok || tc != echoText || res.IsError {
			return fmt.Errorf("echo returned %+v", res.Content)
		}
		return nil
	}
	return &goCaller{call: call, version: sess.InitializeResult().ProtocolVersion, closer: func() error { return errors.Join(sess.Close(), shutdown()) }}, nil
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// benchAudience is the resource the bench's tokens are for.
const benchAudience = "https://mcp.bench.example/mcp"

// runIdentity measures the identity row.
func runIdentity(ctx context.Context, o options, dir, responder string, logf func(string, ...any)) (_ *identityResults, err error) {
	res := &identityResults{rules: 100, tokens: 2000, auditLines: 100_000}
	if o.smoke {
		res.tokens, res.auditLines = 200, 10_000
	}
	is, err := newJWKSIssuer()
	if err != nil {
		return nil, err
	}
	defer is.srv.Close()
	cfg, err := identityConfig(is, benchAudience, dir, res.rules)
	if err != nil {
		return nil, fmt.Errorf("identity: the config: %w", err)
	}
	lifetime, stop := context.WithCancel(ctx)
	defer stop()
	keeper, quiet := gatewayauth.NewKeeper(gatewayauth.Options{}), gatewayauth.NewKeeper(gatewayauth.Options{})
	unaudited := cfg
	unaudited.Audit = nil
	for k, c := range map[*gatewayauth.Keeper]gatewayauth.Config{keeper: cfg, quiet: unaudited} {
		if err := k.Apply(lifetime, c, nil); err != nil {
			return nil, err
		}
		defer k.Clear(k.Current())
	}
	if err := measureCalls(ctx, o, res, is, [2]*gatewayauth.Keeper{keeper, quiet}, responderChild(responder, 0, 1)); err != nil {
		return nil, err
	}
	logf("identity: calls measured")
	if err := measureVerify(ctx, res, is, cfg); err != nil {
		return nil, err
	}
	return res, measureAudit(res, dir)
}

// measureCalls times calls with a static token, with the whole entry, and
// with the entry without audit, interleaved in short blocks so that drift
// hits all alike.
func measureCalls(ctx context.Context, o options, res *identityResults, is *jwksIssuer, keepers [2]*gatewayauth.Keeper, spec childSpec) (err error) {
	tok, err := is.token("bench", benchAudience, 0)
	if err != nil {
		return err
	}
	static, err := authCaller(ctx, spec, nil, "static-token")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, static.close()) }()
	full, err := authCaller(ctx, spec, keepers[0], tok)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, full.close()) }()
	noAudit, err := authCaller(ctx, spec, keepers[1], tok)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, noAudit.close()) }()
	for _, c := range []*goCaller{static, full, noAudit} {
		if _, err := c.seq(ctx, o.warmup); err != nil {
			return err
		}
	}
	return interleave(ctx, o.rounds*o.seqCalls, []*goCaller{static, full, noAudit}, []*[]time.Duration{&res.static, &res.full, &res.noAudit})
}

// identityBlock is how many sequential calls a setup makes before the next
// takes its turn: the setups differ by tens of µs in calls of ~400 µs, so
// a loaded machine's drift over rounds of a second would drown the
// difference, while it hits blocks of a few ms alike.
const identityBlock = 10

// interleave makes n sequential calls through each caller, in blocks taken
// in turn (the first caller of each turn rotating), and appends their
// latencies to outs.
func interleave(ctx context.Context, n int, callers []*goCaller, outs []*[]time.Duration) error {
	for turn := 0; turn*identityBlock < n; turn++ {
		calls := min(identityBlock, n-turn*identityBlock)
		for i := range callers {
			j := (turn + i) % len(callers)
			lat, err := callers[j].seq(ctx, calls)
			if err != nil {
				return err
			}
			*outs[j] = append(*outs[j], lat...)
		}
	}
	return nil
}

// measureVerify times a token's first check (signature against the cached
// JWKS) and a request with a token seen before.
func measureVerify(ctx context.Context, res *identityResults, is *jwksIssuer, cfg gatewayauth.Config) error {
	ctx, stop := context.WithCancel(ctx) // ends the Verifier's JWKS refreshing
	defer stop()
	v, err := gatewayauth.NewVerifier(ctx, cfg.Auth, gatewayauth.VerifierOptions{})
	if err != nil {
		return err
	}
	tokens := make([]string, res.tokens)
	for i := range tokens {
		t, err := is.token("bench", benchAudience, i+1)
		if err != nil {
			return err
		}
		tokens[i] = "Bearer " + t
	}
	start := time.Now()
	for _, t := range tokens {
		if _, err := v.Verify(ctx, t); err != nil {
			return err
		}
	}
	res.firstVerify = time.Since(start) / time.Duration(len(tokens))
	start = time.Now()
	for range len(tokens) {
		if _, err := v.Verify(ctx, tokens[0]); err != nil {
			return err
		}
	}
	res.cachedVerify = time.Since(start) / time.Duration(len(tokens))
	return nil
}

// measureAudit times lines appended to a trail.
func measureAudit(res *identityResults, dir string) (err error) {
	l, err := audit.Open(filepath.Join(dir, "audit-rate.jsonl"), nil)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, l.Close()) }()
	e := audit.Entry{Identity: "bench", Method: "tools/call", Name: "mcp__bench__echo", Server: "bench", Outcome: "ok", ArgKeys: []string{"text"}}
	start := time.Now()
	for range res.auditLines {
		e.Time = time.Now()
		if err := l.Write(e); err != nil {
			return err
		}
	}
	res.auditPerSec = float64(res.auditLines) / time.Since(start).Seconds()
	return nil
}

func identityTable(o options, r *identityResults) table {
	p50s, p50f, p50n := percentile(r.static, 50), percentile(r.full, 50), percentile(r.noAudit, 50)
	added := func(p50 time.Duration) string {
		return fmt.Sprintf("%+.1f%%", 100*(float64(p50)-float64(p50s))/float64(p50s))
	}
	return table{
		title:   "Identity: JWT auth, a 100-rule policy and the audit trail on a call",
		command: o.command("identity"),
		header:  []string{"measure", "value"},
		rows: [][]string{
			{"call p50, static token (--token-env)", fmtDur(p50s)},
			{"call p50, JWT + 100 rules (no audit)", fmtDur(p50n)},
			{"call p50, JWT + 100 rules + audit", fmtDur(p50f)},
			{"added at p50", added(p50f)},
			{"added at p50 without audit (JWT + 100 rules)", added(p50n)},
			{"call p99, static / JWT + rules + audit", fmtDur(percentile(r.static, 99)) + " / " + fmtDur(percentile(r.full, 99))},
			{"JWT first seen: RS256 check against the cached JWKS", fmtDur(r.firstVerify)},
			{"JWT seen before (per request)", fmtDur(r.cachedVerify)},
			{"audit lines per second (O_APPEND, chained)", fmt.Sprintf("%.0f", r.auditPerSec)},
		},
		notes: []string{
			fmt.Sprintf("Calls: echo of a bridged stdio responder through an in-process gateway over Streamable HTTP on loopback; %d sequential calls per setup (rounds × calls), interleaved in blocks of %d. The policy's matching rule is the last of %d; the audit writes one line per call (args: keys).", o.rounds*o.seqCalls, identityBlock, r.rules),
			fmt.Sprintf("Verification: %d distinct RS256 tokens checked once each, then one token %d times.", r.tokens, r.tokens),
		},
	}
}

func (r *benchRun) identityRow() ([]table, error) {
	res, err := runIdentity(r.ctx, r.o, r.dir, r.responder, r.logf)
	if err != nil {
		return nil, err
	}
	return []table{identityTable(r.o, res)}, nil
}
