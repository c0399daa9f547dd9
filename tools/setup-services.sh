#!/usr/bin/env bash
# Makes the local services ready for the Ask service, idempotently:
#   - pgvector built and installed for the local PostgreSQL (tools/setup-pgvector.sh),
#   - PostgreSQL and Redis answering on 127.0.0.1 (started with the machine's own commands if down),
#   - the database in DATABASE_URL created and migrated.
# The dashboard's browser suite needs Chromium: `npm test` (tools/test.sh) runs tools/setup-browser.sh
# before this; the demo needs no browser.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup-pgvector.sh

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  echo "setup: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "setup: starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi

echo "setup: migrating ${DATABASE_URL:-the default database}"
node tools/run-ts.js libs/persistence/src/migrate.ts
