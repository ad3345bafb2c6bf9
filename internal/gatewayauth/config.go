package gatewayauth

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/loopback"
	"github.com/mcpbridge/mcpbridge/internal/redact"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// Config is a gateway entry's config, decoded and validated.
type Config struct {
	Auth      Auth       `json:"auth"`
	Policy    []Rule     `json:"policy,omitempty"`
	HasPolicy bool       `json:"hasPolicy"`
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
	Audit     *Audit     `json:"audit,omitempty"`
	Console   *Console   `json:"console,omitempty"`
	Store     *Store     `json:"store,omitempty"`
	// QuestionWait (questionWaitMs) is how long a call whose client is
	// asked through input-required results waits for the client's call
	// again with the answers; 0 leaves it to the gateway's default.
	QuestionWait time.Duration `json:"questionWaitMs,omitempty"`
}

// CredentialVars are the variables c names as holding credentials: its
// static tokens' and its store's password's. No child inherits them
// unless its own env passes them.
func (c Config) CredentialVars() []string {
	var names []string
	for _, v := range c.Auth.Tokens {
		names = append(names, v)
	}
	if c.Store != nil {
		names = append(names, c.Store.URLVars...)
	}
	return names
}

// CredentialRefs are the variables a gateway entry's config as written
// (n, which need not be valid) names as holding credentials: those its
// static tokens name, and those of its store's redis URL's userinfo and
// query.
func CredentialRefs(n *yaml.Node) []string {
	var names []string
	if t := yamlconf.Child(n, "auth", "tokens"); t != nil && t.Kind == yaml.MappingNode {
		for i := 1; i < len(t.Content); i += 2 {
			names = append(names, yamlconf.NamedVars(t.Content[i])...)
		}
	}
	return append(names, storeURLVars(yamlconf.Child(n, "store", "redis", "url"))...)
}

// storeURLVars are the variables the store's redis URL as written (u)
// holds its password with: those of its userinfo and query.
func storeURLVars(u *yaml.Node) []string {
	if u = yamlconf.Resolve(u); u == nil || u.Kind != yaml.ScalarNode {
		return nil
	}
	return yamlconf.URLCredentialRefs(u.Value)
}

// MaxQuestionWait bounds questionWaitMs: a client that has not answered
// in an hour will not, and meanwhile its call holds a backend call.
const MaxQuestionWait = time.Hour

