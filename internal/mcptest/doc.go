// Package mcptest holds test helpers around the MCP peers of
// internal/mcppeer, for the tests of other packages:
//
//   - [ChildCommand] and [WriteRawScript]: what a config needs to spawn the
//     test binary as a stdio MCP server child (its TestMain calls
//     mcppeer.RunIfChild), the way the bridge spawns real servers.
//   - [NewHTTPServer] and [NewRawHTTPServer]: in-process Streamable HTTP
//     servers that record every request's headers.
//   - [NewOAuthServer]: an MCP server behind OAuth 2.1 with its own
//     authorization server (metadata, dynamic registration, PKCE, refresh
//     token rotation) on one real HTTP server.
//   - [HoldHandshake], [Sleep], [Hang] and [Barrier]: servers that are slow
//     to start, never start, or start in step.
//   - [Log]: a slog handler whose records tests check by level, message
//     and attributes.
//   - [Eventually]: poll a condition until it holds, failing the test after
//     a timeout.
//   - [VerifyTestMain]: goroutine and child process leak checks.
//   - [ThirdPartyBin]: the npm-installed reference servers, skipping the test
//     when they are not installed.
//   - [NewOTLPReceiver]: an OpenTelemetry collector's OTLP/HTTP trace
//     endpoint on 127.0.0.1, keeping the spans it receives.
//
// Import it from _test.go files only; product code (bench) uses
// internal/mcppeer directly.
package mcptest
