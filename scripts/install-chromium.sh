#!/usr/bin/env bash
# Installs the headless browser the web console's tests drive
# (internal/console, through chromedp): Debian's chromium, with apt-get,
# when it is missing. Idempotent: returns at once when chromium is on PATH.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
	echo "install-chromium: chromium is installed; nothing to do"
	exit 0
fi
command -v apt-get >/dev/null 2>&1 || { echo "install-chromium: error: chromium missing and no apt-get to install it; install a Chromium named chromium on PATH" >&2; exit 1; }
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-chromium: installing chromium"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
