# Sourced by held-out.sh and low-rate.sh (from the repository's root): `npm start` of this tree
# with one serving process and its limits lifted, on a fresh database, and h2load's arguments
# for publishing to it.

# sql ARGS…: psql without its notices.
sql() { PGOPTIONS="-c client_min_messages=warning" psql "$@"; }

# Databases made on the named PostgreSQL, dropped by cleanup_herald (BENCH_KEEP_DB=1 keeps them).
made_dbs=()

# fresh_db SERVER DB: database DB made afresh on SERVER, and dropped again by cleanup_herald.
fresh_db() {
  sql "$1/postgres" -qc "drop database if exists $2" -c "create database $2" >/dev/null
  made_dbs+=("$2")
}

# cleanup_herald (the scripts' EXIT trap): stops the Herald start_herald started, if it runs,
# drops the databases made, and removes `work`: a run leaves nothing on the PostgreSQL it was given.
cleanup_herald() {
  if [ -n "${sup:-}" ]; then kill -TERM "$sup" 2>/dev/null || true; wait "$sup" 2>/dev/null || true; fi
  if [ -z "${BENCH_KEEP_DB:-}" ]; then
    for db in "${made_dbs[@]}"; do
      sql "$server/postgres" -qc "drop database if exists $db with (force)" >/dev/null 2>&1 || true
    done
  fi
  rm -rf "$work"
}

# start_herald SERVER DB DATA_DIR PORT LOG: database DB made afresh on SERVER (a
# PostgreSQL URL without a database), the server started on PORT, its output in LOG; sets `sup`
# (the supervisor's pid), `key` (the first start's API key) and `serving` (the serving process).
# BENCH_NODE_FLAGS are given to `node` (`--inspect=127.0.0.1:9229` for promoted.ts).
start_herald() {
  local server=$1 db=$2 data=$3 port=$4 log=$5
  fresh_db "$server" "$db"
  env DATABASE_URL="$server/$db" HERALD_BOOTSTRAP=1 \
    HERALD_DATA_DIR="$data" HERALD_PORT="$port" HERALD_PROCESSES=1 HERALD_LOG_FORMAT=json \
    HERALD_RATE_LIMIT_BURST=1000000 HERALD_RATE_LIMIT_PER_SECOND=1000000 \
    HERALD_ACCOUNT_RATE_BURST=1000000 HERALD_ACCOUNT_RATE_PER_SECOND=1000000 \
    HERALD_MONTHLY_QUOTA=1000000000 \
    node ${BENCH_NODE_FLAGS:-} scripts/run.mjs main >"$log" 2>&1 &
  sup=$!
  for _ in $(seq 1 150); do curl -sf "localhost:$port/readyz" >/dev/null && break; sleep 0.2; done
  key=$(grep -o 'hk_[A-Za-z0-9_]*' "$log" | head -1)
  serving=$(pgrep -P "$sup" | head -1)
}

# publish_args PROTO BODIES PORT: h2load's arguments for publishing over PROTO (rest, connect:
# HTTP/1.1, 50 connections; grpc: h2c, 10 connections × 10 streams) with the bodies bodies.ts
# wrote into BODIES (those named with `suffix`, if set: `-ci`); sets `args` and `conns`.
publish_args() {
  local proto=$1 bodies=$2 url="http://127.0.0.1:$3"
  case "$proto" in
    rest)
      conns=50
      args=(--h1 -c $conns -m 1 -d "$bodies/notify${suffix:-}.json" -H "content-type: application/json"
        "$url/v1/notify") ;;
    connect)
      conns=50
      args=(--h1 -c $conns -m 1 -d "$bodies/notify${suffix:-}.bin" -H "content-type: application/proto"
        "$url/herald.v1.NotifyService/Notify") ;;
    *)
      conns=10
      args=(-c $conns -m 10 -d "$bodies/notify${suffix:-}.grpc" -H "content-type: application/grpc"
        -H "te: trailers" "$url/herald.v1.NotifyService/Notify") ;;
  esac
}
