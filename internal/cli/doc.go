// Package cli implements the mcpbridge command: its subcommands, flags,
// output formats and exit statuses (DECISIONS §7). cmd/mcpbridge only wires
// it to the process.
package cli
