#!/usr/bin/env bash
# Installs redis-server, the store the gateway's replica tests run against
# (internal/store, internal/gatewayauth, the serve replica tests), with
# apt-get when it is missing. Idempotent: returns at once when it is on
# PATH. The tests start servers of their own; the package's is not used.
set -euo pipefail
. "$(dirname "$0")/apt-install.sh"

if command -v redis-server >/dev/null 2>&1; then
	echo "install-redis: redis-server is installed; nothing to do"
	exit 0
fi
apt_install install-redis redis-server
