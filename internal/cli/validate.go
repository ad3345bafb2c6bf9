package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/configsource"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
	"github.com/mcpbridge/mcpbridge/internal/sandbox"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// validate parses and validates the config file with every plugin's rules,
// without starting anything, and prints a short summary; every problem is
// printed with file:line (exit status 2). It never prints a value that came
// from ${VAR} expansion: the summary shows ids, plugins, serverNames and
// transports, none of which is expanded.
func (e *env) validate(argv []string) error {
	f, err := parseFlags("validate", specOf("validate"), argv)
	if err != nil {
		return err
	}
	if len(f.args) > 0 {
		return usagef("validate: unexpected argument %q", f.args[0])
	}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	if err := planErrors(src.plan); err != nil {
		return &configError{err}
	}
	if err := checkLock(e, src, f); err != nil {
		return &configError{err}
	}
	entries := src.plan.Entries
	enabled := len(src.plan.Enabled())
	fmt.Fprintf(e.Stdout, "%s: OK, %d %s (%d enabled, %d disabled)\n", src.name, len(entries), plural(len(entries), "entry", "entries"), enabled, len(entries)-enabled)
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	for _, pe := range entries {
		if pe.Entry.Disabled {
			// The name of a disabled entry is not checked: it may hold anything.
			fmt.Fprintf(tw, "  %s\t%s\t(disabled, not checked)\n", pe.Entry.ID, termsafe.Line(pe.Entry.Name))
			continue
		}
		names := ""
		for _, cl := range pe.Spec.Claims {
			names += cl.Key + " " + cl.Value
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", pe.Entry.ID, pe.Entry.Name, termsafe.Line(names), termsafe.Line(pe.Spec.Summary))
	}
	tw.Flush()
	policyWarnings(e, src.plan)
	return nil
}

// policyWarnings prints, on stderr, what the gateway entry's policy hides
// without saying so or can never match, as serve logs it when it takes
// the policy into use; validate knows neither serve's transport nor
// --token-env, so it warns of what no way of running the config reaches.
func policyWarnings(e *env, plan *host.Plan) {
	for _, pe := range plan.Enabled() {
		cfg, ok := pe.Spec.Config.(gatewayauth.Config)
		if !ok {
			continue
		}
		p, err := gatewayauth.NewPolicy(cfg.Policy, cfg.HasPolicy)
		if err != nil {
			continue // Decode compiled it: it does not fail here
		}
		for _, w := range p.Warnings(gatewayauth.ReachOf(cfg, gatewayrun.BuiltinTools(), gatewayauth.AnyWay...)) {
			fmt.Fprintf(e.Stderr, "%s:%d: warning: entry %q: policy rule (%s): %s\n", pe.Entry.File, w.Line, pe.Entry.ID, termsafe.Line(w.Callers), termsafe.Line(w.Msg))
		}
	}
}

// planErrors are the problems that keep plan from loading as written:
// its invalid entries, and sandbox paths that do not exist; nil when none.
func planErrors(plan *host.Plan) error {
	if err := configsource.InvalidErrors(plan); err != nil {
		return err
	}
	return sandboxPathErrors(plan)
}

// sandboxPathErrors reports each sandbox path of an enabled mcp-client
// entry that does not exist, at the path as written: at run time it fails
// that entry's start (Landlock can only allow what exists), so validate,
// which starts nothing, checks it here.
func sandboxPathErrors(plan *host.Plan) error {
	var errs confpos.Errors
	for _, pe := range plan.Enabled() {
		cfg, ok := pe.Spec.Config.(mcpclient.Config)
		if !ok || cfg.Sandbox == nil {
			continue
		}
		for _, bad := range sandbox.CheckPaths(*cfg.Sandbox, cfg.Cwd) {
			at := "config." + bad.Key()
			msg := fmt.Sprintf("%v: the sandbox can only allow a path that exists (create it, or correct the path)", bad.Err)
			if n := yamlconf.Locate(pe.Entry.Node, at); n != nil {
				msg = fmt.Sprintf("%q: %s", n.Value, msg) // as written: never an expanded value
			}
			errs = append(errs, confpos.AsErrors(host.EntryError(pe.Entry.File, pe.Entry, at, msg))...)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
