package mcpclient

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/errtext"
	"github.com/mcpbridge/mcpbridge/internal/httpurl"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// Transport selects how the bridge talks to an MCP server.
type Transport string

const (
	// TransportStdio spawns Command and speaks MCP over its stdin and stdout.
	TransportStdio Transport = "stdio"
	// TransportStreamableHTTP connects to URL with the MCP Streamable HTTP
	// transport.
	TransportStreamableHTTP Transport = "streamable-http"
	// TransportSSE connects to URL with the legacy HTTP+SSE transport of
	// protocol 2024-11-05, for servers that speak nothing newer.
	TransportSSE Transport = "sse"
)

const (
	// DefaultToolCallTimeout bounds one tools/call when ToolCallTimeout is 0
	// (upstream's default).
	DefaultToolCallTimeout = 60 * time.Second
	// DefaultStartupTimeout bounds connect plus full discovery when
	// StartupTimeout is 0.
	DefaultStartupTimeout = 30 * time.Second
)

// maxMs is the largest timeout or delay accepted, in milliseconds: the
// largest timer delay upstream's JavaScript runtime honours, kept so that a
// config means the same thing in both bridges.
const maxMs = 2147483647

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, upstream's bound on
// reconnect.maxAttempts.
const maxSafeInteger = 1<<53 - 1

// ReconnectPolicy is the resolved reconnect block (docs/upstream.md §1.6): after a
// lost connection, wait InitialDelay, doubling up to MaxDelay, for at most
// MaxAttempts consecutive failed attempts.
type ReconnectPolicy struct {
	// Enabled (enabled) turns reconnecting on; off, a lost server stays down.
	Enabled bool
	// InitialDelay (initialDelayMs) is the wait before the first attempt.
	InitialDelay time.Duration
	// MaxDelay (maxDelayMs) caps the doubling delay; an uptime this long
	// also resets the attempt budget.
	MaxDelay time.Duration
	// MaxAttempts (maxAttempts) is how many consecutive failed attempts to
	// make before giving up.
	MaxAttempts int
}

// DefaultReconnectPolicy returns upstream's defaults: enabled, 500ms initial
// delay, 30s maximum delay, 10 attempts.
func DefaultReconnectPolicy() ReconnectPolicy {
	return ReconnectPolicy{Enabled: true, InitialDelay: 500 * time.Millisecond, MaxDelay: 30 * time.Second, MaxAttempts: 10}
}

