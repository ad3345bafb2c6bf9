// Package cli implements the mcpbridge command: its subcommands, flags,
// output formats and exit statuses (docs/decisions.md §7). cmd/mcpbridge only wires
// it to the process.
package cli
