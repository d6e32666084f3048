#!/usr/bin/env bash
# What a publish costs the serving process below its maximum: `npm start` of this tree with one
# serving process on a PostgreSQL you name (the machine's own, trust auth), driven by h2load at
# fixed rates (evenly spread, as the benchmark's paced rows), over REST (or gRPC: PROTO=grpc).
# For each rate, the serving process's event loop thread: its time on a core and its time
# runnable but waiting for one (/proc/<pid>/task/<tid>/schedstat), the times it was scheduled,
# and its time on a core per publish; first the same with nothing offered.
#
#   scripts/bench/low-rate.sh [postgres://postgres@127.0.0.1:5432] ["100 200 500 1000"]
set -euo pipefail
cd "$(dirname "$0")/../.."
server=${1:-postgres://postgres@127.0.0.1:5432}
rates=${2-100 200 500 1000}
proto=${PROTO:-rest}
work=$(mktemp -d)
node --experimental-strip-types --no-warnings scripts/bench/bodies.ts "$work"
port=18667
db=herald_low_rate
PGOPTIONS="-c client_min_messages=warning" psql "$server/postgres" -qc "drop database if exists $db" \
  -c "create database $db" >/dev/null
DATABASE_URL="$server/$db" HERALD_BOOTSTRAP=1 HERALD_DATA_DIR="$work/data" \
  HERALD_PORT=$port HERALD_PROCESSES=1 HERALD_LOG_FORMAT=json \
  HERALD_RATE_LIMIT_BURST=1000000 HERALD_RATE_LIMIT_PER_SECOND=1000000 \
  HERALD_ACCOUNT_RATE_BURST=1000000 HERALD_ACCOUNT_RATE_PER_SECOND=1000000 \
  HERALD_MONTHLY_QUOTA=1000000000 \
  node scripts/run.mjs main >"$work/log" 2>&1 &
sup=$!
trap 'kill -TERM "$sup" 2>/dev/null; wait "$sup" || true; rm -rf "$work"' EXIT
for _ in $(seq 1 150); do curl -sf "localhost:$port/readyz" >/dev/null && break; sleep 0.2; done
key=$(grep -o 'hk_[A-Za-z0-9_]*' "$work/log" | head -1)
serving=$(pgrep -P "$sup" | head -1)
if [ "$proto" = rest ]; then
  conns=50
  args=(--h1 -c $conns -m 1 -d "$work/notify.json" -H "content-type: application/json"
    "http://127.0.0.1:$port/v1/notify")
else
  conns=10
  args=(-c $conns -m 10 -d "$work/notify.grpc" -H "content-type: application/grpc" -H "te: trailers"
    "http://127.0.0.1:$port/herald.v1.NotifyService/Notify")
fi
h2load -D 3 -H "authorization: Bearer $key" "${args[@]}" >/dev/null 2>&1 # warm-up at maximum
sched() { cut -d' ' -f1-3 "/proc/$serving/task/$serving/schedstat"; }
report() { # label, publishes, before, after (each "ran waited slices", ns)
  awk -v l="$1" -v n="$2" -v b="$3" -v a="$4" 'BEGIN { split(b, x, " "); split(a, y, " ");
    printf "%s: the event loop thread ran %d ms, waited %d ms for a core, was scheduled %d times",
      l, (y[1] - x[1]) / 1e6, (y[2] - x[2]) / 1e6, y[3] - x[3];
    if (n > 0) printf "; %d us on a core a publish", (y[1] - x[1]) / 1e3 / n; print "" }'
}
sleep 2
b=$(sched); sleep 10; report "nothing offered, 10 s" 0 "$b" "$(sched)"
for rate in $rates; do
  b=$(sched)
  h2load -n $((rate * 10)) --rps "$(awk -v r="$rate" -v c=$conns 'BEGIN { print r / c }')" -r 1 \
    --rate-period "$(awk -v r="$rate" 'BEGIN { p = int(1000 / r); print (p < 1 ? 1 : p) }')ms" \
    -H "authorization: Bearer $key" "${args[@]}" >"$work/h2load.out" 2>&1
  report "$proto at $rate/s for 10 s" $((rate * 10)) "$b" "$(sched)"
done