// Config configures one MCP server. The zero values of optional fields mean
// their documented defaults, which Validate and WithDefaults resolve without
// mutating the caller's value. The YAML form (DecodeConfig) uses the key named
// in each field's comment.
type Config struct {
	// ServerName (serverName) names the server in public tool names
	// (mcp__<serverName>__<tool>) and logs; see ValidServerName.
	ServerName string
	// Transport (transport) is required.
	Transport Transport
	// Command (command) is the executable to run, resolved through PATH,
	// without a shell. Required for stdio, invalid otherwise.
	Command string
	// Args (args) are passed verbatim. stdio only.
	Args []string
	// Env (env) overlays the scrubbed parent environment; explicit wins.
	// stdio only.
	Env map[string]string
	// Cwd (cwd) is the child's working directory; "" inherits ours. stdio
	// only.
	Cwd string
	// URL (url) is the absolute http or https endpoint. Required for
	// streamable-http and sse, invalid otherwise.
	URL string
	// Headers (headers) are sent on every HTTP request. streamable-http and
	// sse only.
	Headers map[string]string
	// ToolCallTimeout (toolCallTimeoutMs, 1..2147483647) bounds one
	// tools/call; 0 means DefaultToolCallTimeout.
	ToolCallTimeout time.Duration
	// StartupTimeout (startupTimeoutMs, 1..2147483647) bounds connect plus
	// full discovery; 0 means DefaultStartupTimeout.
	StartupTimeout time.Duration
	// FailOnStartupError (failOnStartupError) makes a failed first
	// connection fail the start instead of retrying in the background.
	FailOnStartupError bool
	// ProtocolVersion (protocolVersion) pins the MCP protocol version; ""
	// lets the SDK negotiate. Pinning helps servers that die on the newer
	// handshake.
	ProtocolVersion string
	// Reconnect (reconnect) is the reconnect policy; nil means
	// DefaultReconnectPolicy. A non-nil policy is taken as a whole, so start
	// from DefaultReconnectPolicy to change one field.
	Reconnect *ReconnectPolicy
	// EnabledTools (enabledTools) lists the raw tool names to register;
	// empty means all.
	EnabledTools []string
	// DisabledTools (disabledTools) lists raw tool names not to register.
	// At most one of EnabledTools and DisabledTools may be set.
	DisabledTools []string
	// OAuth (oauth) configures OAuth for streamable-http; nil still
	// authorizes a server that answers 401 with a challenge, through
	// discovery and dynamic client registration (see oauth.go).
	OAuth *OAuthConfig `json:",omitempty"`
	// HideResources (resourceTools: false) keeps the server's resources out
	// of the model-facing resource tools; the CLI and a gateway's clients
	// still see them.
	HideResources bool
	// AlwaysLoad (alwaysLoad) marks every tool of the server
	// tool.Tool.AlwaysLoad: with deferred loading (a tool-search entry)
	// the model sees them all from the start, without a search.
	AlwaysLoad bool
	// Trusted (trusted) says the server's annotations are believed: the
	// agent runs its tools marked readOnlyHint without asking. Annotations
	// of other servers are only hints from a stranger.
	Trusted bool `json:",omitempty"`
	// Roots (roots: [paths]) are the directories the server may work in,
	// offered as file:// roots; relative paths are taken from the working
	// directory. Empty offers none, which tells a server that would use
	// them to keep its own settings (server-filesystem keeps the
	// directories of its args): roots never widen what a server was
	// started with unless the config says so.
	Roots []string
	// RootsFromClient (roots: client) answers the server's roots/list with
	// the roots of the consumer of the call in flight (a gateway's client),
	// and with none when there is no such consumer (the CLI). Every client
	// of the backend shares the one server, so what one client offers
	// widens it for all. At most one of Roots and RootsFromClient is set.
	RootsFromClient bool `json:",omitempty"`
	// Pin (pin) says what a definition that differs from its pin (see
	// Options.Pins) does: PinHold ("", the default) withholds it, PinWarn
	// publishes it and reports it, PinOff does not check.
	Pin string `json:",omitempty"`
	// AllowSampling (allowSampling) lets the server ask for model
	// completions (sampling), when the consumer can answer them.
	AllowSampling bool
	// Scan (scan) is what the definition scan does with the server's
	// tools and prompts at every sync (docs/scan.md): ScanWarn (the
	// default, ""), ScanHold or ScanOff.
	Scan ScanMode `json:",omitempty"`
	// LogLevel (logLevel) is the level the server is asked to log from
	// (logging/setLevel), for servers that offer logging; "" means
	// DefaultLogLevel.
	LogLevel string
	// Sandbox (sandbox) confines a stdio server with Landlock, resource
	// limits and, without network, a network namespace of its own
	// (docs/sandbox.md); nil runs it with all of the user's rights.
	Sandbox *Sandbox `json:",omitempty"`
	// Share (share) is "session" (ShareSession) for one instance of the
	// server per gateway client session; "" shares one instance.
	Share string
	// Registry (registry: {name, version}) is the MCP Registry server and
	// version the entry was made from (mcpbridge add --from-registry), for
	// registry outdated to compare with the latest. It changes nothing in
	// how the server runs, so a reload that changes it alone restarts
	// nothing.
	Registry *RegistryRef `json:"-"`
	// Written is how Command, Cwd and URL were written in the config file
	// where ${VAR} expansion changed them. Messages (status, /healthz, logs)
	// name them by it, so that an expanded value, often a secret, is never
	// shown. DecodeConfig fills it; a Config built in Go usually leaves it
	// empty, and its values are shown as they are. It is display only: not
	// part of the config a host compares on reload.
	Written Written `json:"-"`
}

