// Package mcpclient is the mcp-client plugin: it connects to one MCP server
// (a stdio child process or a Streamable HTTP endpoint), registers the
// server's tools in a tool.Registry under mcp__<serverName>__<tool>, keeps
// them in sync, forwards calls, and reconnects when the connection is lost.
//
// A Config describes one server. DecodeConfig reads it strictly from the
// config mapping of a composition-file entry (`name: mcp-client`), expanding
// ${VAR} references; Config.Validate checks one built in Go with the same
// rules.
//
// A Server logs structured records to Options.Logger, every one tagged
// server=<serverName> (a host's logger adds entry=<id>): a short, constant
// message, with the facts as attributes: err, attempt, max_attempts, delay,
// timeout, tool, reason, did_you_mean. A stdio child's stderr arrives line
// by line as "child output" with stream=stderr, pid and line; the SDK's own
// records carry component=go-sdk. The records carry the facts of upstream's log
// lines (docs/upstream.md §3.11), which interpolated them into the text
// ("mcp-client(<S>): connection lost; reconnecting in <d>ms (attempt
// <n>/<M>)"): the messages keep upstream's wording and its advice to the
// operator, and the values are attributes, which tests match.
//
// Before a sync publishes, the definition scan (internal/toolscan,
// docs/scan.md) reads every tool and prompt: Config.Scan says whether its
// findings are only reported (Status.Scan, "definition scan finding" log
// records) or also withhold the flagged definitions.
package mcpclient
