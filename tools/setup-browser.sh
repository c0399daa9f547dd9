#!/usr/bin/env bash
# Makes Debian's Chromium available for the dashboard's browser tests (apps/dashboard/e2e), idempotently.
# It comes from the Debian archive (/usr/bin/chromium), never from a browser download: playwright-core
# drives it through `executablePath`.
#
# It changes nothing it has not first said: it simulates the install (`apt-get -s`), prints the packages
# it would add, their download and disk size and about how long it takes, and installs with
# `--no-install-recommends --no-upgrade` only when no package already installed would be upgraded
# (`--no-upgrade` covers only the packages named on the command line, so a dependency that needs a
# newer version of an installed library would still upgrade it: the simulation's `Inst pkg [old] (new)`
# lines are those upgrades, and any one of them stops it here).
#
# ASK_BROWSER_TESTS=install installs without asking, =skip installs nothing (tools/test.sh then runs
# the dashboard's unit specs without its browser suite); unset, it asks in a terminal and installs
# otherwise (CI, a pipe). Exit codes: 0 Chromium present or installed, 3 skipped (by the user, or
# because it would upgrade an installed package), 1 the install failed.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi

choice="${ASK_BROWSER_TESTS:-}"
if [ "$choice" = "skip" ]; then
  echo "setup: ASK_BROWSER_TESTS=skip: no Chromium; the dashboard's browser suite will not run"
  exit 3
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
APT_FLAGS=(--no-install-recommends --no-upgrade)
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

echo "setup: the dashboard's browser tests need Debian's chromium; reading the package lists (apt-get update)"
$SUDO apt-get update -qq
plan=$(apt-get -s install "${APT_FLAGS[@]}" chromium)
new=$(grep -c '^Inst ' <<<"$plan" || true)
# "Inst libfoo [1.0-1] (1.0-2 …)": the bracket holds the installed version, so the line is an upgrade.
upgrades=$(grep '^Inst [^ ]* \[' <<<"$plan" | awk '{ print $2 " " $3 " -> " $4 }' | tr -d '[]()' || true)
# "Need to get 113 MB/124 MB of archives." and "After this operation, 414 MB of additional disk space …"
sizes=$($SUDO apt-get install --assume-no "${APT_FLAGS[@]}" chromium 2>/dev/null |
  sed -nE 's/^Need to get (.*) of archives\./\1 to download/p; s/^After this operation, (.*) of additional disk space.*/\1 on disk/p' |
  paste -sd, - | sed 's/,/, /' || true)

if [ -n "$upgrades" ]; then
  echo "setup: installing chromium here would upgrade $(wc -l <<<"$upgrades") installed package(s); not done:" >&2
  sed 's/^/  /' <<<"$upgrades" >&2
  echo "setup: install it yourself if that is fine (apt-get install ${APT_FLAGS[0]} chromium), or run" >&2
  echo "       ASK_BROWSER_TESTS=skip npm test to leave out the dashboard's browser suite" >&2
  exit 3
fi

echo "setup: will install $new new Debian packages, none upgraded (apt-get install ${APT_FLAGS[*]} chromium):"
grep '^Inst ' <<<"$plan" | awk '{ print $2 }' | paste -sd' ' - | fold -s -w 96 | sed 's/^/  /'
echo "setup: ${sizes:-size unknown}; about a minute on this kind of machine (50 s measured)"

if [ -z "$choice" ] && [ -t 0 ] && [ "${CI:-}" != "true" ]; then
  read -r -p "setup: install them now? [Y/n] (n: run the tests without the dashboard's browser suite) " answer
  case "$answer" in
    [nN]*)
      echo "setup: no Chromium; the dashboard's browser suite will not run (ASK_BROWSER_TESTS=install to install)"
      exit 3
      ;;
  esac
fi

$SUDO apt-get install -y -qq "${APT_FLAGS[@]}" chromium >/dev/null
command -v chromium >/dev/null
echo "setup: installed $(chromium --version 2>/dev/null || echo chromium)"
