package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/mcpbridge/mcpbridge/internal/termsafe"
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
	if err := invalidErrors(src.plan); err != nil {
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
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
