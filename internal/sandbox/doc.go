// Package sandbox confines a stdio MCP server with Landlock, a seccomp
// filter, resource limits and, when it may not use the network, a network
// namespace of its own (docs/sandbox.md).
//
// The confinement is applied in a re-execution of mcpbridge itself, just
// before it execs the server: the parent ([Prepare], [Plan.Command],
// [Plan.SysProcAttr]) checks the entry and builds the command line of the
// re-execution; the re-executed process ([RunIfExec], called first in main
// and in the TestMain of packages that start sandboxed children) restricts
// itself and execs the server, which inherits the restrictions with all of
// its descendants. mcpbridge itself is never confined.
package sandbox