// RegistryRef names a server version in the MCP Registry.
type RegistryRef struct {
	// Name (name) is the server's name, like io.github.owner/server.
	Name string
	// Version (version) is the version the entry runs.
	Version string
}

// Written holds fields of a Config as written before ${VAR} expansion; ""
// for a field that expansion did not change.
type Written struct {
	Command, Cwd, URL string
	// Credentials are the variables the entry names as holding its
	// credentials: those its headers, its URL's userinfo or query and its
	// OAuth secrets reference, and its assertionEnv. No child inherits
	// them unless its own env passes them (CredentialVars).
	Credentials []string
}

// CredentialVars are the variables c names as holding its credentials
// (Written.Credentials).
func (c Config) CredentialVars() []string { return c.Written.Credentials }

// protocolVersions are the versions the SDK can speak, oldest first.
func protocolVersions() []string {
	return []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}
}

// yamlKeys are the keys of the YAML form, in documentation order.
func yamlKeys() []string {
	return []string{
		"serverName", "transport", "command", "args", "env", "cwd", "url", "headers",
		"toolCallTimeoutMs", "startupTimeoutMs", "failOnStartupError", "protocolVersion",
		"reconnect", "enabledTools", "disabledTools", "resourceTools", "roots", "allowSampling", "logLevel", "oauth", "alwaysLoad", "pin",
		"trusted", "scan", "sandbox", "share", "registry",
	}
}

