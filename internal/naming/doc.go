// Package naming computes the model-visible public name of an MCP tool.
//
// The algorithm is a v1 public contract shared with the original TypeScript
// bridge (docs/upstream.md §2): permission rules and session history key on these
// names, so a given (serverName, rawName) must map to the same public name
// forever. testdata/golden-names.tsv pins it.
package naming
