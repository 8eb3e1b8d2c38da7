#!/usr/bin/env bash
# HTTP benchmarks of `quire --headless` (targets in spec/09-quality.md):
#   - GET /api/v1/meta, 1 connection: latency (median)
#   - POST /api/v1/history/apply, 8 connections: requests/s, durability batch and fsync
#   - GET /api/v1/scene.json for a 1,000 pages x 50 nodes scene
#   - RSS of an idle headless process
# Needs wrk (Debian: apt-get install wrk) and python3. Usage: benches/http.sh
# BENCH_BIN=path measures an already built binary (benches/support/serve.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/support/serve.sh

start() { # durability
  serve "$1" "$1" -q
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
