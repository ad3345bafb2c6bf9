#!/usr/bin/env bash
# Installs redis-server, the store the gateway's replica tests run against
# (internal/store, internal/tasks, the serve replica tests), with apt-get
# when it is missing. Idempotent: returns at once when it is on PATH.
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
	echo "install-redis: redis-server is installed; nothing to do"
	exit 0
fi
command -v apt-get >/dev/null 2>&1 || { echo "install-redis: error: redis-server missing and no apt-get to install it" >&2; exit 1; }
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-redis: installing redis-server"
$sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
# The package's service is not wanted: the tests start their own servers.
DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends redis-server >/dev/null
