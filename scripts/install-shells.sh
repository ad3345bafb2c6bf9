#!/usr/bin/env bash
# Installs the shells whose completion scripts the tests run (zsh, fish;
# bash is there already) with apt-get, when they are missing. Idempotent:
# returns at once when both are on PATH.
set -euo pipefail

missing=()
for sh in zsh fish; do
	command -v "$sh" >/dev/null 2>&1 || missing+=("$sh")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-shells: zsh and fish are installed; nothing to do"
	exit 0
fi
command -v apt-get >/dev/null 2>&1 || { echo "install-shells: error: ${missing[*]} missing and no apt-get to install them" >&2; exit 1; }
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-shells: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