// ValidServerName reports why name cannot be a serverName, or "" if it can.
// Beyond upstream's ^[A-Za-z0-9_-]{1,32}$, it refuses "__" and a leading or
// trailing "_", which would make public tool names ambiguous across servers.
func ValidServerName(name string) string {
	if name == "" {
		return "serverName is required"
	}
	if len(name) > 32 || strings.IndexFunc(name, func(r rune) bool {
		return !(r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) >= 0 {
		return fmt.Sprintf(`serverName %q must be 1 to 32 characters, each a letter, a digit, "_" or "-"`, name)
	}
	const why = `public tool names join serverName and tool name with "__", so it would be ambiguous`
	if strings.Contains(name, "__") {
		return fmt.Sprintf(`serverName %q must not contain "__": %s`, name, why)
	}
	if strings.HasPrefix(name, "_") || strings.HasSuffix(name, "_") {
		return fmt.Sprintf(`serverName %q must not start or end with "_": %s`, name, why)
	}
	return ""
}

// Validate checks a Config built in Go, with the same rules as DecodeConfig
// and upstream's exact reconnect messages
// ("mcp-client(<serverName>): reconnect.maxAttempts must be a positive
// integer"). It returns every problem, one per line.
func (c Config) Validate() error {
	var errs yamlconf.Errors
	c.check(func(msg string, fields ...string) {
		path := fields[0]
		if strings.HasPrefix(path, "reconnect.") {
			path = "" // upstream's message already names the key
		}
		errs = append(errs, &yamlconf.Error{Path: path, Msg: msg})
	})
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// WithDefaults returns a copy of c with every default filled in (timeouts and
// a non-nil Reconnect). Slices, maps and the policy are copied, so the result
// shares nothing mutable with c.
func (c Config) WithDefaults() Config {
	out := c
	out.Args = slices.Clone(c.Args)
	out.Env = maps.Clone(c.Env)
	out.Headers = maps.Clone(c.Headers)
	out.EnabledTools = slices.Clone(c.EnabledTools)
	out.DisabledTools = slices.Clone(c.DisabledTools)
	out.OAuth = cloneOAuth(c.OAuth)
	out.Roots = slices.Clone(c.Roots)
	out.Sandbox = cloneSandbox(c.Sandbox)
	if c.Registry != nil {
		ref := *c.Registry
		out.Registry = &ref
	}
	out.LogLevel = cmp.Or(c.LogLevel, DefaultLogLevel)
	if out.ToolCallTimeout == 0 {
		out.ToolCallTimeout = DefaultToolCallTimeout
	}
	if out.StartupTimeout == 0 {
		out.StartupTimeout = DefaultStartupTimeout
	}
	p := DefaultReconnectPolicy()
	if c.Reconnect != nil {
		p = *c.Reconnect
	}
	out.Reconnect = &p
	return out
}

// reportFunc receives a problem found by check: the message and the fields
// it concerns (YAML paths relative to the config, the first being where to
// point).
type reportFunc func(msg string, fields ...string)

// check applies the rules that do not depend on YAML, one group of fields
// after another, reporting every problem; messages never contain values
// that may have come from ${VAR} expansion.
func (c Config) check(report reportFunc) {
	for _, check := range []func(reportFunc){
		c.checkServerName,
		c.checkTransport,
		c.checkEnv,
		c.checkHeaders,
		c.checkTimeouts,
		c.checkProtocolVersion,
		c.checkReconnect,
		c.checkToolFilters,
		c.checkRoots,
		c.checkPin,
		c.checkOAuth,
		c.checkLogLevel,
		c.checkScan,
		c.checkSandbox,
		c.checkShare,
	} {
		check(report)
	}
}

func (c Config) checkServerName(report reportFunc) {
	if why := ValidServerName(c.ServerName); why != "" {
		report(why, "serverName")
	}
}

// checkTransport checks transport and the fields that belong to one
// transport only.
func (c Config) checkTransport(report reportFunc) {
	switch c.Transport {
	case "":
		report(`is required: "stdio", "streamable-http" or "sse"`, "transport")
	case TransportStdio:
		c.checkStdio(report)
	case TransportStreamableHTTP, TransportSSE:
		c.checkStreamableHTTP(report)
	default:
		report(fmt.Sprintf(`must be "stdio", "streamable-http" or "sse", got %q`, c.Transport), "transport")
	}
}

func (c Config) checkStdio(report reportFunc) {
	if c.Command == "" {
		report("is required with transport: stdio", "command")
	}
	if c.URL != "" {
		report("url is only valid with transport: streamable-http", "url")
	}
	if len(c.Headers) > 0 {
		report("headers is only valid with transport: streamable-http", "headers")
	}
}

func (c Config) checkStreamableHTTP(report reportFunc) {
	if c.URL == "" {
		report("is required with transport: "+string(c.Transport), "url")
	} else if why := checkURL(c.URL); why != "" {
		report(why, "url")
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"command", c.Command != ""}, {"args", len(c.Args) > 0}, {"env", len(c.Env) > 0}, {"cwd", c.Cwd != ""}} {
		if f.set {
			report(f.name+" is only valid with transport: stdio", f.name)
		}
	}
}

func (c Config) checkEnv(report reportFunc) {
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			report(`environment variable names must be non-empty and contain no "=" or NUL`, yamlconf.JoinKey("env", k))
		} else if strings.ContainsRune(c.Env[k], 0) {
			report("value must not contain NUL characters", yamlconf.JoinKey("env", k))
		}
	}
}

func (c Config) checkHeaders(report reportFunc) {
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		if !isToken(k) {
			report("is not a valid HTTP header name", yamlconf.JoinKey("headers", k))
		} else if strings.ContainsAny(c.Headers[k], "\r\n\x00") {
			report("value must not contain CR, LF or NUL characters", yamlconf.JoinKey("headers", k))
		}
	}
}

func (c Config) checkTimeouts(report reportFunc) {
	checkTimeout(c.ToolCallTimeout, "toolCallTimeoutMs", report)
	checkTimeout(c.StartupTimeout, "startupTimeoutMs", report)
}

