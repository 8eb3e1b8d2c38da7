"""Benchmarks of the web workbench in Debian's Chromium (Playwright for
Python), against a real quire serving a 100-page session (1200 x 1800 px
pages, 8 text boxes each) from a temporary data directory:

- first paint and time to interactive of the session, cold browser cache
  (interactive: the strip's rows, the page image decoded and its boxes
  drawn);
- an SSE burst: 1,000 edits applied by 8 concurrent HTTP clients while the
  page shows the session; the longest frame and the 95th percentile frame
  time meanwhile, and how long until the page shows the last edit;
- the thumbnail route: GET /blobs/{hash}?maxSide=256 for every page, cold
  (decoded and scaled) and warm (cached), and a 304 revalidation;
- a big session, 1,000 text pages x 50 text nodes: time to interactive,
  the page strip scrolled from top to bottom (frame times), and the same
  SSE burst (each edit makes the page fetch the whole scene again, at most
  one fetch in flight).

"Frames" are requestAnimationFrame intervals; "long tasks" are the
main-thread tasks over 50 ms that Chromium reports (PerformanceObserver),
the measure of a page that freezes.

Usage: .venv/bin/python benches/web.py target/release/quire [RUNS]
(scripts/test's .venv has Playwright; `cargo build --release` first.)
"""

import http.client
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
PAGES, BOXES, WIDTH, HEIGHT = 100, 8, 1200, 1800