// Store is where the state replicas share is kept (the rate limits'
// buckets, stateless mode's tasks): a Redis server. Nil keeps it in the
// process.
type Store struct {
	// URL is redis:// or rediss://, expanded; never encoded, since it may
	// hold a password. Addr is its host:port, what messages name.
	URL  string `json:"-"`
	Addr string `json:"addr"`
	// URLVars are the variables URL's userinfo and query were written
	// with: its password's.
	URLVars   []string `json:"-"`
	KeyPrefix string   `json:"keyPrefix"`
	// TLS, for a rediss:// URL, is the CA that signs the server's
	// certificate (none: the system's roots) and the name the certificate
	// must carry (none: the URL's host).
	TLS *StoreTLS `json:"tls,omitempty"`
	// TaskLease is how long a replica holds a task it runs before it must
	// renew its lease; a task whose replica missed it ends failed.
	TaskLease time.Duration `json:"taskLease"`
	// Advertise is the base URL (http://HOST:PORT) the other replicas
	// reach this one's gateway at, to forward the requests of the
	// sessions it owns; "" is the address each client's connection
	// reached it at.
	Advertise string `json:"advertise,omitempty"`
	// Fingerprint changes when the URL does, so a reload sees a new
	// password: an HMAC under the Kind's random key, as Auth's.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// Auth says who may call: JWTs of one issuer, named static tokens, or
// both.
type Auth struct {
	Issuer      string   `json:"issuer,omitempty"`
	Audience    string   `json:"audience,omitempty"`
	JWKSURL     string   `json:"jwksUrl,omitempty"`
	Scopes      []string `json:"scopes,omitempty"`
	GroupsClaim string   `json:"groupsClaim"`
	// Tokens maps a static token's name (its identity) to the variable
	// holding it; TokenValues holds the values, never encoded.
	Tokens      map[string]string `json:"tokens,omitempty"`
	TokenValues map[string]string `json:"-"`
	// Fingerprint changes when a token's value does, so a reload sees
	// it: an HMAC under the Kind's random key (see Kind.Decode), never
	// the values themselves.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// JWT reports whether bearer JWTs are accepted.
func (a Auth) JWT() bool { return a.Issuer != "" }

// Rule is one policy rule: it matches a caller whose subject is in
// Subjects, or who is in one of Groups, and for whom When holds (each
// given condition must hold; a rule with none matches everyone; an empty
// Subjects or Groups names no one, and Decode refuses it).
//
// Allow lists globs over public tool names, and over prompt names unless
// Prompts lists its own; Resources lists the servers whose resources may
// be read, and without it a server's resources follow Allow (a glob that
// covers every name of the server, such as "*" or "mcp__docs__*", covers
// its resources). Deny lists globs over the same names, refusing what any
// matching rule allows. A nil list was not given; an empty one was given
// empty, so the JSON keeps them apart (a reload from one to the other is
// a change). Decode refuses a rule with none of the four lists.
type Rule struct {
	Subjects  []string `json:"subjects,omitempty"`
	Groups    []string `json:"groups,omitempty"`
	When      string   `json:"when,omitempty"`
	Allow     []string `json:"allow"`
	Prompts   []string `json:"prompts"`
	Resources []string `json:"resources"`
	Deny      []string `json:"deny"`
	Line      int      `json:"line"`
}

// DenyOnly reports whether r only denies: it has deny and grants nothing
// of its own, so it never decides what its callers may use.
func (r *Rule) DenyOnly() bool {
	return r.Deny != nil && r.Allow == nil && r.Prompts == nil && r.Resources == nil
}

// RateLimit bounds each identity's calls: Rate per second, Burst at once;
// PerTool applies the same bound to each (identity, tool) pair instead.
type RateLimit struct {
	Spec    string  `json:"perIdentity"`
	Rate    float64 `json:"rate"`
	Burst   int     `json:"burst"`
	PerTool bool    `json:"perTool,omitempty"`
}

// Audit says where the audit trail goes and how arguments appear in it.
type Audit struct {
	File string `json:"file"`
	Args string `json:"args"`
	// FailOpen serves calls when the trail cannot be written (logged);
	// the default refuses them.
	FailOpen bool `json:"failOpen,omitempty"`
}

// Decode reads a gateway entry's config mapping; every problem is reported
// at its file position. CEL expressions are compiled here, so a policy
// that does not compile never replaces a running one.
func Decode(n *yaml.Node, lookup func(string) (string, bool)) (Config, error) {
	cfg := Config{Auth: Auth{GroupsClaim: "groups"}}
	d := yamlconf.NewDecoder(lookup)
	m, ok := d.Map(n, "config")
	if !ok {
		if d.Err() == nil {
			d.Errorf(n, "config", "is required: auth, policy, rateLimit, audit, store or questionWaitMs")
		}
		return cfg, d.Err()
	}
	m.RejectListing("auth", "policy", "rateLimit", "audit", "console", "store", "questionWaitMs")
	if a, ok := d.Map(m.Value("auth"), m.Path("auth")); ok {
		cfg.Auth = decodeAuth(d, a, lookup)
	}
	if m.Has("policy") {
		cfg.HasPolicy = true
		cfg.Policy = decodePolicy(d, m.Value("policy"), m.Path("policy"))
	}
	if r, ok := d.Map(m.Value("rateLimit"), m.Path("rateLimit")); ok {
		cfg.RateLimit = decodeRate(d, r)
	}
	if a, ok := d.Map(m.Value("audit"), m.Path("audit")); ok {
		cfg.Audit = decodeAudit(d, a)
	}
	if c, ok := d.Map(m.Value("console"), m.Path("console")); ok {
		cfg.Console = decodeConsole(d, c)
	}
	if sm, ok := d.Map(m.Value("store"), m.Path("store")); ok {
		cfg.Store = decodeStore(d, sm)
	}
	if ms, ok := m.Int("questionWaitMs", 1, MaxQuestionWait.Milliseconds()); ok {
		cfg.QuestionWait = time.Duration(ms) * time.Millisecond
	}
	return cfg, d.Err()
}

// requiredString is key's expanded string, which must not be empty: a
// missing or empty one is reported as required, with what it takes
// (need), unless its value was reported already (an unset variable), so
// one cause is one problem.
func requiredString(d *yamlconf.Decoder, m *yamlconf.Map, key, need string) (string, bool) {
	v, ok := m.ExpandString(key)
	if ok && v != "" {
		return v, true
	}
	if !d.Failed(m.Path(key)) {
		m.Errorf(key, "is required: %s", need)
	}
	return "", false
}

// StoreTLS is the TLS of a rediss:// store.
type StoreTLS struct {
	CAFile     string `json:"caFile,omitempty"`
	ServerName string `json:"serverName,omitempty"`
	// CA is CAFile's PEM, read at decode, so a file that cannot be read
	// is a config error and a reload sees a new CA.
	CA []byte `json:"-"`
}

// Bounds and default of store.taskLease.
const (
	defaultTaskLease = 15 * time.Second
	minTaskLease     = 500 * time.Millisecond
	maxTaskLease     = time.Hour
)

// decodeStore reads store: {redis: {url, keyPrefix, tls}, taskLease,
// advertise}.
// The URL is checked here, so a reload with a broken one keeps the old
// config; it is shown only redacted (host and port), as it may hold a
// password.
func decodeStore(d *yamlconf.Decoder, sm *yamlconf.Map) *Store {
	sm.RejectListing("redis", "taskLease", "advertise")
	r, ok := d.Map(sm.Value("redis"), sm.Path("redis"))
	if !ok {
		if d.Err() == nil {
			sm.Errorf("redis", "is required: {url: redis://HOST:PORT, keyPrefix: ...}")
		}
		return nil
	}
	r.RejectListing("url", "keyPrefix", "tls")
	out := &Store{KeyPrefix: "mcpbridge:", TaskLease: decodeTaskLease(sm), Advertise: decodeAdvertise(sm)}
	if p, ok := r.ExpandString("keyPrefix"); ok {
		out.KeyPrefix = p
	}
	u, ok := requiredString(d, r, "url", `redis://HOST:PORT or rediss:// for TLS; put a password in a variable: url: "redis://:${REDIS_PASSWORD}@redis:6379"`)
	if !ok {
		return out
	}
	ro, err := redis.ParseURL(u)
	if err != nil {
		r.Errorf("url", "must be redis://[user:password@]HOST:PORT[/DB] or rediss://…, got %s: %s", redact.URLs(u), redact.URLs(err.Error()))
		return out
	}
	out.URL, out.Addr = u, ro.Addr
	out.URLVars = storeURLVars(r.Value("url"))
	if t, ok := d.Map(r.Value("tls"), r.Path("tls")); ok {
		out.TLS = decodeStoreTLS(t, r, ro.TLSConfig != nil)
	}
	return out
}

// decodeStoreTLS reads store.redis.tls: {caFile, serverName}, of a URL
// that is rediss:// (secure) or not.
func decodeStoreTLS(t, r *yamlconf.Map, secure bool) *StoreTLS {
	t.RejectListing("caFile", "serverName")
	if !secure {
		r.Errorf("tls", "needs a rediss:// url (redis:// is plain TCP): write the url as rediss://HOST:PORT")
		return nil
	}
	out := &StoreTLS{}
	out.ServerName, _ = t.ExpandString("serverName")
	out.CAFile, _ = t.ExpandString("caFile")
	if out.CAFile == "" {
		return out
	}
	ca, err := os.ReadFile(out.CAFile)
	switch {
	case err != nil:
		t.Errorf("caFile", "cannot be read: %v", err)
	case !x509.NewCertPool().AppendCertsFromPEM(ca):
		t.Errorf("caFile", "%s holds no PEM certificate: give the CA that signs the store's certificate", out.CAFile)
	}
	out.CA = ca
	return out
}

// decodeAdvertise reads store.advertise, the base URL the other replicas
// reach this one at: http(s)://HOST:PORT, nothing after it, usually with
// a variable for the replica's own address.
func decodeAdvertise(sm *yamlconf.Map) string {
	v, ok := sm.ExpandString("advertise")
	if !ok || v == "" {
		return ""
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Port() == "":
		sm.Errorf("advertise", `must be http://HOST:PORT, where the other replicas reach this one, like "http://${POD_IP}:8080"; got %q`, sm.Written("advertise"))
	case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		sm.Errorf("advertise", "must be only http://HOST:PORT (the replicas add /mcp), without a path, query or credentials; got %q", sm.Written("advertise"))
	default:
		return u.Scheme + "://" + u.Host
	}
	return ""
}

// decodeTaskLease reads store.taskLease, a duration ("15s").
func decodeTaskLease(sm *yamlconf.Map) time.Duration {
	v, ok := sm.ExpandString("taskLease")
	if !ok || v == "" {
		return defaultTaskLease
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < minTaskLease || d > maxTaskLease {
		sm.Errorf("taskLease", "must be a duration from %v to %v, like 15s; got %q", minTaskLease, maxTaskLease, v)
		return defaultTaskLease
	}
	return d
}

func decodeAuth(d *yamlconf.Decoder, a *yamlconf.Map, lookup func(string) (string, bool)) Auth {
	out := Auth{GroupsClaim: "groups"}
	a.RejectListing("issuer", "audience", "jwksUrl", "scopes", "groupsClaim", "tokens")
	out.Issuer, _ = a.ExpandString("issuer")
	out.Audience, _ = a.ExpandString("audience")
	out.JWKSURL, _ = a.ExpandString("jwksUrl")
	out.Scopes, _ = a.ExpandStringList("scopes")
	if g, ok := a.ExpandString("groupsClaim"); ok {
		out.GroupsClaim = g
	}
	for key, v := range map[string]string{"issuer": out.Issuer, "jwksUrl": out.JWKSURL} {
		if v != "" && !httpURL(v) {
			a.Errorf(key, "must be an https URL (http only for a loopback host), got %q", a.Written(key))
		}
	}
	if out.Issuer == "" && (out.Audience != "" || out.JWKSURL != "" || len(out.Scopes) > 0) {
		a.Errorf("issuer", "is required with audience, jwksUrl or scopes")
	}
	if out.Issuer != "" && out.Audience == "" {
		a.Errorf("audience", "is required with issuer: this gateway's resource URL, the aud its tokens must carry")
	}
	// Not expanded: each value names the variable holding the token.
	out.Tokens, _ = a.StringMap("tokens")
	out.TokenValues = map[string]string{}
	for name, env := range out.Tokens {
		if !yamlconf.IsVarName(env) {
			a.Errorf("tokens", "token %q: the value is not a variable name (not shown: it may be the token itself): a token is never written in the file; put it in a variable (export CI_TOKEN=…) and name that variable here", name)
			continue
		}
		v, ok := lookup(env)
		if !ok || v == "" {
			a.Errorf("tokens", "token %q: the variable %s is unset or empty", name, env)
			continue
		}
		out.TokenValues[name] = v
	}
	return out
}

// httpURL reports whether s is an https URL, or http to a loopback host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return false
	}
	return u.Scheme == "https" || (u.Scheme == "http" && loopback.Host(u.Hostname()))
}

// ruleKeys are a policy rule's keys, in the order the docs list them.
var ruleKeys = []string{"subjects", "groups", "when", "allow", "prompts", "resources", "deny"}

func decodePolicy(d *yamlconf.Decoder, n *yaml.Node, p string) []Rule {
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, p, "must be a list of rules, got %s", yamlconf.Describe(n))
		return nil
	}
	rules := make([]Rule, 0, len(n.Content))
	for i, item := range n.Content {
		rp := fmt.Sprintf("%s[%d]", p, i)
		m, ok := d.Map(item, rp)
		if !ok {
			if d.Err() == nil {
				d.Errorf(item, rp, "must be a rule (%s)", strings.Join(ruleKeys, ", "))
			}
			continue
		}
		r := decodeRule(m, item.Line)
		if r.Allow == nil && r.Prompts == nil && r.Resources == nil && r.Deny == nil {
			// It would decide for its callers that they may use nothing,
			// as often a rule split in two by a stray "-" as meant.
			d.Errorf(item, rp, `neither allows nor denies: give it allow, prompts, resources or deny (allow: [] to grant its callers nothing); if the next rule is meant to be part of it, remove the "-" between them`)
		}
		rules = append(rules, r)
	}
	return rules
}

