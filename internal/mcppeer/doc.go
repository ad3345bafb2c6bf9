// Package mcppeer holds the MCP servers that the tests and the benchmark
// driver (bench) talk to: real peers, so that they exercise the go-sdk
// client against what it meets in production instead of mocks.
//
//   - [Fixture]: a go-sdk server with the upstream fixture-server tools
//     (add, greet, fail, image, crash, admin.reset) plus slow, structured,
//     badstructured, echo and tools that change the tool list at runtime.
//   - [Asker]: a go-sdk server whose tools ask their client in the middle
//     of a call: a form (string, number, choices, boolean), a URL, and a
//     completion with tools (sampling).
//   - [RawServer]: a hand-written newline-delimited JSON-RPC server for wire
//     shapes the SDK cannot produce (unknown content blocks, legacy results,
//     odd pagination), over streams or HTTP.
//   - [NewTaskServer]: a stateless 2026-07-28 HTTP server with the tasks
//     extension and the fixture tools of the conformance suite's tasks
//     scenarios (greet, slow_compute, confirm_delete, …).
//   - [RunIfChild]: serve one of them on stdio when the process was started as a
//     child of kind [ChildEnv], the way the bridge spawns real servers.
//
// It imports no test code (neither testing nor goleak nor httptest), so a
// product binary such as bench may link it. The test-only helpers around
// these servers (spawning a test binary as a child, in-process HTTP
// servers, leak checks) are in internal/mcptest.
package mcppeer
