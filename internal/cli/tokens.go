package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcpbridge/mcpbridge/internal/report"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
)

// writeTokens prints what report.CountTokens found: JSON, or a table of tools
// and one of servers.
func writeTokens(w io.Writer, list []tool.Tool, asJSON bool) error {
	c, err := report.CountTokens(list)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, c)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tTOKENS")
	for _, t := range c.Tools {
		fmt.Fprintf(tw, "%s\t%d\n", termsafe.Line(t.Name), t.Tokens)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTOKENS\tTOOLS")
	for _, s := range c.Servers {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", termsafe.Line(dash(s.Server)), s.Tokens, s.Tools)
	}
	fmt.Fprintf(tw, "total (%s)\t%d\t%d\n", tokens.Encoding, c.Total, len(c.Tools))
	return tw.Flush()
}