func decodeRule(m *yamlconf.Map, line int) Rule {
	m.RejectListing(ruleKeys...)
	r := Rule{Line: line}
	r.Subjects = callerList(m, "subjects")
	r.Groups = callerList(m, "groups")
	r.Allow = globList(m, "allow")
	r.Prompts = globList(m, "prompts")
	r.Resources = globList(m, "resources")
	r.Deny = globList(m, "deny")
	if w, ok := m.ExpandString("when"); ok {
		r.When = w
		if _, err := compileWhen(w); err != nil {
			m.Errorf("when", "does not compile: %s", oneLine(err.Error()))
		}
	}
	return r
}

// callerList reads a rule's subjects or groups. The key given with no
// names (an empty list, or no value, as a template that filled in none
// leaves it) is refused: read as no condition it would make the rule
// every caller's, and read as matching no one, a rule that does nothing.
func callerList(m *yamlconf.Map, key string) []string {
	if m.Value(key) == nil {
		return nil
	}
	names, ok := m.ExpandStringList(key)
	if len(names) == 0 && (ok || yamlconf.IsNull(m.Value(key))) {
		m.Errorf(key, "names no one: list the %s the rule is for, or remove the key to make the rule apply to every caller", key)
	}
	return names
}

// globList reads key's list of globs, each checked to be one.
func globList(m *yamlconf.Map, key string) []string {
	globs, _ := m.ExpandStringList(key)
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			m.Errorf(key, "%q is not a valid glob", g)
		}
	}
	return globs
}

