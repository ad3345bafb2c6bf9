#!/usr/bin/env bash
# Captures testdata/toolcatalog/catalog.json, the tool-search retrieval
# catalog: the tool lists of the real MCP servers pinned in
# testdata/toolcatalog/servers (package.json, package-lock.json), each
# listed through mcpbridge's own client (scripts/capturecatalog).
#
# The servers are heavy (about 1.2 GB of node_modules) and are needed only
# to refresh the snapshot, so they are installed into a temporary directory
# (npm ci --ignore-scripts: no browser downloads, no install hooks), never
# into the project, and removed afterwards. Tests and the benchmark read
# the committed snapshot; they never need these servers.
#
# Usage: scripts/capture-tool-catalog.sh [OUT]   (default testdata/toolcatalog/catalog.json)
# Needs npm, Go, and Node 22 (testdata/thirdparty's, installed by
# scripts/install-thirdparty.sh, else node on PATH).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/testdata/toolcatalog/servers" out="${1:-$root/testdata/toolcatalog/catalog.json}"
node="$root/testdata/thirdparty/node_modules/.bin/node"

die() { echo "capture-tool-catalog: error: $*" >&2; exit 1; }
[ -x "$node" ] || node="$(command -v node)" || die "no Node: run scripts/install-thirdparty.sh or put node on PATH"
command -v npm >/dev/null 2>&1 || die "npm not found in PATH"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/toolcatalog.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
cp "$src/package.json" "$src/package-lock.json" "$tmp/"
echo "capture-tool-catalog: installing the pinned servers into $tmp"
(cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) || die "npm ci failed in $tmp"

cd "$root"
go run ./scripts/capturecatalog -servers "$src/servers.json" -modules "$tmp/node_modules" -node "$node" -out "$out"
echo "capture-tool-catalog: wrote $out"
