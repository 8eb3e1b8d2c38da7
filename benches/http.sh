#!/usr/bin/env bash
# HTTP benchmarks of `quire --headless` (targets in spec/09-quality.md):
#   - GET /api/v1/meta, 1 connection: latency (median)
#   - POST /api/v1/history/apply, 8 connections: requests/s, durability batch and fsync
#   - GET /api/v1/scene.json for a 1,000 pages x 50 nodes scene
#   - RSS of an idle headless process
# Needs wrk (Debian: apt-get install wrk) and python3. Usage: benches/http.sh
# BENCH_BIN=path runs an already built binary instead of building the release
# profile (to compare profiles or commits).
# Client and server are pinned to CPU 0 (taskset) where available, as the
# specification asks for latency figures.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
if [ -n "${BENCH_BIN:-}" ]; then
  bin=$BENCH_BIN
else
  cargo build --release --quiet
  bin=$PWD/target/release/quire
fi
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"

start() { # durability
  XDG_CONFIG_HOME=$work/c XDG_DATA_HOME=$work/d-$1 QUIRE_SYSTEM_CONFIG_DIR=$work/e \
    QUIRE_STORAGE__DURABILITY=$1 $pin "$bin" --headless --port 0 -q 2>"$work/err-$1" &
  pid=$!
  for _ in $(seq 1 200); do
    url=$(grep -o 'http://[0-9.:]*' "$work/err-$1" 2>/dev/null || true)
    [ -n "$url" ] && break
    sleep 0.05
  done
  [ -n "$url" ] || { cat "$work/err-$1" >&2; exit 1; }
  curl -sf -X POST "$url/api/v1/projects" -d '{"name":"bench"}' >/dev/null
}

cat >"$work/apply.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"type":"UpdateProject","patch":{"name":"bench"}}'
wrk.headers["Content-Type"] = "application/json"
LUA

latency() { # url
  $pin wrk -t1 -c1 -d5s --latency "$1" | awk '/ 50%/{print "  median latency: " $2}'
}

echo "== idle RSS and GET /api/v1/meta (durability batch)"
start batch
sleep 1
echo "  idle RSS: $(awk '/VmRSS/{print $2 " " $3}' /proc/$pid/status)"
latency "$url/api/v1/meta"
echo "== POST /api/v1/history/apply, 8 connections, durability batch"
$pin wrk -t2 -c8 -d10s -s "$work/apply.lua" "$url/api/v1/history/apply" | awk '/Requests\/sec/{print "  " $0} /Non-2xx/{print "  " $0}'

echo "== GET /api/v1/scene.json, 1,000 pages x 50 nodes"
python3 - "$url" <<'PY'
import json, sys, urllib.request
url = sys.argv[1]
def node(i):
    return {"transform": {"x": i, "y": i, "width": 120, "height": 28},
            "kind": {"type": "text", "text": f"Line {i}: the quick brown fox jumps over the lazy dog",
                     "translation": f"Ligne {i} : le renard brun saute par-dessus le chien", "sourceLang": "en"}}
for chunk in range(10):
    ops = [{"type": "AddPage", "page": {"name": f"page {chunk*100+p}", "nodes": [node(i) for i in range(50)]}}
           for p in range(100)]
    req = urllib.request.Request(url + "/api/v1/history/apply", data=json.dumps({"type": "Batch", "ops": ops}).encode(), method="POST")
    urllib.request.urlopen(req).read()
PY
size=$(curl -s "$url/api/v1/scene.json" | wc -c)
echo "  body: $size bytes"
$pin wrk -t1 -c1 -d10s --latency "$url/api/v1/scene.json" | awk '/ 50%/{print "  median latency: " $2} /Requests\/sec/{print "  " $0}'
kill $pid; wait $pid || true

echo "== POST /api/v1/history/apply, 8 connections, durability fsync"
start fsync
$pin wrk -t2 -c8 -d10s -s "$work/apply.lua" "$url/api/v1/history/apply" | awk '/Requests\/sec/{print "  " $0} /Non-2xx/{print "  " $0}'
kill $pid; wait $pid || true