var spaces = regexp.MustCompile(`\s+`)

func oneLine(s string) string { return spaces.ReplaceAllString(strings.TrimSpace(s), " ") }

// rateSpec matches "120/m": a count per second, minute or hour.
var rateSpec = regexp.MustCompile(`^([1-9][0-9]{0,8})/(s|m|h)$`)

func decodeRate(d *yamlconf.Decoder, r *yamlconf.Map) *RateLimit {
	r.RejectListing("perIdentity", "burst", "perTool")
	out := &RateLimit{}
	s, ok := requiredString(d, r, "perIdentity", `calls per identity, such as "120/m" (per s, m or h)`)
	if !ok {
		return out
	}
	out.Spec = s
	sub := rateSpec.FindStringSubmatch(s)
	if sub == nil {
		r.Errorf("perIdentity", `must be a count per s, m or h, such as "120/m", got %q`, s)
		return out
	}
	n, _ := strconv.Atoi(sub[1])
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[sub[2]]
	out.Rate = float64(n) / per.Seconds()
	out.Burst = max(1, min(n, 20))
	if b, ok := r.Int("burst", 1, 1_000_000); ok {
		out.Burst = int(b)
	}
	out.PerTool, _ = r.Bool("perTool")
	return out
}

func decodeAudit(d *yamlconf.Decoder, a *yamlconf.Map) *Audit {
	a.RejectListing("file", "args", "failOpen")
	out := &Audit{Args: "keys"}
	out.File, _ = requiredString(d, a, "file", `a file path, or "-" for stdout`)
	if s, ok := a.ExpandString("args"); ok {
		switch s {
		case "none", "keys", "hash", "full":
			out.Args = s
		default:
			a.Errorf("args", "must be none, keys, hash or full, got %q", s)
		}
	}
	out.FailOpen, _ = a.Bool("failOpen")
	return out
}