def png(width, height, seed):
    """A gradient page whose colours depend on `seed` (so every page is its own blob)."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    row_cache = {}
    rows = []
    for y in range(height):
        key = y % 64
        if key not in row_cache:
            row_cache[key] = b"\x00" + bytes(
                v for x in range(width) for v in ((x // 5 + seed) % 256, (y * 3 + seed) % 256, 200))
        rows.append(row_cache[key])
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 1)) + chunk(b"IEND", b""))


class Api:
    def __init__(self, port):
        self.port = port

    def request(self, method, path, body=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, data, r

    def json(self, method, path, value=None):
        body = None if value is None else json.dumps(value).encode()
        status, data, _ = self.request(method, path, body, {"Content-Type": "application/json"})
        assert status == 200, (status, data[:300])
        return json.loads(data)


def start(binary, data):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, XDG_DATA_HOME=data, XDG_CONFIG_HOME=os.path.join(data, "config"),
               QUIRE_SYSTEM_CONFIG_DIR=os.path.join(data, "etc"))
    proc = subprocess.Popen([binary, "--headless", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if line.startswith("quire: serving"):
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, Api(port)
    raise SystemExit("quire did not start")


def populate(api):
    session = api.json("POST", "/api/v1/projects", {"name": "Bench", "targetLanguage": "en"})
    sid = session["id"]
    boundary = "quire-bench-boundary"
    for i in range(PAGES):
        name = f"{i + 1:03}.png"
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
                "Content-Type: image/png\r\n\r\n").encode() + png(WIDTH, HEIGHT, i * 7) + f"\r\n--{boundary}--\r\n".encode()
        status, data, _ = api.request("POST", f"/api/v1/sessions/{sid}/pages", body,
                                      {"Content-Type": f"multipart/form-data; boundary={boundary}"})
        assert status == 200, data
    scene = api.json("GET", f"/api/v1/sessions/{sid}/scene.json")["scene"]
    ops = []
    for page in scene["pages"]:
        for b in range(BOXES):
            ops.append({"type": "AddNode", "page": page["id"], "node": {
                "transform": {"x": 80 + (b % 2) * 560, "y": 80 + (b // 2) * 420, "width": 440, "height": 300},
                "visible": True,
                "kind": {"type": "text", "text": f"Source line {b + 1} of page {page['name']}"}}})
    api.json("POST", f"/api/v1/sessions/{sid}/history/apply", {"type": "Batch", "ops": ops})
    scene = api.json("GET", f"/api/v1/sessions/{sid}/scene.json")["scene"]
    return session["projectId"], sid, scene


RECORD = """() => {
  window.__frames = [];
  window.__long = [];
  let last = performance.now();
  const tick = (t) => { window.__frames.push(t - last); last = t; if (window.__recording) requestAnimationFrame(tick); };
  window.__recording = true;
  requestAnimationFrame(tick);
  window.__observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__long.push(e.duration); });
  window.__observer.observe({ entryTypes: ['longtask'] });
}"""

STOP = """() => { window.__recording = false; window.__observer.disconnect();
  return { frames: window.__frames.slice(1), long: window.__long }; }"""

INTERACTIVE = """() => {
  const img = document.querySelector('.page-image');
  return document.querySelectorAll('.strip-row').length > 0 && img && img.complete && img.naturalWidth > 0
    && document.querySelectorAll('.surface .box').length === %d;
}""" % BOXES


def first_paint(browser, url, project, runs):
    paints, interactive = [], []
    for _ in range(runs):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(f"{url}/#/p/{project}")
        page.wait_for_function(INTERACTIVE, timeout=30_000)
        ready = page.evaluate("performance.now()")
        fcp = page.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
        paints.append(fcp)
        interactive.append(ready)
        context.close()
    return paints, interactive


def burst(page, api, sid, scene, shown_page, is_shown, edits=1000, clients=8):
    """1,000 edits from 8 HTTP clients while `page` shows `shown_page`;
    answers (seconds to apply, seconds until the page shows the last one,
    frames, long tasks)."""
    page.evaluate(RECORD)
    nodes = [(p["id"], n["id"]) for p in scene["pages"] for n in p["nodes"] if n["kind"]["type"] == "text"]
    shown = [n for n in nodes if n[0] == shown_page]
    start = time.perf_counter()

    def worker(k):
        conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=60)
        for i in range(k, edits, clients):
            # Every fourth edit is to one of the first five nodes of the shown page (in view).
            pid, nid = shown[(i // 4) % 5] if i % 4 == 0 else nodes[i % len(nodes)]
            op = {"type": "UpdateNode", "page": pid, "id": nid,
                  "patch": {"kind": {"type": "text", "translation": f"edit {i}"}}}
            conn.request("POST", f"/api/v1/sessions/{sid}/history/apply", json.dumps(op).encode(),
                         {"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            assert r.status == 200
        conn.close()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    applied = time.perf_counter() - start
    # Caught up: the five shown nodes show what the server ended with
    # (the clients' edits to one node land in no fixed order).
    final = api.json("GET", f"/api/v1/sessions/{sid}/scene.json")["scene"]
    texts = {n["id"]: n["kind"].get("translation") for p in final["pages"] if p["id"] == shown_page
             for n in p["nodes"]}
    for _, nid in shown[:5]:
        page.wait_for_function(is_shown, arg=texts[nid], timeout=120_000)
    caught_up = time.perf_counter() - start
    page.wait_for_timeout(300)
    recorded = page.evaluate(STOP)
    return applied, caught_up, recorded["frames"], recorded["long"]


def latency(page, api, sid, scene, shown_page, is_shown, edits=20):
    """One edit at a time to a node in view: milliseconds from the API's
    answer to the page showing it (the stream's event, the scene fetched
    again, the render)."""
    node = next(n["id"] for p in scene["pages"] if p["id"] == shown_page for n in p["nodes"]
                if n["kind"]["type"] == "text")
    times = []
    for i in range(edits):
        text = f"live {i}"
        api.json("POST", f"/api/v1/sessions/{sid}/history/apply", {"type": "UpdateNode", "page": shown_page,
                 "id": node, "patch": {"kind": {"type": "text", "translation": text}}})
        t = time.perf_counter()
        page.wait_for_function(is_shown, arg=text, timeout=30_000, polling="raf")
        times.append((time.perf_counter() - t) * 1000)
    return times


def big_session(browser, api, url):
    """1,000 text pages x 50 nodes, made in one batch."""
    session = api.json("POST", "/api/v1/projects", {"name": "Big"})
    sid = session["id"]
    ops = [{"type": "AddPage", "page": {"name": f"page {p + 1}", "nodes": [
        {"transform": {"x": 0, "y": n * 20, "width": 400, "height": 20}, "visible": True,
         "kind": {"type": "text", "text": f"Line {n + 1} of page {p + 1}: some source text to translate."}}
        for n in range(50)]}} for p in range(1000)]
    api.json("POST", f"/api/v1/sessions/{sid}/history/apply", {"type": "Batch", "ops": ops})
    scene = api.json("GET", f"/api/v1/sessions/{sid}/scene.json")["scene"]
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{url}/#/p/{session['projectId']}")
    page.wait_for_function("() => document.querySelectorAll('.strip-row').length > 0"
                           " && document.querySelectorAll('.block').length > 0", timeout=60_000)
    ready = page.evaluate("performance.now()")
    rows = page.evaluate("document.querySelectorAll('.strip-row').length")
    # Scroll the strip to the bottom, 40 px a frame.
    page.evaluate(RECORD)
    page.evaluate("""() => new Promise((done) => {
      const strip = document.querySelector('.strip');
      const step = () => { strip.scrollTop += 400; if (strip.scrollTop + strip.clientHeight >= strip.scrollHeight - 1) done(); else requestAnimationFrame(step); };
      requestAnimationFrame(step);
    })""")
    scrolled = page.evaluate(STOP)
    built = page.evaluate("document.querySelectorAll('.strip-row').length")
    shown = scene["pages"][0]["id"]
    page.evaluate("() => { document.querySelector('.strip').scrollTop = 0; }")
    is_shown = "(t) => [...document.querySelectorAll('.block-translation')].some(b => b.textContent === t)"
    single = latency(page, api, sid, scene, shown, is_shown)
    result = burst(page, api, sid, scene, shown, is_shown)
    page.close()
    return ready, rows, built, scrolled, single, result


def thumbnails(api, sid, scene):
    hashes = [n["kind"]["blob"] for p in scene["pages"] for n in p["nodes"] if n["kind"]["type"] == "image"]
    timings = {}
    for label in ("cold", "warm"):
        times = []
        for h in hashes:
            t = time.perf_counter()
            status, data, r = api.request("GET", f"/api/v1/sessions/{sid}/blobs/{h}?maxSide=256")
            times.append((time.perf_counter() - t) * 1000)
            assert status == 200 and len(data) > 0
            assert r.getheader("ETag") == f'"{h}-256"', r.getheader("ETag")
        timings[label] = times
    times = []
    for h in hashes:
        t = time.perf_counter()
        status, _, _ = api.request("GET", f"/api/v1/sessions/{sid}/blobs/{h}?maxSide=256",
                                   headers={"If-None-Match": f'"{h}-256"'})
        times.append((time.perf_counter() - t) * 1000)
        assert status == 304
    timings["304"] = times
    return timings


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def report(label, applied, caught_up, frames, long):
    print(f"{label}: 1000 edits applied in {applied:.2f} s, the page showed the last after {caught_up:.2f} s;"
          f" {len(frames)} frames, p95 {pct(frames, 0.95):.1f} ms, longest {max(frames):.1f} ms;"
          f" long tasks: {len(long)}, longest {max(long, default=0):.0f} ms")


def main():
    binary = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory(prefix="quire-web-bench-") as data:
        proc, api = start(binary, data)
        try:
            t = time.perf_counter()
            project, sid, scene = populate(api)
            print(f"setup: {PAGES} pages of {WIDTH}x{HEIGHT} px, {BOXES} boxes each, in {time.perf_counter() - t:.1f} s")
            thumbs = thumbnails(api, sid, scene)
            url = f"http://127.0.0.1:{api.port}"
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                paints, ready = first_paint(browser, url, project, runs)
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(f"{url}/#/p/{project}")
                page.wait_for_function(INTERACTIVE, timeout=30_000)
                is_shown = "(t) => [...document.querySelectorAll('.surface .box')].some(b => b.title === t)"
                single = latency(page, api, sid, scene, scene["pages"][0]["id"], is_shown)
                small = burst(page, api, sid, scene, scene["pages"][0]["id"], is_shown)
                page.close()
                big = big_session(browser, api, url)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(30)
    print(f"first paint (ms, {runs} cold loads): median {statistics.median(paints):.0f}, max {max(paints):.0f}")
    print(f"interactive (ms): median {statistics.median(ready):.0f}, max {max(ready):.0f}")
    print(f"one edit, API answer to page showing it (ms, 20): median {statistics.median(single):.0f},"
          f" max {max(single):.0f}")
    report("SSE burst, 100 x 8 session", *small)
    for label, times in thumbs.items():
        print(f"thumbnail {label} (ms, {len(times)} pages): p50 {pct(times, 0.5):.2f}, p95 {pct(times, 0.95):.2f},"
              f" max {max(times):.2f}")
    ready, rows, built, scrolled, single, result = big
    frames = scrolled["frames"]
    print(f"1000 x 50 session: interactive after {ready:.0f} ms; strip rows built: {rows} at the top, {built} at the"
          f" bottom; scrolling it: {len(frames)} frames, p95 {pct(frames, 0.95):.1f} ms, longest {max(frames):.1f} ms,"
          f" long tasks {len(scrolled['long'])}")
    print(f"1000 x 50 session: one edit, API answer to page showing it (ms, 20): median {statistics.median(single):.0f},"
          f" max {max(single):.0f}")
    report("SSE burst, 1000 x 50 session", *result)


if __name__ == "__main__":
    main()
