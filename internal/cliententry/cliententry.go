// Package cliententry builds the mcp-client entry that `mcpbridge add`
// writes, from what follows the server's name: a URL for a remote server
// (with headers) or a command (with its environment), and Claude Code's
// --transport names. The entry is a YAML node for internal/confedit to
// append, so that the file keeps its comments.
package cliententry

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/childproc"
	"github.com/mcpbridge/mcpbridge/internal/confedit"
	"github.com/mcpbridge/mcpbridge/internal/loopback"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// Kind is the kind (the entry's name) of a server's entry, as
// internal/kinds/client has it (a test checks), written out so that this
// package stands without the host.
const Kind = "mcp-client"

// Args are what `add NAME ...` was given.
type Args struct {
	Name string
	// Rest follows the name: a command and its arguments, or one URL.
	Rest []string
	// Dashed says Rest came after "--": a command, whatever it looks like.
	Dashed bool
	// URL is --url; Transport is --transport ("" to infer).
	URL       string
	Transport string
	// Headers are "Name: value" (a remote server); Env are NAME=value (a
	// command).
	Headers []string
	Env     []string
	// Cmd begins the command lines errors suggest, for a remote server
	// (remote) or a command: "mcpbridge add" and the flags given that go
	// with it, to be given again. nil is "mcpbridge add".
	Cmd func(remote bool) string
}

// cmd is a.Cmd's line, or "mcpbridge add".
func (a Args) cmd(remote bool) string {
	if a.Cmd == nil {
		return "mcpbridge add"
	}
	return a.Cmd(remote)
}

// New builds the entry of a: a URL (a.URL, or a.Rest's one URL) for a
// remote server, else a command. Its errors say which argument is wrong
// and what to write instead.
func New(a Args) (*yaml.Node, error) {
	if a.Name == "" {
		// Checked here: the id check after the edit names an entry by its
		// id, and this one has none.
		return nil, fmt.Errorf("add: the server's name is empty: want NAME like github (mcpbridge add github -- COMMAND [ARGS...])")
	}
	url, rest, err := urlOrCommand(a)
	if err != nil {
		return nil, err
	}
	transport, err := transportOf(a.Transport, url != "")
	if err != nil {
		return nil, err
	}
	cfg := confedit.Mapping("serverName", a.Name)
	switch {
	case url != "" && len(rest) > 0:
		return nil, fmt.Errorf("add: give either a URL or a command after --, not both")
	case transport == mcpclient.TransportStdio && url != "":
		return nil, fmt.Errorf("add: --transport stdio runs a command: mcpbridge add %s -- COMMAND [ARGS...]", a.Name)
	case url != "":
		err = remoteConfig(cfg, a, transport, url)
	case transport != mcpclient.TransportStdio:
		return nil, fmt.Errorf("add: --transport %s needs the server's URL: mcpbridge add --transport %s %s https://…", a.Transport, a.Transport, a.Name)
	case len(rest) > 0:
		err = stdioConfig(cfg, a, rest)
	default:
		return nil, fmt.Errorf("add: want a command after -- (mcpbridge add %s -- npx -y some-server) or a URL", a.Name)
	}
	if err != nil {
		return nil, err
	}
	entry := confedit.Mapping("id", a.Name, "name", Kind)
	confedit.AppendNode(entry, "config", cfg)
	return entry, nil
}

// urlOrCommand tells the server's URL (--url, or the first argument when
// it is a URL) from its command, refusing what looks like an address written
// without its scheme.
func urlOrCommand(a Args) (url string, rest []string, err error) {
	rest, url = a.Rest, a.URL
	if url != "" && !isURL(url) {
		if err := notAURL(a, url, "--url "); err != nil {
			return "", nil, err
		}
	}
	if url == "" && len(rest) > 0 && isURL(rest[0]) {
		// A URL is never a command: one followed by more (add x URL --
		// cmd) is both, not a program named by its URL.
		url, rest = rest[0], rest[1:]
	}
	if url == "" && len(rest) == 1 && !a.Dashed {
		if err := notAURL(a, rest[0], ""); err != nil {
			return "", nil, err
		}
	}
	return url, rest, nil
}

