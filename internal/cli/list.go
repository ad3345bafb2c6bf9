package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/confedit"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// entryJSON is one configured entry as list --json shows it (a stable
// shape: fields are only ever added). Nothing in it comes from ${VAR}
// expansion.
type entryJSON struct {
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

// entryDetailJSON is get --json: the entry, its command or URL as
// written, and the names (never the values) of its headers and
// environment variables; the trust and confinement settings as written,
// when present.
type entryDetailJSON struct {
	entryJSON
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

// list shows the configured entries and where each comes from, starting
// nothing.
func (e *env) list(argv []string) error {
	f, err := parseFlags("list", specOf("list"), argv)
	if err != nil {
		return err
	}
	if len(f.args) > 0 {
		return usagef("list: unexpected argument %q", f.args[0])
	}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	out := make([]entryJSON, 0, len(src.plan.Entries))
	for _, pe := range src.plan.Entries {
		out = append(out, describeEntry(pe))
	}
	if f.json {
		return writeJSON(e.Stdout, out)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSERVER\tTRANSPORT\tSTATE\tORIGIN")
	for _, ej := range out {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ej.ID, cell(ej.ServerName), cell(ej.Transport), ej.State, termsafe.Line(ej.Origin))
	}
	tw.Flush()
	for _, ej := range out {
		if ej.Error != "" {
			fmt.Fprintf(e.Stderr, "mcpbridge: %s\n", termsafe.Text(ej.Error))
		}
	}
	return nil
}

// get shows one entry, by id or serverName, starting nothing.
func (e *env) get(argv []string) error {
	f, err := parseFlags("get", specOf("get"), argv)
	if err != nil {
		return err
	}
	if len(f.args) != 1 {
		return usagef("get: want NAME, got %d arguments", len(f.args))
	}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	pe, ok := findPlanEntry(src.plan, f.args[0])
	if !ok {
		return noEntry("get", src.plan, f.args[0])
	}
	d := detailEntry(pe)
	if f.json {
		return writeJSON(e.Stdout, d)
	}
	writeDetail(e, d)
	return nil
}

// findPlanEntry finds the entry whose id, else display name, is name.
func findPlanEntry(plan *host.Plan, name string) (host.PlanEntry, bool) {
	for _, by := range []func(host.PlanEntry) string{
		func(pe host.PlanEntry) string { return pe.Entry.ID },
		func(pe host.PlanEntry) string { return pe.Spec.Name },
	} {
		if i := slices.IndexFunc(plan.Entries, func(pe host.PlanEntry) bool { return by(pe) == name }); i >= 0 {
			return plan.Entries[i], true
		}
	}
	return host.PlanEntry{}, false
}

// noEntry is the usage error of a name no entry has, with the name meant.
func noEntry(cmd string, plan *host.Plan, name string) error {
	var names []string
	for _, pe := range plan.Entries {
		names = append(names, pe.Entry.ID, pe.Spec.Name)
	}
	if s := yamlconf.Suggest(name, names); s != "" {
		return usagef("%s: no server %q in %s: did you mean %q?", cmd, name, plan.Source, s)
	}
	return usagef("%s: no server %q in %s", cmd, name, plan.Source)
}

// describeEntry is what list shows of pe.
func describeEntry(pe host.PlanEntry) entryJSON {
	ej := entryJSON{ID: pe.Entry.ID, Plugin: pe.Entry.Name, ServerName: pe.Spec.Name, State: "enabled",
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

// detailEntry is what get shows of pe: values as written in the file,
// names only for headers and env.
func detailEntry(pe host.PlanEntry) entryDetailJSON {
	d := entryDetailJSON{entryJSON: describeEntry(pe), Headers: keysOf(pe, "headers"), Env: keysOf(pe, "env")}
	d.Command, d.URL = writtenString(pe, "command"), writtenString(pe, "url")
	if n := configNode(pe, "args"); n != nil && n.Kind == yaml.SequenceNode {
		for _, a := range n.Content {
			d.Args = append(d.Args, a.Value)
		}
	}
	d.Roots, d.Sandbox, d.Pin = written(pe, "roots"), written(pe, "sandbox"), written(pe, "pin")
	d.Registry = written(pe, "registry")
	return d
}

// configNode is the node of key in pe's config as written, or nil.
func configNode(pe host.PlanEntry, key string) *yaml.Node {
	if pe.Entry.Config == nil {
		return nil
	}
	if n := confedit.Value(pe.Entry.Config, key); n != nil {
		return yamlconf.Resolve(n)
	}
	return nil
}

func writtenString(pe host.PlanEntry, key string) string {
	if n := configNode(pe, key); n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// written is the value of key as written (any YAML), or nil when absent.
func written(pe host.PlanEntry, key string) any {
	n := configNode(pe, key)
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
	if n := configNode(pe, key); n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value)
		}
	}
	return out
}

// writeDetail prints get's text form, one "key: value" line each.
func writeDetail(e *env, d entryDetailJSON) {
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 1, ' ', 0)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, termsafe.Line(v))
		}
	}
	line("id", d.ID)
	line("plugin", d.Plugin)
	line("serverName", d.ServerName)
	line("state", d.State)
	line("origin", d.Origin)
	line("transport", d.Transport)
	line("command", d.Command)
	line("args", strings.Join(d.Args, " "))
	line("url", d.URL)
	line("headers", strings.Join(d.Headers, ", "))
	line("env", strings.Join(d.Env, ", "))
	for _, kv := range []struct {
		k string
		v any
	}{{"roots", d.Roots}, {"sandbox", d.Sandbox}, {"pin", d.Pin}, {"registry", d.Registry}} {
		if kv.v != nil {
			b, _ := json.Marshal(kv.v)
			line(kv.k, string(b))
		}
	}
	tw.Flush()
	if d.Error != "" {
		fmt.Fprintf(e.Stderr, "mcpbridge: %s\n", termsafe.Text(d.Error))
	}
}

// writeJSON prints v indented, as the other --json outputs.
func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
