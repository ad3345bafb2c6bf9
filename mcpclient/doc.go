// Package mcpclient is the mcp-client plugin: it connects to one MCP server
// (a stdio child process or a Streamable HTTP endpoint), registers the
// server's tools in a tool.Registry under mcp__<serverName>__<tool>, keeps
// them in sync, forwards calls, and reconnects when the connection is lost.
//
// A Config describes one server. DecodeConfig reads it strictly from the
// config mapping of a composition-file entry (`name: mcp-client`), expanding
// ${VAR} references; Config.Validate checks one built in Go with the same
// rules.
package mcpclient
