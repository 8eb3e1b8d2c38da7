#!/usr/bin/env bash
# What running quire for a team costs (issue: operations):
#   - authentication and the access log per request: GET /api/v1/meta
#     (1 connection, median latency) and POST /api/v1/history/apply
#     (8 connections, requests/s), with no token, with three users, and
#     with three users at --log-level debug (a log line for every request)
#   - a /metrics scrape with 100 open sessions (median of 50)
#   - `quire backup` of a 1,000 pages x 50 nodes project: time and size
# Needs wrk (Debian: apt-get install wrk), curl and python3. Usage:
# benches/team.sh; BENCH_BIN=path runs an already built binary.
# Client and server are pinned to CPU 0 (taskset) where available.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
if [ -n "${BENCH_BIN:-}" ]; then
  bin=$BENCH_BIN
else
  cargo build --release --quiet
  bin=${CARGO_TARGET_DIR:-$PWD/target}/release/quire
fi
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"
token=bench-owner-token-8c1f

cat >"$work/team.toml" <<TOML
[server]
token = "$token"
[[server.users]]
name = "ana"
token = "bench-ana-token-5d2e"
role = "edit"
[[server.users]]
name = "rui"
token = "bench-rui-token-0b9a"
role = "read"
TOML

start() { # name, args…
  local name=$1; shift
  XDG_CONFIG_HOME=$work/c XDG_DATA_HOME=$work/d-$name QUIRE_SYSTEM_CONFIG_DIR=$work/e \
    QUIRE_STORAGE__DURABILITY=batch $pin "$bin" --headless --port 0 "$@" 2>"$work/err-$name" &
  pid=$!
  for _ in $(seq 1 200); do
    url=$(grep -o 'quire: serving http://[0-9.:]*' "$work/err-$name" 2>/dev/null | grep -o 'http://.*' || true)
    [ -n "$url" ] && break
    sleep 0.05
  done
  [ -n "$url" ] || { cat "$work/err-$name" >&2; exit 1; }
  curl -sf -H "Authorization: Bearer $token" -X POST "$url/api/v1/projects" -d '{"name":"bench"}' >/dev/null
}

cat >"$work/apply.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"type":"UpdateProject","patch":{"name":"bench"}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $token"
LUA
cat >"$work/read.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $token"
LUA

for variant in open users users-debug; do
  case $variant in
    open) start $variant -q ;;
    users) start $variant --config "$work/team.toml" ;;
    users-debug) start $variant --config "$work/team.toml" --log-level debug ;;
  esac
  echo "== $variant"
  $pin wrk -t1 -c1 -d5s --latency -s "$work/read.lua" "$url/api/v1/meta" |
    awk '/ 50%/{print "  GET /api/v1/meta median latency: " $2}'
  $pin wrk -t2 -c8 -d10s -s "$work/apply.lua" "$url/api/v1/history/apply" |
    awk '/Requests\/sec/{print "  POST apply, 8 connections: " $2 " requests/s"} /Non-2xx/{print "  " $0}'
  kill $pid; wait $pid || true
done

echo "== /metrics with 100 open sessions"
start metrics --config "$work/team.toml"
for i in $(seq 2 100); do
  curl -sf -H "Authorization: Bearer $token" -X POST "$url/api/v1/projects" -d "{\"name\":\"p$i\"}" >/dev/null
done
open=$(curl -sf -H "Authorization: Bearer $token" "$url/metrics" | awk '/^quire_sessions_open /{print $2}')
times=$(for _ in $(seq 1 50); do
  curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $token" "$url/metrics"
done | sort -n)
echo "  open sessions: $open; median scrape: $(echo "$times" | sed -n 25p) s; bytes: $(curl -s -H "Authorization: Bearer $token" "$url/metrics" | wc -c)"
kill $pid; wait $pid || true

echo "== quire backup, 1,000 pages x 50 nodes"
start backup --config "$work/team.toml"
python3 - "$url" "$token" <<'PY'
import json, sys, urllib.request
url, token = sys.argv[1:3]
def node(i):
    return {"transform": {"x": i, "y": i, "width": 120, "height": 28},
            "kind": {"type": "text", "text": f"Line {i}: the quick brown fox jumps over the lazy dog",
                     "translation": f"Ligne {i} : le renard brun saute par-dessus le chien", "sourceLang": "en"}}
sessions = json.load(urllib.request.urlopen(urllib.request.Request(
    url + "/api/v1/sessions", headers={"Authorization": f"Bearer {token}"})))
session = sessions[0]["id"]
for chunk in range(10):
    ops = [{"type": "AddPage", "page": {"name": f"page {chunk*100+p}", "nodes": [node(i) for i in range(50)]}}
           for p in range(100)]
    req = urllib.request.Request(f"{url}/api/v1/sessions/{session}/history/apply",
                                 data=json.dumps({"type": "Batch", "ops": ops}).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    urllib.request.urlopen(req).read()
PY
data=$work/d-backup/quire
start_ns=$(date +%s%N)
$pin "$bin" --data-dir "$data" backup --out "$work/nightly.tar" >/dev/null
end_ns=$(date +%s%N)
echo "  while serving: $(( (end_ns - start_ns) / 1000000 )) ms; $(du -h "$work/nightly.tar" | cut -f1) ($(stat -c %s "$work/nightly.tar") bytes); the project on disk: $(du -sh "$data/projects" | cut -f1)"
kill $pid; wait $pid || true
