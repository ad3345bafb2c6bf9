package registry

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/confedit"
)

// SplitRef splits a NAME[@VERSION] reference; version is "" when there is
// none (the registry's latest).
func SplitRef(ref string) (name, version string) {
	if i := strings.LastIndexByte(ref, '@'); i > 0 {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// ServerName is the serverName an entry of the registry server named
// registryName takes when the user gives none: the part after its
// namespace, each character a serverName may not hold made "-", no "__",
// at most 32 characters, no "_" or "-" at either end. "" when nothing is
// left.
func ServerName(registryName string) string {
	_, base, _ := strings.Cut(registryName, "/")
	name := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '-'
	}, base)
	for strings.Contains(name, "__") {
		name = strings.ReplaceAll(name, "__", "_")
	}
	return strings.Trim(name[:min(len(name), 32)], "_-")
}

// Node is e as the mcp-client entry of a config file, its id and
// serverName name, its registry name and version recorded (for
// registry outdated), ready for confedit.Append.
func (e Entry) Node(name string) *yaml.Node {
	cfg := confedit.Mapping("serverName", name, "transport", e.Transport)
	if e.Command != "" {
		confedit.AppendPairs(cfg, "command", e.Command)
		confedit.AppendNode(cfg, "args", confedit.FlowList(e.Args))
	}
	if e.URL != "" {
		confedit.AppendPairs(cfg, "url", e.URL)
	}
	for _, m := range []struct {
		key   string
		pairs []Pair
	}{{"env", e.Env}, {"headers", e.Headers}} {
		if len(m.pairs) > 0 {
			n := &yaml.Node{Kind: yaml.MappingNode}
			for _, p := range m.pairs {
				confedit.AppendPairs(n, p.Key, p.Value)
			}
			confedit.AppendNode(cfg, m.key, n)
		}
	}
	ref := confedit.Mapping("name", e.Name, "version", e.Version)
	ref.Style = yaml.FlowStyle
	confedit.AppendNode(cfg, "registry", ref)
	entry := confedit.Mapping("id", name, "name", "mcp-client")
	confedit.AppendNode(entry, "config", cfg)
	return entry
}
