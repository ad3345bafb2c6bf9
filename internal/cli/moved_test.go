package cli

import (
	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/agentterm"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
)

// The tests' names for what moved out of the package.

// short is s on one line, cut to n runes (agentterm.Short).
func short(s string, n int) string { return agentterm.Short(s, n) }

// backendStates is /healthz's view of the host (gatewayrun.BackendStates).
func backendStates(statuses []host.Status) []gateway.BackendState {
	return gatewayrun.BackendStates(statuses)
}
