#!/usr/bin/env bash
# Installs the shells whose completion scripts the tests run (zsh, fish;
# bash is there already) with apt-get, when they are missing. Idempotent:
# returns at once when both are on PATH.
set -euo pipefail
. "$(dirname "$0")/apt-install.sh"

missing=()
for sh in zsh fish; do
	command -v "$sh" >/dev/null 2>&1 || missing+=("$sh")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-shells: zsh and fish are installed; nothing to do"
	exit 0
fi
apt_install install-shells "${missing[@]}"
