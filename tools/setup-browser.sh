#!/usr/bin/env bash
# Makes Debian's Chromium available for the dashboard's browser tests (apps/dashboard/e2e), idempotently.
# It comes from the Debian archive (/usr/bin/chromium), never from a browser download: playwright-core
# drives it through `executablePath`.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
echo "setup: installing chromium from the Debian archive"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium
command -v chromium >/dev/null
