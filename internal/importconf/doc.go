// Package importconf reads the MCP server configs of other clients and
// turns them into mcpbridge's own: the "mcpServers" JSON of Claude Desktop,
// Claude Code (.mcp.json), Cursor and Gemini CLI, and the [mcp_servers.*]
// tables of Codex's config.toml. Each server becomes one mcp-client entry
// of the YAML that host parses, and every field that has no counterpart
// is reported as a Note at its position, never dropped silently.
//
// The format is told by content (Detect), so `--config` takes any of
// them. Positions in the generated YAML map back to the source file
// (Result.Position), so the config errors host finds in a converted file
// point into the file the user wrote.
package importconf
