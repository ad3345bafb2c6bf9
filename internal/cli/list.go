package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/report"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

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
	out := make([]report.Entry, 0, len(src.plan.Entries))
	for _, pe := range src.plan.Entries {
		out = append(out, report.Describe(pe))
	}
	if f.json {
		return writeJSON(e.Stdout, out)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPLUGIN\tSERVER\tTRANSPORT\tSTATE\tORIGIN")
	for _, ej := range out {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ej.ID, cell(ej.Plugin), cell(ej.Server()), cell(ej.Transport), ej.State, termsafe.Line(ej.Origin))
	}
	tw.Flush()
	for _, ej := range out {
		if ej.Error != "" {
			fmt.Fprintf(e.Stderr, "mcpbridge: %s\n", termsafe.Lines(ej.Error))
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
	d := report.Detail(pe)
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

// writeDetail prints get's text form, one "key: value" line each.
func writeDetail(e *env, d report.EntryDetail) {
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
		fmt.Fprintf(e.Stderr, "mcpbridge: %s\n", termsafe.Lines(d.Error))
	}
}

// writeJSON prints v indented, as the other --json outputs.
func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
