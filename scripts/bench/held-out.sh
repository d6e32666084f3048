#!/usr/bin/env bash
# The held-out measurement of issue 24, outside `npm run bench`: on a PostgreSQL you name (the
# machine's own, trust auth), the yardstick (pgbench: transactions of two notification-shaped
# inserts, 32 clients), then `npm start` of this tree with one serving process, driven 10 s at
# maximum by h2load over REST (HTTP/1.1) and gRPC (h2c); prints each protocol's committed rate,
# its ratio to the yardstick, and the serving process's CPU per committed publish. PROTOS adds
# Connect's binary protocol over HTTP/1.1, the SDK's default: PROTOS="rest grpc connect". BODY=ci
# publishes bodies.ts's CI notification (657 bytes of JSON) instead of the benchmark's 61 bytes.
#
#   scripts/bench/held-out.sh [postgres://postgres@127.0.0.1:5432] [seconds]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/herald-under-load.sh
server=${1:-postgres://postgres@127.0.0.1:5432}
secs=${2:-10}
work=$(mktemp -d)
# Stopped from outside (any ending signal), the Herald it started stops too; its databases go.
trap cleanup_herald EXIT
trap 'exit 130' INT TERM HUP QUIT
body=${BODY:-bench}
node --experimental-strip-types --no-warnings scripts/bench/bodies.ts "$work" "$body"
suffix=$([ "$body" = bench ] || echo "-$body")

fresh_db "$server" herald_yardstick
sql "$server/herald_yardstick" -qc "create table bench_commit (id uuid, project_id uuid, topic text,
  title text, message text, priority text, status text, created_at timestamptz)" >/dev/null
insert="insert into bench_commit (id, project_id, topic, title, message, priority, status, created_at)
  values (gen_random_uuid(), :project, 'bench', 'Deploy finished', '', 'high', 'queued', now());"
printf 'begin;\n%s\n%s\ncommit;\n' "$insert" "$insert" >"$work/two.sql"
yard=$(pgbench -n -M prepared -c 32 -j 2 -T "$secs" -D project=00000000-0000-0000-0000-000000000001 \
  -f "$work/two.sql" "$server/herald_yardstick" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
echo "yardstick (pgbench): ${yard%.*} transactions/s"

port=18666
if curl -sf "localhost:$port/readyz" >/dev/null; then
  echo "port $port is taken (a server left running?)" >&2
  exit 1
fi
for proto in ${PROTOS:-rest grpc}; do
  db=herald_held_out_$proto
  start_herald "$server" "$db" "$work/data-$proto" "$port" "$work/$proto.log"
  publish_args "$proto" "$work" "$port"
  h2load -D 3 -H "authorization: Bearer $key" "${args[@]}" >/dev/null 2>&1
  count() { sql "$server/$db" -Atc "select count(*) from notification"; }
  ticks() { awk '{print $14 + $15}' "/proc/$serving/stat"; }
  c0=$(ticks); r0=$(count)
  h2load -D "$secs" -H "authorization: Bearer $key" "${args[@]}" >/dev/null 2>&1
  c1=$(ticks); r1=$(count)
  n=$((r1 - r0))
  awk -v n="$n" -v s="$secs" -v c=$((c1 - c0)) -v y="$yard" -v p="$proto" 'BEGIN {
    printf "%s: %d committed/s (%.2fx the yardstick), %d us of the serving process CPU per publish\n",
      p, n / s, n / s / y, c * 10000 / n }'
  kill -TERM "$sup"
  wait "$sup" || true
done
