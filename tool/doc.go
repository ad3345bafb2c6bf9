// Package tool is a model-facing tool registry: a concurrent table of named
// tools (description, JSON Schema, body) that a harness lists for the model
// and executes on its behalf.
//
// It knows nothing of MCP, so any Go harness can use it on its own; the
// mcp-client plugin is just one producer of registrations. The registry
// lists tools sorted by name so the tool block a model sees is
// byte-identical whatever order the producers registered in (prompt-cache
// friendly), and it reports every change of the tool set to watchers so a
// gateway can send list_changed.
//
// Execution never fails with a Go error except for an unknown name: every
// outcome a model must see (bad arguments, cancellation, a failing body) is
// a Result whose Content starts with "Error: ", in the shape
// `mcpbridge call --json` prints.
package tool
