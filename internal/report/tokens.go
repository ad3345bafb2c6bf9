package report

import (
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Tokens is the shape of `tools --tokens --json` (documented in the
// README). It is not a chat-completions array, so that `tools --json`
// stays one to paste; fields are only ever added.
type Tokens struct {
	Encoding string         `json:"encoding"`
	Total    int            `json:"total"`
	Tools    []ToolTokens   `json:"tools"`
	Servers  []ServerTokens `json:"servers"`
}

// ToolTokens are one tool's.
type ToolTokens struct {
	Name   string `json:"name"`
	Server string `json:"server"`
	Tokens int    `json:"tokens"`
}

// ServerTokens are one server's tools'.
type ServerTokens struct {
	Server string `json:"server"`
	Tools  int    `json:"tools"`
	Tokens int    `json:"tokens"`
}

// CountTokens counts each tool's definition and sums them by server, in
// the order servers first appear in list.
func CountTokens(list []tool.Tool) (Tokens, error) {
	out := Tokens{Encoding: tokens.Encoding, Tools: []ToolTokens{}, Servers: []ServerTokens{}}
	at := map[string]int{}
	for _, t := range list {
		n, err := tokens.Tool(t)
		if err != nil {
			return out, err
		}
		out.Tools = append(out.Tools, ToolTokens{Name: t.Name, Server: t.Origin.Server, Tokens: n})
		out.Total += n
		i, ok := at[t.Origin.Server]
		if !ok {
			i = len(out.Servers)
			at[t.Origin.Server] = i
			out.Servers = append(out.Servers, ServerTokens{Server: t.Origin.Server})
		}
		out.Servers[i].Tools++
		out.Servers[i].Tokens += n
	}
	return out, nil
}

// ServerTotals returns each server's total, by name.
func ServerTotals(list []tool.Tool) (map[string]int, error) {
	c, err := CountTokens(list)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, s := range c.Servers {
		out[s.Server] = s.Tokens
	}
	return out, nil
}