func (c Config) checkProtocolVersion(report reportFunc) {
	if c.ProtocolVersion != "" && !slices.Contains(protocolVersions(), c.ProtocolVersion) {
		report(fmt.Sprintf("%q is not a supported MCP protocol version (use one of %s, or leave it empty to negotiate)",
			c.ProtocolVersion, strings.Join(protocolVersions(), ", ")), "protocolVersion")
	}
}

// checkReconnect checks a policy set in Go or merged from YAML, with
// upstream's messages.
func (c Config) checkReconnect(report reportFunc) {
	p := c.Reconnect
	if p == nil {
		return
	}
	prefix := "mcp-client(" + c.ServerName + "): reconnect"
	initialOK := validDelay(p.InitialDelay)
	maxOK := validDelay(p.MaxDelay)
	if !initialOK {
		report(prefix+".initialDelayMs must be a positive finite number no greater than 2147483647", "reconnect.initialDelayMs")
	}
	if !maxOK {
		report(prefix+".maxDelayMs must be a positive finite number no greater than 2147483647", "reconnect.maxDelayMs")
	}
	if p.MaxAttempts < 1 || p.MaxAttempts > maxSafeInteger {
		report(prefix+".maxAttempts must be a positive integer", "reconnect.maxAttempts")
	}
	if initialOK && maxOK && p.InitialDelay > p.MaxDelay {
		report(prefix+".initialDelayMs must be less than or equal to maxDelayMs", "reconnect.initialDelayMs", "reconnect.maxDelayMs")
	}
}

func (c Config) checkShare(report reportFunc) {
	if c.Share != "" && c.Share != ShareSession {
		report(fmt.Sprintf("must be %q (one instance of the server per gateway client session) or absent, got %q", ShareSession, c.Share), "share")
	}
}

// DefaultLogLevel is the logLevel of a decoded entry that sets none.
const DefaultLogLevel = "info"

func (c Config) checkLogLevel(report reportFunc) {
	if _, ok := logLevels[c.LogLevel]; c.LogLevel != "" && !ok {
		report(fmt.Sprintf("must be one of debug, info, notice, warning, error, critical, alert, emergency, got %q", c.LogLevel), "logLevel")
	}
}

func (c Config) checkToolFilters(report reportFunc) {
	if len(c.EnabledTools) > 0 && len(c.DisabledTools) > 0 {
		report("enabledTools and disabledTools may not both be set: list either the tools to keep or the tools to hide", "disabledTools", "enabledTools")
	}
	for _, f := range c.toolFilters() {
		for i, name := range f.names {
			if name == "" {
				report("tool names must not be empty", fmt.Sprintf("%s[%d]", f.key, i))
			}
		}
	}
}

// toolFilter is enabledTools or disabledTools: its key, its names, and the
// warning for a name that matches no tool the server lists (warnUnmatched).
type toolFilter struct {
	key, unmatched string
	names          []string
}

func (c Config) toolFilters() []toolFilter {
	return []toolFilter{
		{"enabledTools", "enabledTools names a tool the server does not list, so the tool it means is not registered: correct the name in the entry's enabledTools", c.EnabledTools},
		{"disabledTools", "disabledTools names a tool the server does not list, so the tool it means stays registered: correct the name in the entry's disabledTools", c.DisabledTools},
	}
}

// checkRoots refuses an empty root path (it would be the working
// directory, which roots no longer offer by default) and roots that are
// both paths and the client's.
func (c Config) checkRoots(report reportFunc) {
	if c.RootsFromClient && len(c.Roots) > 0 {
		report(`roots is either a list of paths or "client", not both`, "roots")
	}
	for i, p := range c.Roots {
		if p == "" {
			report(`root paths must not be empty (write "." for the working directory)`, fmt.Sprintf("roots[%d]", i))
		}
	}
}

// The values of pin.
const (
	PinHold = "hold"
	PinWarn = "warn"
	PinOff  = "off"
)

func (c Config) checkPin(report reportFunc) {
	if c.Pin != "" && c.Pin != PinHold && c.Pin != PinWarn && c.Pin != PinOff {
		report(fmt.Sprintf("must be one of hold, warn, off, got %q", c.Pin), "pin")
	}
}

