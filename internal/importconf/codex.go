package importconf

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"gopkg.in/yaml.v3"
)

// fromCodex reads the [mcp_servers.NAME] tables of a Codex config.toml.
// Codex's other settings are no concern of mcpbridge's.
func fromCodex(filename string, data []byte) ([]*server, []Note, map[Pos]string, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		if de, ok := err.(*toml.DecodeError); ok {
			line, col := de.Position()
			return nil, nil, nil, fmt.Errorf("%s:%d:%d: invalid TOML: %s", filename, line, col, strings.TrimPrefix(de.Error(), "toml: "))
		}
		return nil, nil, nil, fmt.Errorf("%s: invalid TOML: %v", filename, err) // untested: go-toml reports syntax as DecodeError
	}
	tables, ok := doc["mcp_servers"].(map[string]any)
	if !ok {
		return nil, nil, nil, fmt.Errorf("%s: mcp_servers must be a table of servers ([mcp_servers.NAME])", filename)
	}
	pos := tomlPositions(data)
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, name)
	}
	// File order, as far as it is known.
	slices.SortFunc(names, func(a, b string) int {
		pa, pb := pos["mcp_servers."+a], pos["mcp_servers."+b]
		return cmp.Or(cmp.Compare(pa.Line, pb.Line), cmp.Compare(a, b))
	})
	c := &codexConverter{converter: converter{root: "mcp_servers"}, pos: pos}
	var out []*server
	for _, name := range names {
		out = append(out, c.server(name, tables[name]))
	}
	paths := make(map[Pos]string, len(pos))
	for path, p := range pos {
		paths[p] = path
	}
	return out, c.notes, paths, nil
}

type codexConverter struct {
	converter
	pos map[string]Pos // dotted key path → position of its key
}

