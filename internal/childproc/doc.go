// Package childproc runs stdio MCP servers as child processes and speaks
// newline-delimited JSON-RPC with them over their stdin and stdout.
//
// It exists because the SDK's CommandTransport signals only the direct child,
// orphans grandchildren (the npx, uvx and sh -c case), discards stderr and
// lets a stuck pipe stall Close. Here every child runs in its own process
// group, its stderr is delivered line by line to a callback, and shutdown is
// a ladder (close stdin, SIGTERM the group, SIGKILL the group) after which no
// member of the group survives, whichever way the child ended.
//
// [Env] builds the scrubbed child environment (docs/decisions.md §5); [Transport] is
// the mcp.Transport, which also starts a child sandboxed (internal/sandbox)
// when asked; [Process] reports a child's PID, exit and sandbox.
//
// Process control is implemented for Linux only; elsewhere Connect fails.
package childproc
