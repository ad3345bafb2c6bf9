// Package toolscan finds, in an MCP server's tool and prompt definitions,
// text aimed at the model rather than at the user: hidden characters,
// tag-like blocks, requests for secrets, instructions to keep things from
// the user, other tools shadowed, exfiltration links, encoded payloads and
// padding that pushes text out of view (docs/scan.md).
//
// A Scanner is a set of limits and a pure function of the definition it is
// given: safe for concurrent use, with a useful zero value. Its work per
// definition is bounded (Options), so a definition of any size gives a
// bounded result quickly.
package toolscan