// node turns a decoded TOML value at path into a yaml.Node positioned at
// path's key. Strings are taken literally (Codex expands nothing), so a
// $ is written $$.
func (c *codexConverter) node(v any, path string) *yaml.Node {
	p := c.pos[path]
	n := &yaml.Node{Kind: yaml.ScalarNode, Line: p.Line, Column: p.Column}
	switch v := v.(type) {
	case string:
		n.Tag, n.Value = "!!str", strings.ReplaceAll(v, "$", "$$")
	case int64:
		n.Tag, n.Value = "!!int", strconv.FormatInt(v, 10)
	case float64:
		n.Tag, n.Value = "!!float", strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		n.Tag, n.Value = "!!bool", strconv.FormatBool(v)
	case []any:
		n.Kind, n.Tag, n.Style = yaml.SequenceNode, "!!seq", yaml.FlowStyle
		for _, item := range v {
			n.Content = append(n.Content, c.node(item, path))
		}
	case map[string]any:
		n.Kind, n.Tag = yaml.MappingNode, "!!map"
		for _, k := range sortedKeys(v) {
			kn := c.node(k, path+"."+k)
			kn.Value = k
			n.Content = append(n.Content, kn, c.node(v[k], path+"."+k))
		}
	default:
		n.Tag, n.Value = "!!str", fmt.Sprint(v) // dates and times
	}
	return n
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// codexFields are the keys of a Codex server that map.
var codexFields = []string{"command", "args", "env", "env_vars", "cwd", "url", "bearer_token_env_var", "http_headers",
	"env_http_headers", "startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec", "enabled", "required",
	"enabled_tools", "disabled_tools"}

// server converts one [mcp_servers.NAME] table.
func (c *codexConverter) server(name string, v any) *server {
	path := "mcp_servers." + name
	key := c.node(name, path)
	key.Value = name
	s := c.newServer(key)
	t, ok := v.(map[string]any)
	if !ok {
		c.mistake(s, key, "", "must be a table with command or url ([mcp_servers.%s]), got %v", name, v)
		return s
	}
	field := func(k string) *yaml.Node {
		if _, ok := t[k]; !ok {
			return nil
		}
		return c.node(t[k], path+"."+k)
	}
	switch transport := c.transport(s, t, key); transport {
	case "": // nothing to run: the entry's problem is a note (transport)
	case "stdio":
		c.unusedKeys(s, t, path, transport)
		s.set("transport", at(str("stdio"), key))
		c.setAll(s, field, "command", "command", "args", "args", "cwd", "cwd")
		c.env(s, t, path, field("env"))
	default:
		c.unusedKeys(s, t, path, transport)
		s.set("transport", at(str("streamable-http"), key))
		c.setAll(s, field, "url", "url")
		c.headers(s, t, path, field("http_headers"))
	}
	c.timeouts(s, field)
	if n := field("enabled"); n != nil && n.Value == "false" {
		s.disabled = true
	}
	if n := field("required"); n != nil && n.Value == "true" {
		s.set("failOnStartupError", n)
	}
	c.toolFilter(s, field("enabled_tools"), field("disabled_tools"), "disabled_tools")
	c.unknownKeys(s, t, path)
	return s
}

// transport is the transport of the server table t: stdio with a command,
// Streamable HTTP with a url, and "" with neither, a mistake noted at key
// unless a misspelt key (comand) says it better.
func (c *codexConverter) transport(s *server, t map[string]any, key *yaml.Node) string {
	_, command := t["command"]
	_, url := t["url"]
	switch {
	case command:
		return "stdio"
	case url:
		return "streamable-http"
	}
	if !slices.ContainsFunc(sortedKeys(t), func(k string) bool { return codexMisspelt(t, k) != "" }) {
		c.mistake(s, key, "", noTransport)
	}
	return ""
}

// unknownKeys notes the keys of the server table t (at path) that map to
// nothing: one close to a key mcpbridge reads (comand) is a mistake, the
// others are left out.
func (c *codexConverter) unknownKeys(s *server, t map[string]any, path string) {
	for _, k := range sortedKeys(t) {
		kn := c.node(k, path+"."+k)
		switch m := codexMisspelt(t, k); {
		case slices.Contains(codexFields, k):
		case m != "":
			c.mistake(s, kn, k, "unknown field: did you mean %q?", m)
		default:
			c.note(s, kn, k, "not used by mcpbridge (left out)")
		}
	}
}

// codexMisspelt is the key of a Codex server that k (of the table t)
// misspells, or "".
func codexMisspelt(t map[string]any, k string) string {
	return misspelling(k, codexFields, func(f string) bool { _, ok := t[f]; return ok })
}

// codexTransportFields are the keys of a Codex server that go with one
// transport only.
var codexTransportFields = map[string][]string{
	"stdio":           {"command", "args", "env", "env_vars", "cwd"},
	"streamable-http": {"url", "http_headers", "env_http_headers", "bearer_token_env_var"},
}

// unusedKeys notes the keys of the server table t (at path) that belong
// to the transport it does not use: each is left out.
func (c *codexConverter) unusedKeys(s *server, t map[string]any, path, transport string) {
	other := codexTransportFields["streamable-http"]
	if transport != "stdio" {
		other = codexTransportFields["stdio"]
	}
	for _, k := range sortedKeys(t) {
		if slices.Contains(other, k) {
			c.note(s, c.node(k, path+"."+k), k, "not used for %s server (left out)", withArticle(transport))
		}
	}
}

// setAll copies pairs of (Codex key, config key) that are present.
func (c *codexConverter) setAll(s *server, field func(string) *yaml.Node, pairs ...string) {
	for i := 0; i+1 < len(pairs); i += 2 {
		if n := field(pairs[i]); n != nil {
			s.set(pairs[i+1], n)
		}
	}
}

// env is env plus env_vars, the names Codex forwards from its own
// environment: mcpbridge forwards most variables anyway, but not those
// that look like secrets, so each is set explicitly.
func (c *codexConverter) env(s *server, t map[string]any, path string, env *yaml.Node) {
	vars, _ := t["env_vars"].([]any)
	if env == nil && len(vars) == 0 {
		return
	}
	if env == nil {
		env = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	for _, v := range vars {
		name := fmt.Sprint(v)
		env.Content = append(env.Content, str(name), strAt("${"+name+":-}", c.pos[path+".env_vars"]))
	}
	s.set("env", env)
}

// headers is http_headers plus the headers whose values come from the
// environment (env_http_headers, bearer_token_env_var).
func (c *codexConverter) headers(s *server, t map[string]any, path string, headers *yaml.Node) {
	fromEnv, _ := t["env_http_headers"].(map[string]any)
	bearer, hasBearer := t["bearer_token_env_var"].(string)
	if headers == nil && len(fromEnv) == 0 && !hasBearer {
		return
	}
	if headers == nil {
		headers = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	add := func(name, value, at string) {
		headers.Content = append(headers.Content, str(name), strAt(value, c.pos[at]))
	}
	for _, h := range sortedKeys(fromEnv) {
		add(h, "${"+fmt.Sprint(fromEnv[h])+"}", path+".env_http_headers."+h)
	}
	if hasBearer {
		add("Authorization", "Bearer ${"+bearer+"}", path+".bearer_token_env_var")
	}
	s.set("headers", headers)
}

// timeouts maps Codex's seconds (fractions allowed) to milliseconds. One
// out of mcpbridge's range is noted in the file's unit and left out.
func (c *codexConverter) timeouts(s *server, field func(string) *yaml.Node) {
	for _, t := range []struct {
		key, to, unit string
		ms            float64 // per unit
	}{
		{"startup_timeout_sec", "startupTimeoutMs", "seconds", 1000}, {"startup_timeout_ms", "startupTimeoutMs", "milliseconds", 1},
		{"tool_timeout_sec", "toolCallTimeoutMs", "seconds", 1000},
	} {
		n := field(t.key)
		if n == nil {
			continue
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if ms := f * t.ms; err != nil || n.Kind != yaml.ScalarNode || ms < 1 || ms > math.MaxInt32 {
			c.note(s, n, t.key, "must be a positive number of %s, at most %d, got %s (left out)", t.unit, int64(math.MaxInt32/t.ms), n.Value)
			continue
		}
		s.set(t.to, at(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(f*t.ms), 10)}, n))
	}
}

// tomlPositions finds where each key of a TOML file is written, as dotted
// paths (mcp_servers.github, mcp_servers.github.env.TOKEN): table headers
// and key = value lines, outside multi-line strings. It is a line scanner,
// not a parser: good enough to point at a key, and a key it misses just
// has no position.
func tomlPositions(data []byte) map[string]Pos {
	pos := map[string]Pos{}
	table := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	inMulti := false
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.Count(text, `"""`)%2 == 1 || strings.Count(text, `'''`)%2 == 1 {
			inMulti = !inMulti
			continue
		}
		trimmed := strings.TrimLeft(text, " \t")
		col := len(text) - len(trimmed) + 1
		switch {
		case inMulti || trimmed == "" || trimmed[0] == '#':
		case strings.HasPrefix(trimmed, "["):
			header := strings.Trim(strings.SplitN(trimmed, "]", 2)[0], "[ \t")
			table = strings.Join(splitKey(header), ".")
			if _, seen := pos[table]; !seen {
				pos[table] = Pos{line, col}
			}
		default:
			k, _, ok := strings.Cut(trimmed, "=")
			if !ok {
				continue
			}
			path := strings.Join(append(splitKey(table), splitKey(k)...), ".")
			pos[path] = Pos{line, col}
		}
	}
	return pos
}

// splitKey splits a dotted TOML key, unquoting its parts.
func splitKey(k string) []string {
	var parts []string
	var cur strings.Builder
	quote := byte(0)
	for i := 0; i < len(k); i++ {
		ch := k[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(ch)
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(ch)
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" || len(parts) > 0 {
		parts = append(parts, s)
	}
	return parts
}