func validDelay(d time.Duration) bool {
	return d > 0 && d <= maxMs*time.Millisecond
}

func checkTimeout(d time.Duration, field string, report reportFunc) {
	if d != 0 && (d < time.Millisecond || d > maxMs*time.Millisecond) {
		report("must be between 1 and 2147483647 milliseconds (0 means the default)", field)
	}
}

// checkURL says why u is not an absolute http(s) URL. It never quotes u: it
// may hold an expanded secret.
func checkURL(u string) string {
	if why := httpurl.Problem(u); why != "" {
		return "must be an absolute http:// or https:// URL (" + why + ")"
	}
	return ""
}

// isToken reports whether s is an RFC 9110 token, the syntax of header names.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// DecodeConfig strictly decodes the config node of an mcp-client entry,
// expanding ${VAR} and ${VAR:-default} with lookup (nil: no variable is set)
// in command, args, cwd, url and the values of env and headers, and validates
// the result. It returns every problem at once, each with its line, column and
// a path such as config.reconnect.maxAttempts. Unset fields keep their zero
// value (see WithDefaults), except that a reconnect block, even a partial
// one, is merged with DefaultReconnectPolicy.
func DecodeConfig(n *yaml.Node, lookup func(name string) (string, bool)) (Config, error) {
	d := yamlconf.NewDecoder(lookup)
	m, ok := d.Map(n, "config")
	if !ok {
		if !d.Failed("config") {
			d.Errorf(n, "config", "is required: a mapping with at least serverName and transport")
		}
		return Config{}, d.Err()
	}
	m.Reject(yamlKeys()...)

	c := decodeFields(d, m)
	checkTransportKeys(d, m, c.Transport)

	c.check(func(msg string, fields ...string) {
		for _, f := range fields {
			if d.Failed("config."+f) || strings.HasPrefix(f, "reconnect.") && d.Failed("config.reconnect") {
				return
			}
		}
		d.Errorf(yamlconf.Locate(m.Node(), fields[0]), "config."+fields[0], "%s", msg)
	})
	if err := d.Err(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// decodeFields reads every key of the entry's config into a Config; what
// is wrong is reported to d.
func decodeFields(d *yamlconf.Decoder, m *yamlconf.Map) Config {
	var c Config
	c.ServerName, _ = m.String("serverName")
	transport, _ := m.String("transport")
	c.Transport = Transport(transport)
	c.Command, _ = m.ExpandString("command")
	c.Args, _ = m.ExpandStringList("args")
	c.Env, _ = m.ExpandStringMap("env")
	c.Cwd, _ = m.ExpandString("cwd")
	c.URL, _ = m.ExpandString("url")
	c.Headers, _ = m.ExpandStringMap("headers")
	c.Written = Written{
		Command:     writtenAs(m, "command", c.Command),
		Cwd:         writtenAs(m, "cwd", c.Cwd),
		URL:         writtenAs(m, "url", c.URL),
		Credentials: CredentialRefs(m.Node()),
	}
	if v, ok := m.Int("toolCallTimeoutMs", 1, maxMs); ok {
		c.ToolCallTimeout = time.Duration(v) * time.Millisecond
	}
	if v, ok := m.Int("startupTimeoutMs", 1, maxMs); ok {
		c.StartupTimeout = time.Duration(v) * time.Millisecond
	}
	c.FailOnStartupError, _ = m.Bool("failOnStartupError")
	c.ProtocolVersion, _ = m.String("protocolVersion")
	c.Reconnect = decodeReconnect(d, m, c.ServerName)
	c.EnabledTools, _ = m.StringList("enabledTools")
	c.DisabledTools, _ = m.StringList("disabledTools")
	c.OAuth = decodeOAuth(d, m)
	decodeClientFeatures(m, &c)
	c.Sandbox = decodeSandbox(d, m)
	c.Registry = decodeRegistry(d, m)
	return c
}

// decodeRegistry reads registry: {name, version}, both required.
func decodeRegistry(d *yamlconf.Decoder, m *yamlconf.Map) *RegistryRef {
	r, ok := d.Map(m.Value("registry"), m.Path("registry"))
	if !ok {
		return nil
	}
	r.Reject("name", "version")
	ref := &RegistryRef{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &ref.Name}, {"version", &ref.Version}} {
		key, dst := f.key, f.dst
		if !r.Has(key) && !d.Failed(r.Path(key)) {
			d.Errorf(r.Node(), r.Path(key), "is required: the registry entry names the server and its version, like {name: io.github.owner/server, version: 1.0.0}")
			continue
		}
		*dst, _ = r.String(key)
	}
	return ref
}

// decodeClientFeatures reads what the bridge offers the server (resource
// tools, roots, sampling, the log level) and how its tools are shown
// (alwaysLoad).
func decodeClientFeatures(m *yamlconf.Map, c *Config) {
	if show, ok := m.Bool("resourceTools"); ok {
		c.HideResources = !show
	}
	decodeRoots(m, c)
	c.AllowSampling, _ = m.Bool("allowSampling")
	c.LogLevel, _ = m.String("logLevel")
	c.AlwaysLoad, _ = m.Bool("alwaysLoad")
	c.Pin, _ = m.String("pin")
	c.Trusted, _ = m.Bool("trusted")
	scan, _ := m.String("scan")
	c.Scan = ScanMode(scan)
	c.Share, _ = m.String("share")
}

// rootsFromClient is the scalar value of roots that passes the calling
// client's roots through.
const rootsFromClient = "client"

// decodeRoots reads roots: a list of paths, or "client".
func decodeRoots(m *yamlconf.Map, c *Config) {
	n := m.Value("roots")
	if yamlconf.IsNull(n) {
		return
	}
	if r := yamlconf.Resolve(n); r.Kind == yaml.ScalarNode && r.ShortTag() == "!!str" && r.Value == rootsFromClient {
		c.RootsFromClient = true
		return
	}
	if yamlconf.Resolve(n).Kind != yaml.SequenceNode {
		m.Errorf("roots", "must be a list of paths or %q, got %s", rootsFromClient, yamlconf.Describe(n))
		return
	}
	c.Roots, _ = m.ExpandStringList("roots")
}

// checkTransportKeys reports each key only another transport takes, even
// when empty: it shows a misunderstanding worth pointing at.
func checkTransportKeys(d *yamlconf.Decoder, m *yamlconf.Map, t Transport) {
	var keys []string
	switch t {
	case TransportStdio:
		keys = []string{"url", "headers", "oauth"}
	case TransportStreamableHTTP, TransportSSE:
		keys = []string{"command", "args", "env", "cwd", "sandbox"}
	}
	for _, k := range keys {
		if m.Value(k) != nil && !d.Failed(m.Path(k)) {
			m.Errorf(k, "%s is only valid with transport: %s", k, otherTransport(t))
		}
	}
	// OAuth is wired into Streamable HTTP only.
	if t == TransportSSE && m.Value("oauth") != nil && !d.Failed(m.Path("oauth")) {
		m.Errorf("oauth", "oauth is only valid with transport: %s", TransportStreamableHTTP)
	}
}

// writtenAs returns the text of key as written when it differs from its
// expanded value, else "".
func writtenAs(m *yamlconf.Map, key, expanded string) string {
	n := m.Value(key)
	if n == nil || n.Kind != yaml.ScalarNode || n.Value == expanded {
		return ""
	}
	return n.Value
}

// CredentialRefs are the variables an mcp-client entry's config as
// written (config, which need not be valid) names as holding its
// credentials: those its headers, its URL's userinfo or query and its
// OAuth secrets reference, and its assertionEnv (Written.Credentials).
func CredentialRefs(config *yaml.Node) []string {
	names := yamlconf.NodeRefs(yamlconf.Child(config, "headers"))
	if u := yamlconf.Child(config, "url"); u != nil && u.Kind == yaml.ScalarNode {
		names = append(names, yamlconf.URLCredentialRefs(u.Value)...)
	}
	o := yamlconf.Child(config, "oauth")
	for _, at := range [][]string{{"clientSecret"}, {"idp", "clientSecret"}, {"idp", "idToken"}} {
		names = append(names, yamlconf.NodeRefs(yamlconf.Child(o, at...))...)
	}
	return append(names, yamlconf.NamedVars(yamlconf.Child(o, "assertionEnv"))...)
}

// shownHost returns err with the URL's host, where ${VAR} expansion wrote
// it, replaced by its text as written (like ${API_HOST}): HTTP errors name
// the URL they failed on and the host the lookup of which failed, and
// redact keeps a URL's host (it cuts only what follows). The result
// unwraps to err.
func (c Config) shownHost(err error) error {
	if err == nil || c.Written.URL == "" {
		return err
	}
	u, perr := url.Parse(c.URL)
	host, written := "", writtenHost(c.Written.URL)
	if perr == nil {
		host = u.Hostname()
	}
	if host == "" || host == written || !strings.Contains(err.Error(), host) {
		return err
	}
	return errtext.Map(err, func(s string) string { return strings.ReplaceAll(s, host, written) })
}

// writtenHost is the host name in a URL as written, which may hold
// ${VAR} references (so url.Parse may refuse it): what follows "://" and
// any user info, up to the path, query or fragment, without a :port.
func writtenHost(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && isDigits(rest[i+1:]) {
		rest = rest[:i]
	}
	return rest
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func otherTransport(t Transport) Transport {
	if t == TransportStdio {
		return TransportStreamableHTTP // url and headers also go with sse; the newer one is named
	}
	return TransportStdio
}

// decodeReconnect merges the reconnect block into the defaults. Values that
// cannot be represented (strings, fractions, infinities, out-of-range
// integers) are reported here with upstream's wording; the rest, and the
// cross-field rule, by Config.check.
func decodeReconnect(d *yamlconf.Decoder, m *yamlconf.Map, serverName string) *ReconnectPolicy {
	r, ok := d.Map(m.Value("reconnect"), m.Path("reconnect"))
	if !ok {
		return nil // absent or null: defaults (or not a mapping: reported)
	}
	prefix := "mcp-client(" + serverName + "): reconnect"
	keys := []string{"enabled", "initialDelayMs", "maxDelayMs", "maxAttempts"}
	r.RejectFunc(keys, func(k string) string {
		// Upstream's wording, then the did-you-mean every other key gets.
		return fmt.Sprintf("%s.%s is not a reconnect option", prefix, k) + yamlconf.DidYouMean(k, keys)
	})
	p := DefaultReconnectPolicy()
	if v, ok := r.Bool("enabled"); ok {
		p.Enabled = v
	}
	delay := func(key string, dst *time.Duration) {
		if !r.Has(key) {
			return
		}
		v, err := yamlconf.ScalarInt(r.Value(key))
		if err != nil || v < 1 || v > maxMs {
			r.Errorf(key, "%s.%s must be a positive finite number no greater than 2147483647, in whole milliseconds (got %s)", prefix, key, yamlconf.Describe(r.Value(key)))
			return
		}
		*dst = time.Duration(v) * time.Millisecond
	}
	delay("initialDelayMs", &p.InitialDelay)
	delay("maxDelayMs", &p.MaxDelay)
	if r.Has("maxAttempts") {
		v, err := yamlconf.ScalarInt(r.Value("maxAttempts"))
		if err != nil || v < 1 || v > maxSafeInteger {
			r.Errorf("maxAttempts", "%s.maxAttempts must be a positive integer (got %s)", prefix, yamlconf.Describe(r.Value("maxAttempts")))
		} else {
			p.MaxAttempts = int(v)
		}
	}
	return &p
}
