#!/usr/bin/env bash
# What one flood or one hostile file may cost a server (spec 16, "Under
# attack"):
#   - junk load: requests without a token to distinct unmatched paths with
#     made-up methods (3,000, then as many as wrk sends in 10 s): series
#     and bytes /metrics gains, the server's RSS, and what the log gains
#   - PO import: the server's peak memory (VmHWM) for real-shaped PO files
#     of 1, 2 and 4 MB, and for the 5 MB file of 100,000 plural entries
#     with nplurals=16 (refused by its cost)
#   - a merge with 20,000 conflicts: with `take` naming all of them, and
#     with 1,500,000 ids that are not units of the file (refused)
# Needs wrk (Debian: apt-get install wrk), curl and python3. Usage:
# benches/attack.sh; BENCH_BIN=path measures an already built binary
# (benches/support/serve.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/support/serve.sh
token=bench-owner-token-3a7c
printf '[server]\ntoken = "%s"\n' "$token" >"$work/owner.toml"
auth=(-H "Authorization: Bearer $token")

rss_kib() { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
hwm_kib() { awk '/^VmHWM:/{print $2}' "/proc/$1/status"; }
series() { curl -sf "${auth[@]}" "$url/metrics" | grep -cv '^#'; }
metrics_bytes() { curl -sf "${auth[@]}" "$url/metrics" | wc -c; }

echo "== junk load (no token, unmatched paths, made-up methods)"
serve junk batch --config "$work/owner.toml"
# A server that has served: a project, a page, an edit, reads.
session=$(curl -sf "${auth[@]}" -X POST "$url/api/v1/projects" -d '{"name":"bench"}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
curl -sf "${auth[@]}" -X POST "$url/api/v1/sessions/$session/pages" \
  -H 'Content-Type: application/json' -d '{"name":"p1","text":"One.\n\nTwo."}' >/dev/null
for route in meta sessions projects engines; do curl -sf "${auth[@]}" "$url/api/v1/$route" >/dev/null; done
s0=$(series) b0=$(metrics_bytes) r0=$(rss_kib $pid) l0=$(wc -c <"$work/err-junk") n0=$(wc -l <"$work/err-junk")
python3 - "$url" <<'PY'
import http.client, sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port)
for i in range(3000):
    c.request(("JUNK%d" % i, "PROPFIND", "X-%d" % i)[i % 3], "/junk/%d/%d" % (i, i * 7919))
    c.getresponse().read()
PY
s1=$(series) b1=$(metrics_bytes) r1=$(rss_kib $pid) l1=$(wc -c <"$work/err-junk") n1=$(wc -l <"$work/err-junk")
echo "  3,000 requests: +$((s1 - s0)) series, /metrics $b0 -> $b1 bytes, RSS +$(((r1 - r0) / 1024)) MiB ($r0 -> $r1 KiB), log +$((l1 - l0)) bytes in $((n1 - n0)) lines"
cat >"$work/junk.lua" <<'LUA'
-- Methods wrk's parser knows that quire counts as "other".
local methods = { "PROPFIND", "MKCOL", "SEARCH", "PURGE" }
local n = 0
request = function()
  n = n + 1
  return wrk.format(methods[n % 4 + 1], "/junk/" .. n .. "/" .. (n * 7919))
end
LUA
sent=$($pin wrk -t1 -c8 -d10s -s "$work/junk.lua" "$url" | awk '/requests in/{print $1}')
s2=$(series) b2=$(metrics_bytes) r2=$(rss_kib $pid) l2=$(wc -c <"$work/err-junk") n2=$(wc -l <"$work/err-junk")
echo "  then $sent more (wrk, 8 connections, 10 s): +$((s2 - s1)) series, /metrics $b2 bytes, RSS $r2 KiB (+$(((r2 - r0) / 1024)) MiB in all), log +$((l2 - l1)) bytes in $((n2 - n1)) lines"
kill $pid; wait $pid || true
echo "  after the stop, the summaries: $(grep -c 'not logged one by one' "$work/err-junk") lines; the log held $(wc -c <"$work/err-junk") bytes"

echo "== PO import: the server's peak memory"
python3 - "$work" <<'PY'
import os, sys
work = sys.argv[1]
def entry(i):
    # Shaped like Django's catalogues: references, a context now and
    # then, a plural entry in ten, translated.
    if i % 10 == 0:
        return (f'#: contrib/admin/options.py:{i}\nmsgid "Deleted {i} item."\n'
                f'msgid_plural "Deleted {i} items."\nmsgstr[0] "Apagado {i} item."\n'
                f'msgstr[1] "Apagados {i} itens."\n\n')
    ctx = f'msgctxt "form {i % 7}"\n' if i % 5 == 0 else ""
    return (f'#: contrib/admin/templates/admin/base.html:{i}\n{ctx}'
            f'msgid "Welcome to the administration of site number {i}."\n'
            f'msgstr "Bem-vindo à administração do site número {i}."\n\n')
head = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
        '"Language: pt_BR\\n"\n"Plural-Forms: nplurals=2; plural=(n > 1);\\n"\n\n')
for mb in (1, 2, 4):
    with open(f"{work}/real-{mb}mb.po", "w") as f:
        f.write(head)
        i = 0
        while f.tell() < mb * 1_000_000:
            f.write(entry(i)); i += 1
