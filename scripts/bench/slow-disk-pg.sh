#!/usr/bin/env bash
# A PostgreSQL 15 whose disk is slow to flush: every fdatasync (the WAL's flush at each commit)
# takes DELAY_US microseconds longer, injected by strace (Debian's strace; seccomp-bpf, so only
# that call stops). This machine's disk flushes in about 0.12 ms (pg_test_fsync); a cloud disk
# can take milliseconds, and then the maximum is set by commits a flush, not by CPU. Runs until
# stopped (Ctrl-C or any ending signal), then shuts the cluster down and removes it. As root.
#
#   scripts/bench/slow-disk-pg.sh [port 5499] [DELAY_US 2000] &
#   scripts/bench/held-out.sh postgres://postgres@127.0.0.1:5499 8
set -euo pipefail
port=${1:-5499}
delay=${2:-2000}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
# What a SIGKILLed run left: its directory (its PostgreSQL ended with it, below). One whose
# PostgreSQL still runs (another port's) or that is being made (a minute old) is not touched.
for old in $(find /var/tmp -maxdepth 1 -name 'herald-slow-disk-*' -mmin +1 2>/dev/null); do
  pm=$(head -1 "$old/data/postmaster.pid" 2>/dev/null || true)
  if [ -z "$pm" ] || ! kill -0 "$pm" 2>/dev/null; then rm -rf "$old"; fi
done
dir=$(mktemp -d /var/tmp/herald-slow-disk-XXXXXX)
chown postgres "$dir"
as_pg() { su postgres -s /bin/sh -c "$*"; }
as_pg "$bin/initdb -D $dir/data -A trust -U postgres" >/dev/null
pid=""
# PostgreSQL itself gets the fast shutdown (strace in between passes on no signal); strace ends
# with it.
stop() {
  local postmaster
  postmaster=$(head -1 "$dir/data/postmaster.pid" 2>/dev/null || true)
  if [ -n "$postmaster" ]; then kill -INT "$postmaster" 2>/dev/null || true; fi
  if [ -n "$pid" ]; then wait "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap stop EXIT
trap 'exit 130' INT TERM HUP QUIT
# Whatever ends this script, SIGKILL included, nothing it started outlives it: strace gets
# SIGKILL when the script ends (parent-death signals, util-linux's setpriv; strace blocks the
# others), and PostgreSQL SIGINT, its fast shutdown, when strace ends.
setpriv --reuid=postgres --regid=postgres --init-groups -- \
  setpriv --pdeathsig KILL -- strace -f --seccomp-bpf -e trace=fdatasync \
  -e inject=fdatasync:delay_exit="$delay" -o /dev/null \
  setpriv --pdeathsig INT -- "$bin/postgres" -D "$dir/data" -p "$port" \
  -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=256MB \
  >"$dir/log" 2>&1 &
pid=$!
until pg_isready -q -h 127.0.0.1 -p "$port"; do
  kill -0 "$pid" 2>/dev/null || { cat "$dir/log" >&2; exit 1; }
  sleep 0.2
done
echo "postgres://postgres@127.0.0.1:$port (each fdatasync ${delay} us slower; Ctrl-C stops it)"
wait "$pid"
