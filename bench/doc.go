// Command bench measures what the bridge costs on top of a direct MCP
// connection, side by side in one run, and writes BENCHMARKS.md.
//
// Absolute times on a shared machine are noise; ratios measured in the same
// run, with the variants' rounds interleaved, are not. So every figure is
// paired with the one it is compared to: the raw go-sdk client on the same
// server, the Node TS SDK client on the same server, a no-SDK pipe floor,
// or the single-server startup time.
//
// Usage, from the module root:
//
//	go run ./bench                  # full run (under 5 minutes on 2 cores), rewrites BENCHMARKS.md
//	go run ./bench -smoke           # a few seconds, tiny counts: checks that every row still works
//	go run ./bench -only calls      # some row groups: calls, startup, catalog, memory, replicas, search, scan, codemode
//	go run ./bench -only calls -variants raw-sdk,raw-bridge,floor   # some call variants
//	go run ./bench -only search     # tool search: retrieval, tokens, latency (a few seconds)
//	go run ./bench -only scan       # definition scan: recall, false positives, time (seconds)
//	go run ./bench -only codemode   # code mode: the catalog's declaration in tokens, an inner call's cost (seconds)
//	go run ./bench -profile DIR     # also pprof profiles of the bridge's call and discovery paths
//	go run ./bench -only calls -variants serve-http,serve-http-base,peer-tbxark -baseline OTHER -out ""
//	                                # serve --http of this build against another build's mcpbridge, interleaved
//
// A run keeps the hand-written part of BENCHMARKS.md (below its marker line)
// and regenerates the rest; a run of some row groups replaces only their
// sections and their rows of the Targets table.
//
// The search rows read the retrieval set of testdata/toolcatalog (real MCP
// servers' tool lists and requests for them; see docs/toolsearch.md) and
// need no server.
//
// The servers are the go-sdk fixture of internal/mcppeer and its scripted
// raw server (this binary re-executed as a child), and bench/responder, a
// minimal newline-delimited JSON-RPC responder that the driver builds with
// `go build` at start. The peer-client row needs Node and the pinned
// @modelcontextprotocol/sdk from testdata/thirdparty
// (scripts/install-thirdparty.sh); -skip-node leaves it out. The
// TBXark/mcp-proxy row builds that Go gateway from its source archive in
// the -peers folder (default ../shared/peers, outside the repository; its
// dependencies come from the module proxy) and is left out, with a note,
// when the folder is absent. The replicas row's store variant starts a
// redis-server (the Debian package's binary on PATH) for its replicas'
// store, and fails without one.
package main