// NotServer refuses entry, found as name at path, when it is of another
// kind than a server's (permissions, model, gateway): cmd edits servers
// only, and such an entry (the agent's deny rules, say) is not to go by a
// command meant for one. It is nil for a server's entry.
func NotServer(cmd, name, path string, entry *yaml.Node) error {
	if IsServer(entry) {
		return nil
	}
	return fmt.Errorf("%s: %q is %s at %s:%d, not a server: %s takes servers (%s entries) only; to remove it, delete its lines from %s",
		cmd, name, KindOf(entry), path, entry.Line, cmd, Kind, path)
}

// IsServer reports whether entry is a server's: of kind Kind.
func IsServer(entry *yaml.Node) bool {
	k := confedit.Value(entry, "name")
	return k != nil && k.Kind == yaml.ScalarNode && k.Value == Kind
}

// KindOf names entry's kind for a message: "a server", "the permissions
// entry".
func KindOf(entry *yaml.Node) string {
	switch k := confedit.Value(entry, "name"); {
	case IsServer(entry):
		return "a server"
	case k != nil && k.Kind == yaml.ScalarNode && k.Value != "":
		return "the " + k.Value + " entry"
	}
	return "an entry without a kind"
}

// Transport is the transport an entry built by New (or converted from
// Claude Code's JSON) says.
func Transport(entry *yaml.Node) string {
	if cfg := confedit.Value(entry, "config"); cfg != nil {
		if t := confedit.Value(cfg, "transport"); t != nil {
			return t.Value
		}
	}
	return "stdio"
}

// Secret is an environment variable or header of an entry whose value is
// written as it is, though its name says it holds a credential.
type Secret struct {
	// Name is the variable's or the header's (API_KEY, Authorization).
	Name string
	// Var is the variable to refer to instead: ${Var}.
	Var string
}

// LiteralSecrets are entry's env variables and headers, in order, whose
// value is written as it is (no ${VAR} in it) and whose name is a
// secret's: one the child's environment is scrubbed of
// (childproc.SecretName), or a header that carries credentials
// (SecretHeader). A file that holds one
// cannot be shared without it.
func LiteralSecrets(entry *yaml.Node) []Secret {
	cfg := confedit.Value(entry, "config")
	if cfg == nil || cfg.Kind != yaml.MappingNode {
		return nil
	}
	var out []Secret
	for _, field := range []string{"env", "headers"} {
		m := confedit.Value(cfg, field)
		if m == nil || m.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			name, v := m.Content[i].Value, m.Content[i+1]
			if v.Kind != yaml.ScalarNode || v.Value == "" || strings.Contains(v.Value, "${") {
				continue
			}
			header := field == "headers"
			if !childproc.SecretName(name) && !(header && SecretHeader(name)) {
				continue
			}
			ref := name
			if header || !yamlconf.IsVarName(ref) {
				ref = yamlconf.VarName(ref)
			}
			out = append(out, Secret{Name: name, Var: ref})
		}
	}
	return out
}

// SecretHeader reports whether a header's name says it carries a
// credential: one HTTP gives to credentials (Authorization,
// Proxy-Authorization, Cookie), or one named as a secret variable is
// (childproc.SecretName: X-Api-Key), whatever it holds.
func SecretHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Authorization", "Proxy-Authorization", "Cookie":
		return true
	}
	return childproc.SecretName(name)
}

// isURL tells a remote server's address from a command.
func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }

// notAURL refuses arg, given by --url (flag "--url ") or as the one word
// after the name and no "--" (flag ""), when it looks like a server's
// address but is no http:// or https:// URL (localhost:3001/mcp,
// ftp://x/mcp), with the line meant: written as a command, it would make a
// stdio server that can never start.
func notAURL(a Args, arg, flag string) error {
	addr := arg
	if _, after, ok := strings.Cut(arg, "://"); ok {
		addr = after
	} else if !schemeless(arg) {
		return nil
	}
	err := fmt.Errorf("add: %s%q is not a server's URL: one starts with http:// or https:// (%s %s %s%s)",
		flag, arg, a.cmd(true), a.Name, flag, withScheme(addr))
	if flag != "" {
		return err
	}
	return fmt.Errorf("%w, and a command goes after -- (%s %s -- %s)", err, a.cmd(false), a.Name, arg)
}

