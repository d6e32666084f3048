#!/usr/bin/env bash
# Issue 24's before and after, in one sitting: held-out.sh (the yardstick, then `npm start` with
# one serving process at h2load's maximum over REST and gRPC) run in turns on an older commit
# and on this tree, ROUNDS times each, so that both meet the same hour of the machine. The older
# commit is checked out into a scratch worktree with its own `npm ci`, and measured with this
# tree's held-out.sh (the same h2load shape and bodies); the worktree is removed at the end.
# Prints a markdown table, one row per run, the yardstick in every row. FANOUT=1 adds each
# tree's own scenario 4 (`npm run bench -- --only 4`: the fan-out over kept-alive connections,
# to the devices that tree's benchmark adds, and the APNs sender) in the same turns, a second
# table. Against 2e4c979, last, what this machine is against the issue's: the issue measured
# that tree there (issue-machine.awk), so the before tree's figures here give the factor, and
# this tree's figures scaled by it estimate what the issue's machine would measure.
#
#   scripts/bench/before-after.sh [commit, default 2e4c979: before issue 24] [rounds] [seconds]
#
# DATABASE_URL's server (without a database) is used, or the machine's PostgreSQL on 5432.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$(pwd)
rev=${1:-2e4c979}
rounds=${2:-3}
secs=${3:-10}
server=$(echo "${DATABASE_URL:-postgres://postgres@127.0.0.1:5432}" | sed -E 's#^(postgres(ql)?://[^/]+).*$#\1#')
work=$(mktemp -d)
cleanup() {
  git -C "$here" worktree remove --force "$work/before" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP QUIT

git worktree add --detach "$work/before" "$rev" >/dev/null 2>&1
(cd "$work/before" && npm ci --no-audit --no-fund >"$work/npm-ci.log" 2>&1) || {
  echo "npm ci of $rev failed: $work/npm-ci.log" >&2
  cat "$work/npm-ci.log" >&2
  exit 1
}
for f in held-out.sh herald-under-load.sh bodies.ts; do
  cp "scripts/bench/$f" "$work/before/scripts/bench/$f"
done

# One held-out run of the tree in $1, as a table row labelled $2.
row() {
  local out
  out=$(cd "$1" && bash scripts/bench/held-out.sh "$server" "$secs" 2>&1) || {
    echo "held-out.sh failed in $1:" >&2
    echo "$out" >&2
    exit 1
  }
  echo "$out" | awk -v tree="$2" -v at="$(date -u +%H:%M)" -v kept="$work/values" -v side="$3" '
    /^yardstick/ { y = $3 }
    /^(rest|grpc):/ { rate[$1] = $2; ratio[$1] = substr($4, 2); us[$1] = $7 }
    END { printf "| %s | %s | %s/s | %s/s, %s, %s µs | %s/s, %s, %s µs |\n", at, tree, y,
      rate["rest:"], ratio["rest:"], us["rest:"], rate["grpc:"], ratio["grpc:"], us["grpc:"]
      printf "%s rest_us %s\n%s grpc_us %s\n", side, us["rest:"], side, us["grpc:"] >>kept
      printf "%s rest_ratio %s\n%s grpc_ratio %s\n", side, ratio["rest:"], side, ratio["grpc:"] >>kept }'
}

# One run of scenario 4 of the tree in $1 (its own benchmark), as a table row labelled $2.
fan_row() {
  local out
  out=$(cd "$1" && DATABASE_URL="$server/postgres" npm run bench -- --only 4 2>&1) || {
    echo "npm run bench -- --only 4 failed in $1:" >&2
    echo "$out" >&2
    exit 1
  }
  echo "$out" | awk -v tree="$2" -v at="$(date -u +%H:%M)" -v kept="$work/values" -v side="$3" '
    /^  fan-out to [0-9]+ devices, kept-alive provider connections: all settled in/ {
      devices = $3
      for (i = 1; i < NF; i++) if ($i == "in" && $(i + 1) ~ /^[0-9]+$/) { ms = $(i + 1); break } }
    /^  APNs sender throughput/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^pushes/) apns = $i }
    END {
      if (!devices || !ms || !apns) {
        print "no fan-out or APNs figure in scenario 4'"'"'s output, which was:" > "/dev/stderr"; exit 1 }
      printf "| %s | %s | %s devices in %s ms (%.2f ms a device) | %s/s |\n", at, tree,
      devices, ms, ms / devices, apns
      printf "%s fan_ms %s\n%s fan_devices %s\n%s apns %s\n", side, ms, side, devices, side, apns >>kept }' ||
    { echo "$out" >&2; exit 1; }
}

echo "| at (UTC) | tree | yardstick | REST committed, ratio, CPU a publish | gRPC committed, ratio, CPU a publish |"
echo "|---|---|---|---|---|"
this="$(git rev-parse --short HEAD) (this tree)"
for _ in $(seq 1 "$rounds"); do
  row "$work/before" "$rev (before)" before
  row "$here" "$this" after
done
if [ "${FANOUT:-}" = 1 ]; then
  echo
  echo "| at (UTC) | tree | fan-out, kept-alive connections: settled in | APNs sender |"
  echo "|---|---|---|---|"
  for _ in $(seq 1 "$rounds"); do
    fan_row "$work/before" "$rev (before)" before
    fan_row "$here" "$this" after
  done
fi
if [ "$(git rev-parse --short=7 "$rev")" = 2e4c979 ]; then
  echo
  awk -f scripts/bench/issue-machine.awk "$work/values"
fi
