// Package mcptest holds MCP peers for the tests of other packages: real
// servers to talk to, so that tests exercise the go-sdk client against what
// it meets in production instead of mocks.
//
//   - [Fixture]: a go-sdk server with the upstream fixture-server tools
//     (add, greet, fail, image, crash, admin.reset) plus slow, structured,
//     badstructured, echo and tools that change the tool list at runtime.
//   - [RunIfChild] and [ChildCommand]: re-execute the test binary as a stdio
//     MCP server child, the way the bridge spawns real servers.
//   - [RawServer]: a hand-written newline-delimited JSON-RPC server for wire
//     shapes the SDK cannot produce (unknown content blocks, legacy results,
//     odd pagination).
//   - [NewHTTPServer] and [NewRawHTTPServer]: in-process Streamable HTTP
//     servers that record every request's headers.
//   - [ThirdPartyBin]: the npm-installed reference servers, skipping the test
//     when they are not installed.
//
// Import it from _test.go files only.
package mcptest
