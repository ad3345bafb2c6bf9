package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// logsHelp is the help of logs beyond its synopsis.
var logsHelp = fmt.Sprintf(`  NAME        the server's serverName (as in status)

Starts that server alone, as call does, and prints what its stdio child
wrote on stderr while it started, and until it ended if it failed: the last
%d lines, control characters escaped, URL paths and queries cut and the
entry's env and header values shown as [redacted]. Exit status 1 when the
server did not start (its reason follows on stderr).
`, mcpclient.RecentStderrLines)

// logs shows one server's recent stderr (docs/decisions.md §7.2).
func (e *env) logs(ctx context.Context, argv []string) error {
	f, err := parseFlags("logs", specOf("logs"), argv)
	if err != nil {
		return err
	}
	if len(f.args) != 1 {
		return usagef("logs: want NAME, the serverName of one server, got %d arguments", len(f.args))
	}
	name := f.args[0]
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	if err := hasServer("logs", src, name); err != nil {
		return err
	}
	b, err := e.open(ctx, src.only(name), f)
	if err != nil {
		return err
	}
	defer b.close()
	for _, st := range b.statuses {
		if st.Name != name {
			continue
		}
		for _, line := range st.Stderr {
			fmt.Fprintln(e.Stdout, line) // escaped and redacted by mcpclient
		}
		if len(st.Stderr) == 0 && !e.quiet {
			fmt.Fprintf(e.Stderr, "mcpbridge: server %q wrote nothing on stderr\n", name)
		}
	}
	e.reportFailures(b)
	if len(b.failed) > 0 {
		return &exitError{ExitFailed}
	}
	return nil
}

// hasServer says, as cmd, when src has no enabled server called name,
// which servers it has, or the one meant.
func hasServer(cmd string, src *source, name string) error {
	var names []string
	for _, pe := range src.plan.Enabled() {
		if pe.Entry.Name == clientkind.Name {
			names = append(names, pe.Spec.Name)
		}
	}
	if slices.Contains(names, name) {
		return nil
	}
	if s := yamlconf.Suggest(name, names); s != "" {
		return usagef("%s: no server %q in %s: did you mean %q?", cmd, name, src.name, s)
	}
	if len(names) == 0 {
		return usagef("%s: no server %q in %s: it has no enabled server", cmd, name, src.name)
	}
	return usagef("%s: no server %q in %s (its servers: %s)", cmd, name, src.name, strings.Join(names, ", "))
}
