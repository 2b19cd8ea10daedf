#!/usr/bin/env bash
# Usage: npm run services (also run by .ci/run) — starts the local PostgreSQL and Redis when they are
# installed but not running, and waits until they answer. Never installs anything, and leaves a
# server that already answers alone. One copy for CI and newcomers, so the two cannot drift.
set -uo pipefail

failed=0

wait_for() {
  local what=$1; shift
  for _ in $(seq 1 60); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "services: $what did not come up" >&2
  return 1
}

if pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then
  echo "services: PostgreSQL already answers on 127.0.0.1:5432; left alone"
elif ! command -v pg_ctlcluster >/dev/null 2>&1 || [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
  echo "services: PostgreSQL is not installed; install it with: apt-get install -y postgresql (or: docker compose -f docker-compose.dev.yml up -d postgres)" >&2
  failed=1
else
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  echo "services: starting PostgreSQL $version (pg_ctlcluster $version main start)"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || failed=1
  wait_for PostgreSQL pg_isready -h 127.0.0.1 -p 5432 && echo "services: PostgreSQL answers on 127.0.0.1:5432" || failed=1
fi

if redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "services: Redis already answers on 127.0.0.1:6379; left alone"
elif ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  echo "services: Redis is not installed; install it with: apt-get install -y redis-server (or: docker compose -f docker-compose.dev.yml up -d redis)" >&2
  failed=1
else
  echo "services: starting Redis on 127.0.0.1:6379 (no persistence; log in /var/log/redis/ci.log)"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || failed=1
  wait_for Redis redis-cli -h 127.0.0.1 -p 6379 ping && echo "services: Redis answers on 127.0.0.1:6379" || failed=1
fi

exit "$failed"