// schemeless reports whether s is a host with a port, or this machine,
// perhaps with a path: an address written without its scheme. A
// command's name (server.py, ./bin/server) is neither.
func schemeless(s string) bool {
	u, err := url.Parse("http://" + s)
	if err != nil || u.Host == "" || u.User != nil {
		return false
	}
	return u.Port() != "" || loopback.Host(u.Hostname())
}

// withScheme is addr as a URL: http:// for this machine, where a server
// seldom has TLS, else https://.
func withScheme(addr string) string {
	if u, err := url.Parse("http://" + addr); err == nil && loopback.Host(u.Hostname()) {
		return "http://" + addr
	}
	return "https://" + addr
}

// transportOf maps --transport (Claude Code's stdio, http, sse, or
// mcpbridge's streamable-http) to mcpbridge's transport; without it, a URL
// means Streamable HTTP and a command stdio.
func transportOf(t string, remote bool) (mcpclient.Transport, error) {
	switch t {
	case "":
		if remote {
			return mcpclient.TransportStreamableHTTP, nil
		}
		return mcpclient.TransportStdio, nil
	case "stdio":
		return mcpclient.TransportStdio, nil
	case "http", "streamable-http":
		return mcpclient.TransportStreamableHTTP, nil
	case "sse":
		return mcpclient.TransportSSE, nil
	}
	return "", fmt.Errorf("add: --transport %q: want stdio, http or sse", t)
}

// remoteConfig fills cfg for a server at url.
func remoteConfig(cfg *yaml.Node, a Args, transport mcpclient.Transport, url string) error {
	if len(a.Env) > 0 {
		return fmt.Errorf("add: -e/--env is for a command's environment; a remote server takes -H/--header")
	}
	if _, err := ParseHeaders(a.Headers); err != nil {
		return fmt.Errorf("add: %w", err)
	}
	confedit.AppendPairs(cfg, "transport", string(transport), "url", url)
	if len(a.Headers) > 0 {
		confedit.AppendNode(cfg, "headers", confedit.StringMap(a.Headers, func(h string) (string, string) {
			k, v, _ := strings.Cut(h, ":")
			return strings.TrimSpace(k), strings.TrimSpace(v)
		}))
	}
	return nil
}

// stdioConfig fills cfg for a server run as command.
func stdioConfig(cfg *yaml.Node, a Args, command []string) error {
	if len(a.Headers) > 0 {
		return fmt.Errorf("add: -H/--header goes with a remote server's URL")
	}
	confedit.AppendPairs(cfg, "transport", string(mcpclient.TransportStdio), "command", command[0])
	if len(command) > 1 {
		confedit.AppendNode(cfg, "args", confedit.FlowList(command[1:]))
	}
	env, err := envMap(a.Env)
	if err != nil {
		return fmt.Errorf("add: %w", err)
	}
	if env != nil {
		confedit.AppendNode(cfg, "env", env)
	}
	return nil
}

// envMap turns --env K=V flags into a mapping, or nil for none.
func envMap(env []string) (*yaml.Node, error) {
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("--env %q: want NAME=value", kv)
		}
	}
	if len(env) == 0 {
		return nil, nil
	}
	return confedit.StringMap(env, func(kv string) (string, string) {
		k, v, _ := strings.Cut(kv, "=")
		return k, v
	}), nil
}

// ParseHeaders turns "Name: value" strings (--header) into a map.
func ParseHeaders(hs []string) (map[string]string, error) {
	out := make(map[string]string, len(hs))
	for _, h := range hs {
		k, v, ok := strings.Cut(h, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("--header %q: want 'Name: value'", h)
		}
		out[k] = strings.TrimSpace(v)
	}
	return out, nil
}
