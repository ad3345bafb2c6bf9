// Package demo is the small MCP server behind mcpbridge's embedded default
// config. `mcpbridge demo-server` runs it on stdio, so a newcomer's first
// `mcpbridge tools` or `mcpbridge call` works without writing a config or
// installing anything.
//
// Its tools are deterministic on purpose: the same call always gives the
// same answer, which keeps docs, examples and tests stable.
package demo
