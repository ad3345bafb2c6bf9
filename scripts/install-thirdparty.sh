#!/usr/bin/env bash
# Installs the third-party MCP peers used by tests (reference servers, the
# conformance suite, a pinned Node 22) into testdata/thirdparty/node_modules.
#
# Idempotent: it runs `npm ci` only when node_modules is missing, or older
# than package.json / package-lock.json, or lacks one of the expected bins.
# Otherwise it returns at once. Any failure exits non-zero with a message.
set -euo pipefail

die() { echo "install-thirdparty: error: $*" >&2; exit 1; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/testdata/thirdparty"
lock="$dir/package-lock.json"
# npm writes this hidden lockfile last, so its mtime marks a finished install.
stamp="$dir/node_modules/.package-lock.json"
bins=(mcp-server-everything mcp-server-filesystem mcp-server-memory mcp-server-basic-vanillajs conformance node supergateway mcp-proxy)
# The 0.2 conformance suite (its requirement sets per spec revision) is
# installed beside 0.1.16 under the npm alias conformance-next. Both declare
# the bin "conformance", which stays 0.1.16's; the alias runs by its path.
next_bin="node_modules/conformance-next/dist/index.js"

# npx's own cache for the recipes of docs/sandbox.md, which run npx offline
# in the sandbox (internal/cli's TestSandboxDocRecipes points
# npm_config_cache here): npx must have fetched each package once.
npx_cache="$dir/npm-cache"
npx_packages=(@modelcontextprotocol/server-filesystem@2025.8.21)

# warm_npx_cache has npx fetch each recipe package into npx_cache, once: a
# run with a directory that does not exist fetches the package, then fails.
warm_npx_cache() {
	local stamp="$npx_cache/.warm" want="${npx_packages[*]}"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		return
	fi
	command -v npx >/dev/null 2>&1 || die "npx not found in PATH (install Node.js >= 20 and npm)"
	for p in "${npx_packages[@]}"; do
		echo "install-thirdparty: fetching $p into $npx_cache"
		npm_config_cache="$npx_cache" npx -y "$p" "$npx_cache/no-such-dir" </dev/null >/dev/null 2>&1 || true
		[ -n "$(ls "$npx_cache/_npx" 2>/dev/null)" ] || die "npx could not fetch $p into $npx_cache"
	done
	echo "$want" >"$stamp"
}

[ -f "$dir/package.json" ] || die "missing $dir/package.json"
[ -f "$lock" ] || die "missing $lock (npm ci needs the lockfile)"

reason=""
if [ ! -d "$dir/node_modules" ]; then
	reason="node_modules is missing"
elif [ ! -f "$stamp" ]; then
	reason="node_modules has no .package-lock.json (interrupted install?)"
elif [ "$lock" -nt "$stamp" ] || [ "$dir/package.json" -nt "$stamp" ]; then
	reason="package.json or package-lock.json is newer than node_modules"
else
	for b in "${bins[@]}"; do
		if [ ! -x "$dir/node_modules/.bin/$b" ]; then
			reason="node_modules/.bin/$b is missing"
			break
		fi
	done
	[ -n "$reason" ] || [ -f "$dir/$next_bin" ] || reason="$next_bin is missing"
fi

if [ -z "$reason" ]; then
	warm_npx_cache
	echo "install-thirdparty: $dir/node_modules is up to date; nothing to do"
	exit 0
fi

command -v npm >/dev/null 2>&1 || die "npm not found in PATH (install Node.js >= 20 and npm)"

echo "install-thirdparty: $reason"
echo "install-thirdparty: running 'npm ci --no-audit --no-fund' in $dir"
start=$(date +%s)
(cd "$dir" && npm ci --no-audit --no-fund) || die "npm ci failed in $dir (see npm output above)"

for b in "${bins[@]}"; do
	[ -x "$dir/node_modules/.bin/$b" ] || die "npm ci finished but node_modules/.bin/$b is missing"
done
[ -f "$dir/$next_bin" ] || die "npm ci finished but $next_bin is missing (package.json's conformance-next alias)"
case "$(readlink "$dir/node_modules/.bin/conformance")" in
*@modelcontextprotocol/conformance/*) ;;
*) die "node_modules/.bin/conformance does not point at @modelcontextprotocol/conformance (0.1.16); remove node_modules and run again" ;;
esac
# npm ci leaves the hidden lockfile's mtime as of install; make sure it is
# newer than the inputs so the next run is a no-op even on coarse clocks.
touch "$stamp"
warm_npx_cache
echo "install-thirdparty: done in $(( $(date +%s) - start )) s; bins in $dir/node_modules/.bin:"
for b in "${bins[@]}"; do
	echo "  $dir/node_modules/.bin/$b"
done
echo "  $dir/$next_bin (conformance 0.2; run it with node_modules/.bin first on PATH for Node 22)"
