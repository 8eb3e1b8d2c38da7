#!/usr/bin/env bash
# What running quire for a team costs (issue: operations):
#   - authentication and the access log per request: GET /api/v1/meta
#     (1 connection, median latency) and POST /api/v1/history/apply
#     (8 connections, requests/s), with no token, with three users, and
#     with three users at --log-level debug (a log line for every request)
#   - a /metrics scrape with 100 open sessions (median of 50)
#   - `quire backup` of a 1,000 pages x 50 nodes project: time and size
# Needs wrk (Debian: apt-get install wrk), curl and python3. Usage:
# benches/team.sh; BENCH_BIN=path measures an already built binary
# (benches/support/serve.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/support/serve.sh
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
  local name=$1
  shift
  serve "$name" batch "$@"
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
