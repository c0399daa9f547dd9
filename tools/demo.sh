#!/usr/bin/env bash
# The main job: makes the services ready (pgvector, PostgreSQL, Redis, migrations), then runs
# `ask demo`: ingest the corpus, start the four apps as separate processes, run a multi-turn session
# over HTTP + SSE. Extra arguments go to `ask demo` (--docs DIR, --questions FILE, --keep-running).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
bash tools/setup-services.sh
npx nx run dashboard:build --outputStyle=static   # the gateway serves it at / (open it with --keep-running)
exec node tools/run-ts.js apps/ask-cli/src/main.ts demo "$@"
