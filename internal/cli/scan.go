package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

const scanHelp = `Starts the servers and scans every tool and prompt definition (titles,
descriptions, every schema string, enum values, defaults, prompt
arguments) for text aimed at the model: hidden characters, <IMPORTANT>
blocks, requests for keys or files, instructions to keep things from the
user, shadowing of other tools, exfiltration links, base64 payloads and
padding (docs/scan.md). Every entry is scanned, whatever its scan: setting.

Flags:
  --json    the findings as a JSON array of
            {"tool","server","severity","rule","field","excerpt"}
            (field is a JSON pointer into the definition; prompts add "kind": "prompt")

Exit status: 1 when a finding is medium or high, or a server could not be
scanned; 0 otherwise; 2 on a usage or config error.
`

// scan starts the servers with every definition scanned and prints the
// findings.
func (e *env) scan(ctx context.Context, argv []string) error {
	f, err := parseFlags("scan", specOf("scan"), argv)
	if err != nil {
		return err
	}
	if len(f.args) > 0 {
		return usagef("scan: unexpected argument %q", f.args[0])
	}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	e.scanAll = true
	b, err := e.open(ctx, src, f)
	if b == nil {
		return err
	}
	defer b.close()
	e.reportFailures(b)
	findings := scanFindings(b.statuses)
	if f.json {
		if err := writeJSON(e.Stdout, findings); err != nil {
			return fmt.Errorf("scan: writing JSON: %w", err)
		}
	} else {
		writeFindings(e.Stdout, findings)
		e.scanSummary(b, findings)
	}
	if flagged(findings) || len(b.failed) > 0 {
		return &exitError{ExitFailed}
	}
	return nil
}

// scanFindings gathers the servers' findings in config order; never nil,
// so that --json prints [] for none.
func scanFindings(statuses []host.Status) []host.ScanFinding {
	out := []host.ScanFinding{}
	for _, st := range statuses {
		if st.Scan != nil {
			out = append(out, st.Scan.Findings...)
		}
	}
	return out
}

func flagged(fs []host.ScanFinding) bool {
	for _, f := range fs {
		if f.Severity != "low" {
			return true
		}
	}
	return false
}

// writeFindings prints one row per finding; a server's text is escaped.
func writeFindings(w io.Writer, fs []host.ScanFinding) {
	if len(fs) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEVERITY\tSERVER\tTOOL\tRULE\tFIELD\tEXCERPT")
	for _, f := range fs {
		name := f.Tool
		if f.Kind != "" {
			name += " (" + f.Kind + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Severity, f.Server, cell(name), f.Rule, cell(f.Field), termsafe.Line(f.Excerpt))
	}
	tw.Flush()
}

// scanSummary counts the findings by severity on stderr.
func (e *env) scanSummary(b *bridge, fs []host.ScanFinding) {
	n := map[string]int{}
	for _, f := range fs {
		n[f.Severity]++
	}
	tools, prompts, scanned := scannedCounts(b.statuses)
	prompts += len(b.reg.Prompts())
	of := fmt.Sprintf("%s and %s of %s", count(tools, "tool"), count(prompts, "prompt"), count(scanned, "server"))
	if len(fs) == 0 {
		fmt.Fprintf(e.Stderr, "no findings in %s\n", of)
		return
	}
	fmt.Fprintf(e.Stderr, "%s (%d high, %d medium, %d low) in %s\n", count(len(fs), "finding"), n["high"], n["medium"], n["low"], of)
}

// count is n and noun, plural but for one: "1 tool", "2 tools".
func count(n int, noun string) string {
	return strconv.Itoa(n) + " " + plural(n, noun, noun+"s")
}

// scannedCounts counts the ready servers, and the tools and prompts the
// scan saw that the registry does not list: every published tool (a
// server's Tools), and the definitions a pin withholds, which the scan
// sees all the same (the registry's prompts are the caller's to add).
func scannedCounts(statuses []host.Status) (tools, heldPrompts, servers int) {
	for _, st := range statuses {
		if st.State != host.StateReady {
			continue
		}
		servers++
		tools += st.Tools
		for _, n := range st.PinNotes {
			switch { // the notes' shape: mcpclient.StatusDetails.PinNotes
			case strings.HasPrefix(n, "withheld tool "):
				tools++
			case strings.HasPrefix(n, "withheld prompt "):
				heldPrompts++
			}
		}
	}
	return tools, heldPrompts, servers
}

// reportScan says on stderr, for each server whose definitions the scan
// flagged, how many and which are withheld, pointing at the scan command
// (with the SOURCE of f).
func (e *env) reportScan(statuses []host.Status, f *flags) {
	for _, st := range statuses {
		if st.Scan == nil || !flagged(st.Scan.Findings) {
			continue
		}
		names := map[string]bool{}
		for _, f := range st.Scan.Findings {
			if f.Severity != "low" {
				names[f.Tool] = true
			}
		}
		what := "definitions"
		if len(names) == 1 {
			what = "definition"
		}
		fmt.Fprintf(e.Stderr, "mcpbridge: %s: the definition scan flagged %d %s", st.ID, len(names), what)
		if len(st.Scan.Held) > 0 {
			fmt.Fprintf(e.Stderr, ", withheld (scan: hold): %s", termsafe.Line(strings.Join(st.Scan.Held, ", ")))
		}
		fmt.Fprintf(e.Stderr, "; 'mcpbridge scan%s' shows the findings\n", termsafe.Line(sourceArgs(f)))
	}
}
