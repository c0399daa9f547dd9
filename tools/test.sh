#!/usr/bin/env bash
# `npm test`: says what it will do and about how long, makes the services ready, runs every jest
# project with each suite's PASS/FAIL line as it ends, then checks that no spec left keys in Redis.
#   1. tools/setup-browser.sh: Debian's chromium for the dashboard's browser suite (says what it would
#      install first; never upgrades an installed package; ASK_BROWSER_TESTS=skip leaves it out),
#   2. tools/setup-services.sh: pgvector, PostgreSQL, Redis, migrations,
#   3. nx run-many -t test, one project at a time, output streamed (arguments of `npm test -- …` go here),
#   4. tools/check-redis-keys.ts: fails when keys remain under a spec prefix (`<name>-<uuid>`) that
#      held none before the run (those it names, not fails: a killed earlier run, a bench).
# The durations below were measured on this kind of machine (2 cores): the full run
# took 16 min 23 s for 196 suites on 2026-12-03 (20 min 52 s for 155 at load up to 14), ask-e2e about 10 min of it.
set -uo pipefail
cd "$(dirname "$0")/.."

echo "test: every jest project, one at a time: about 20 minutes on a 2-core machine (ask-e2e alone"
echo "test: about 10, with no output between its suites' PASS lines); each suite prints PASS or FAIL as it ends"

bash tools/setup-browser.sh
browser=$?
case "$browser" in
  0) ;;
  3) echo "test: the dashboard's browser suite (apps/dashboard/e2e) is left out; its unit specs still run" ;;
  *) exit "$browser" ;;
esac

bash tools/setup-services.sh || exit $?
before=tmp/redis-spec-prefixes-before.txt
node tools/run-ts.js tools/check-redis-keys.ts --record "$before" || exit $?

started=$(date +%s)
status=0
if [ "$browser" -eq 0 ]; then
  npx nx run-many -t test --outputStyle=stream-without-prefixes --parallel=1 "$@" || status=$?
else
  npx nx run-many -t test --outputStyle=stream-without-prefixes --parallel=1 --exclude=dashboard "$@" || status=$?
  npx jest -c apps/dashboard/jest.config.js --testPathIgnorePatterns /e2e/ || status=$?
fi
elapsed=$(($(date +%s) - started))
echo "test: jest projects done in $((elapsed / 60)) min $((elapsed % 60)) s (exit $status)"

node tools/run-ts.js tools/check-redis-keys.ts --since "$before" || status=$?
exit "$status"
