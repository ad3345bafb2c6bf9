package cli

import (
	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/agentterm"
	"github.com/mcpbridge/mcpbridge/internal/callargs"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
	"github.com/mcpbridge/mcpbridge/internal/registry"
	"github.com/mcpbridge/mcpbridge/internal/report"
)

// The tests' names for what moved out of the package.

// short is s on one line, cut to n runes (agentterm.Short).
func short(s string, n int) string { return agentterm.Short(s, n) }

// backendStates is /healthz's view of the host (gatewayrun.BackendStates).
func backendStates(statuses []host.Status) []gateway.BackendState {
	return gatewayrun.BackendStates(statuses)
}

// The stable JSON shapes the commands print (internal/report).
type (
	entryJSON        = report.Entry
	entryDetailJSON  = report.EntryDetail
	statusJSON       = report.Status
	shadowedJSON     = report.Shadowed
	sandboxJSON      = report.Sandbox
	tokensJSON       = report.Tokens
	serverTokensJSON = report.ServerTokens
)

// toStatusJSON is st as status --json shows it (report.ServerOf).
func toStatusJSON(st host.Status) report.Server { return report.ServerOf(st) }

// outdatedJSON is one line of registry outdated --json.
type outdatedJSON = registry.Outdated

// maxCallArgsBytes bounds the arguments of call (callargs.MaxJSONBytes).
const maxCallArgsBytes = callargs.MaxJSONBytes

// skillEntry is one skill in skills --json (report.Skill).
type skillEntry = report.Skill