with open(f"{work}/plural16.po", "w") as f:
    f.write('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
            '"Plural-Forms: nplurals=16; plural=(n%16);\\n"\n\n')
    for i in range(100_000):
        f.write(f'msgid "f{i}"\nmsgid_plural "fs{i}"\nmsgstr[0] ""\n\n')
PY
for file in real-1mb real-2mb real-4mb plural16; do
  serve "po-$file" batch --config "$work/owner.toml"
  session=$(curl -sf "${auth[@]}" -X POST "$url/api/v1/projects" -d '{"name":"po"}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  before=$(hwm_kib $pid)
  size=$(stat -c %s "$work/$file.po")
  status=$(curl -s -o "$work/po-answer" -w '%{http_code}' "${auth[@]}" \
    -F "file=@$work/$file.po;filename=$file.po" "$url/api/v1/sessions/$session/pages")
  after=$(hwm_kib $pid)
  echo "  $file.po ($size bytes): $status; peak $before -> $after KiB, +$(((after - before) / 1024)) MiB ($(python3 -c "print(round(($after - $before) * 1024 / $size, 1))") x the file)$([ "$status" = 200 ] || echo "; $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"]["message"][:90])' "$work/po-answer")")"
  kill $pid; wait $pid || true
done

echo "== a merge with 20,000 conflicts"
serve merge batch --config "$work/owner.toml"
python3 - "$url" "$token" <<'PY'
import json, sys, time, urllib.request
url, token = sys.argv[1:3]
H = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
def call(method, path, body=None, raw=False):
    req = urllib.request.Request(url + path, method=method, headers=H,
                                 data=None if body is None else json.dumps(body).encode())
    try:
        with urllib.request.urlopen(req) as r:
            data = r.read()
            return r.status, (data if raw else json.loads(data))
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
_, s = call("POST", "/api/v1/projects", {"name": "merge"})
p = f"/api/v1/sessions/{s['id']}"
text = "\n\n".join(f"Line {i}." for i in range(20_000))
call("POST", p + "/pages", {"name": "p1", "text": text})
_, xliff = call("POST", p + "/export", {"format": "xliff"}, raw=True)
xliff = xliff.decode()
_, scene = call("GET", p + "/scene.json")
page = scene["scene"]["pages"][0]
ops = [{"type": "UpdateNode", "page": page["id"], "id": n["id"],
        "patch": {"kind": {"type": "text", "translation": "here"}}} for n in page["nodes"]]
call("POST", p + "/history/apply", {"type": "Batch", "ops": ops})
theirs = xliff.replace("</source>", "</source><target>there</target>")
def merge(take):
    started = time.perf_counter()
    status, body = call("POST", p + "/import", {"format": "xliff", "content": theirs, "take": take})
    return status, body, time.perf_counter() - started
status, report, took = merge([])
units = [c["unit"] for c in report["conflicts"]]
print(f"  no take: {status}, {len(units)} conflicts, {took:.2f} s")
status, report, took = merge(units)
applied = sum(c["applied"] for c in report["conflicts"])
print(f"  take naming all {len(units)}: {status}, {applied} applied, {took:.2f} s")
status, body, took = merge([f"n{i}" for i in range(1_500_000)] + units)
print(f"  take of 1,500,000 ids not in the file: {status} ({body['error']['message'][:40]}…), {took:.2f} s")
PY
kill $pid; wait $pid || true

echo "== detect on hostile pages (dots a pixel wide, the builtin detector)"
for spec in 10000x10000:1000000 5650x5650:1000000 3000x4200:400000; do
  w=${spec%%x*} rest=${spec#*x} h=${rest%%:*} dots=${spec#*:}
  "${PYTHON:-python3}" - "$work/dots.png" "$w" "$h" "$dots" <<'PY'
import random, sys, zlib, struct
out, w, h, dots = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rows = [bytearray(b"\xff" * w) for _ in range(h)]
rnd = random.Random(7)
for _ in range(dots):
    rows[rnd.randrange(h)][rnd.randrange(w)] = 0
raw = b"".join(b"\x00" + bytes(r) for r in rows)
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
open(out, "wb").write(png)
PY
  serve "dots-$w" batch --config "$work/owner.toml"
  session=$(curl -sf "${auth[@]}" -X POST "$url/api/v1/projects" -d '{"name":"dots"}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  curl -sf "${auth[@]}" -F "file=@$work/dots.png;filename=dots.png" "$url/api/v1/sessions/$session/pages" >/dev/null
  before=$(hwm_kib $pid)
  start_ns=$(date +%s%N)
  job=$(curl -sf "${auth[@]}" -X POST "$url/api/v1/sessions/$session/pipelines" \
    -H 'Content-Type: application/json' -d '{"steps":["detect"]}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["jobId"])')
  while :; do
    state=$(curl -sf "${auth[@]}" "$url/api/v1/operations" | python3 -c '
import json, sys
job = [j for j in json.load(sys.stdin) if j["id"] == sys.argv[1]][0]
if job["status"] not in ("queued", "running"):
    print(job["status"], (job["warnings"] or [{"message": ""}])[0]["message"][:70])' "$job")
    [ -n "$state" ] && break
    sleep 0.1
  done
  end_ns=$(date +%s%N)
  echo "  ${w}x${h}, $dots dots: $(( (end_ns - start_ns) / 1000000 )) ms, peak $before -> $(hwm_kib $pid) KiB; $state"
  kill $pid; wait $pid || true
done
