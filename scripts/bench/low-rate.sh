#!/usr/bin/env bash
# What a publish costs the serving process below its maximum: `npm start` of this tree with one
# serving process on a PostgreSQL you name (the machine's own, trust auth), driven by h2load at
# fixed rates (evenly spread, as the benchmark's paced rows), over REST (or gRPC: PROTO=grpc).
# For each rate, the serving process's event loop thread: its time on a core and its time
# runnable but waiting for one (/proc/<pid>/task/<tid>/schedstat), the times it was scheduled,
# and its time on a core per publish; first the same with nothing offered, and how many
# transactions the idle process meanwhile asked of PostgreSQL.
#
#   scripts/bench/low-rate.sh [postgres://postgres@127.0.0.1:5432] ["100 200 500 1000"]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/bench/herald-under-load.sh
server=${1:-postgres://postgres@127.0.0.1:5432}
rates=${2-100 200 500 1000}
proto=${PROTO:-rest}
work=$(mktemp -d)
node --experimental-strip-types --no-warnings scripts/bench/bodies.ts "$work"
port=18667
db=herald_low_rate
trap cleanup_herald EXIT
trap 'exit 130' INT TERM HUP QUIT
start_herald "$server" "$db" "$work/data" "$port" "$work/log"
publish_args "$proto" "$work" "$port"
h2load -D 3 -H "authorization: Bearer $key" "${args[@]}" >/dev/null 2>&1 # warm-up at maximum
sched() { cut -d' ' -f1-3 "/proc/$serving/task/$serving/schedstat"; }
report() { # label, publishes, before, after (each "ran waited slices", ns)
  awk -v l="$1" -v n="$2" -v b="$3" -v a="$4" 'BEGIN { split(b, x, " "); split(a, y, " ");
    printf "%s: the event loop thread ran %d ms, waited %d ms for a core, was scheduled %d times",
      l, (y[1] - x[1]) / 1e6, (y[2] - x[2]) / 1e6, y[3] - x[3];
    if (n > 0) printf "; %d us on a core a publish", (y[1] - x[1]) / 1e3 / n; print "" }'
}
# Transactions PostgreSQL counted in the database (each statement outside one is one). A backend
# gone idle reports its counts up to 10 s late, so the idle reading starts 11 s after the
# warm-up's last publish.
xacts() {
  psql "$server/$db" -Atc "select xact_commit + xact_rollback from pg_stat_database where datname = '$db'"
}
sleep 11
b=$(sched); t=$(xacts); sleep 10; report "nothing offered, 10 s" 0 "$b" "$(sched)"
echo "  PostgreSQL meanwhile: $(($(xacts) - t - 1)) transactions in the database"
for rate in $rates; do
  b=$(sched)
  h2load -n $((rate * 10)) --rps "$(awk -v r="$rate" -v c=$conns 'BEGIN { print r / c }')" -r 1 \
    --rate-period "$(awk -v r="$rate" 'BEGIN { p = int(1000 / r); print (p < 1 ? 1 : p) }')ms" \
    -H "authorization: Bearer $key" "${args[@]}" >"$work/h2load.out" 2>&1
  report "$proto at $rate/s for 10 s" $((rate * 10)) "$b" "$(sched)"
done
