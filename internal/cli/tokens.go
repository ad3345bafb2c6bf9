package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
)

// tokensJSON is the shape of `tools --tokens --json` (documented in the
// README). It is not a chat-completions array, so that `tools --json`
// stays one to paste; fields are only ever added.
type tokensJSON struct {
	Encoding string             `json:"encoding"`
	Total    int                `json:"total"`
	Tools    []toolTokensJSON   `json:"tools"`
	Servers  []serverTokensJSON `json:"servers"`
}

type toolTokensJSON struct {
	Name   string `json:"name"`
	Server string `json:"server"`
	Tokens int    `json:"tokens"`
}

type serverTokensJSON struct {
	Server string `json:"server"`
	Tools  int    `json:"tools"`
	Tokens int    `json:"tokens"`
}

// countTokens counts each tool's definition and sums them by server, in
// the order servers first appear in list.
func countTokens(list []tool.Tool) (tokensJSON, error) {
	out := tokensJSON{Encoding: tokens.Encoding, Tools: []toolTokensJSON{}, Servers: []serverTokensJSON{}}
	at := map[string]int{}
	for _, t := range list {
		n, err := tokens.Tool(t)
		if err != nil {
			return out, err
		}
		out.Tools = append(out.Tools, toolTokensJSON{Name: t.Name, Server: t.Origin.Server, Tokens: n})
		out.Total += n
		i, ok := at[t.Origin.Server]
		if !ok {
			i = len(out.Servers)
			at[t.Origin.Server] = i
			out.Servers = append(out.Servers, serverTokensJSON{Server: t.Origin.Server})
		}
		out.Servers[i].Tools++
		out.Servers[i].Tokens += n
	}
	return out, nil
}

// serverTokens returns each server's total, by name.
func serverTokens(list []tool.Tool) (map[string]int, error) {
	c, err := countTokens(list)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, s := range c.Servers {
		out[s.Server] = s.Tokens
	}
	return out, nil
}

// writeTokens prints what countTokens found: JSON, or a table of tools
// and one of servers.
func writeTokens(w io.Writer, list []tool.Tool, asJSON bool) error {
	c, err := countTokens(list)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(c)
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
