package report

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/confedit"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// Entry is one configured entry as list --json shows it (a stable
// shape: fields are only ever added). Nothing in it comes from ${VAR}
// expansion.
type Entry struct {
	ID     string `json:"id"`
	Plugin string `json:"plugin"`
	// ServerName is the entry's display name (mcp-client: serverName).
	ServerName string `json:"serverName"`
	Transport  string `json:"transport"`
	// State is enabled, disabled or invalid (then Error says why).
	State string `json:"state"`
	// Origin is where the entry is written: file:line.
	Origin string `json:"origin"`
	Error  string `json:"error,omitempty"`
}

// EntryDetail is get --json: the entry (serverName "" for an entry of
// another kind than mcp-client), its command or URL as written, and the names (never the values) of its headers and
// environment variables; the trust and confinement settings as written,
// when present.
type EntryDetail struct {
	Entry
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	URL     string   `json:"url,omitempty"`
	Headers []string `json:"headers"`
	Env     []string `json:"env"`
	Roots   any      `json:"roots,omitempty"`
	Sandbox any      `json:"sandbox,omitempty"`
	Pin     any      `json:"pin,omitempty"`
	// Registry is the MCP Registry server and version the entry was made
	// from (add --from-registry).
	Registry any `json:"registry,omitempty"`
}

// Describe is what list shows of pe.
func Describe(pe host.PlanEntry) Entry {
	ej := Entry{ID: pe.Entry.ID, Plugin: pe.Entry.Name, ServerName: pe.Spec.Name, State: "enabled",
		Origin: fmt.Sprintf("%s:%d", pe.Entry.File, pe.Entry.Line)}
	switch {
	case pe.Entry.Disabled:
		ej.State = "disabled"
	case pe.Err != nil:
		ej.State, ej.Error = "invalid", pe.Err.Error()
	}
	if cfg, ok := pe.Spec.Config.(mcpclient.Config); ok {
		ej.Transport = string(cfg.Transport)
	} else if pe.Entry.Name == clientkind.Name {
		ej.Transport = writtenString(pe, "transport")
		if ej.ServerName == "" {
			ej.ServerName = writtenString(pe, "serverName")
		}
	}
	return ej
}

// Server is e's server name: its ServerName when e is a server's
// (mcp-client) entry, "" for an entry of another kind, whose display
// name is no server's.
func (e Entry) Server() string {
	if e.Plugin != clientkind.Name {
		return ""
	}
	return e.ServerName
}

// Detail is what get shows of pe: values as written in the file, names
// only for headers and env.
func Detail(pe host.PlanEntry) EntryDetail {
	d := EntryDetail{Entry: Describe(pe), Headers: keysOf(pe, "headers"), Env: keysOf(pe, "env")}
	d.ServerName = d.Server()
	d.Command, d.URL = writtenString(pe, "command"), writtenString(pe, "url")
	if n := Node(pe, "args"); n != nil && n.Kind == yaml.SequenceNode {
		for _, a := range n.Content {
			d.Args = append(d.Args, a.Value)
		}
	}
	d.Roots, d.Sandbox, d.Pin = written(pe, "roots"), written(pe, "sandbox"), written(pe, "pin")
	d.Registry = written(pe, "registry")
	return d
}

// Node is the node of key in pe's config as written, or nil.
func Node(pe host.PlanEntry, key string) *yaml.Node {
	if pe.Entry.Config == nil {
		return nil
	}
	if n := confedit.Value(pe.Entry.Config, key); n != nil {
		return yamlconf.Resolve(n)
	}
	return nil
}

func writtenString(pe host.PlanEntry, key string) string {
	if n := Node(pe, key); n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// written is the value of key as written (any YAML), or nil when absent.
func written(pe host.PlanEntry, key string) any {
	n := Node(pe, key)
	if n == nil {
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil
	}
	return v
}

// keysOf are the keys of the mapping key of pe's config, in file order.
func keysOf(pe host.PlanEntry, key string) []string {
	out := []string{}
	if n := Node(pe, key); n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value)
		}
	}
	return out
}
