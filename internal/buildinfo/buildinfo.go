// Package buildinfo says which mcpbridge this is: the version every
// component reports to its peers (the MCP client's and the gateway's
// implementation info).
package buildinfo

// Version is mcpbridge's version as it reports itself in MCP handshakes.
const Version = "0.1.0"
