package permissions

import (
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/confedit"
)

// ID is the id of the entry Allow appends to a file that has none.
const ID = "permissions"

// Allow adds pattern to the allow list of the first enabled permissions
// entry of list (the entry list of doc, parsed from data by
// confedit.Parse), or appends an entry with it, and returns the file's new
// text. An existing entry is rewritten in place from its node tree (its
// comments kept); every other line of the file stays as it was. A pattern
// already allowed is not added twice.
func Allow(data []byte, doc, list *yaml.Node, pattern string) ([]byte, error) {
	i := slices.IndexFunc(list.Content, isEntry)
	if i < 0 {
		entry := confedit.Mapping("id", ID, "name", Name)
		confedit.AppendNode(entry, "config", &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{confedit.Scalar("allow"), confedit.FlowList([]string{pattern})}})
		return confedit.Append(data, doc, list, entry)
	}
	entry := list.Content[i]
	cfg := confedit.Value(entry, "config")
	if cfg == nil || cfg.Kind != yaml.MappingNode {
		cfg = &yaml.Node{Kind: yaml.MappingNode}
		confedit.SetValue(entry, "config", cfg)
	}
	allow := confedit.Value(cfg, "allow")
	switch {
	case allow == nil || allow.Kind != yaml.SequenceNode:
		confedit.SetValue(cfg, "allow", confedit.FlowList([]string{pattern}))
	case !slices.ContainsFunc(allow.Content, func(n *yaml.Node) bool { return n.Value == pattern }):
		allow.Content = append(allow.Content, confedit.Scalar(pattern))
	}
	return confedit.Replace(data, doc, list, i)
}

// isEntry reports an enabled permissions entry of a list.
func isEntry(item *yaml.Node) bool {
	if item.Kind != yaml.MappingNode {
		return false
	}
	name, disabled := confedit.Value(item, "name"), confedit.Value(item, "disabled")
	off := false
	if disabled != nil && disabled.Decode(&off) != nil {
		off = true // not a boolean: the host refuses the entry, so never write to it
	}
	return name != nil && name.Value == Name && !off
}
