"""The web workbench in a real browser: Debian's Chromium, driven by
Playwright for Python, against a real `quire --headless --port 0`.

Usage:
  python workbench.py CHROMIUM open URL OUT_DIR     # a server without a token
  python workbench.py CHROMIUM token URL OUT_DIR TOKEN
  python workbench.py CHROMIUM restart QUIRE OUT_DIR  # starts and restarts QUIRE itself
  python workbench.py CHROMIUM live URL OUT_DIR PROJECT_ID  # beside a TUI the caller drives
  python workbench.py CHROMIUM approval URL OUT_DIR allowed|refused  # a command engine `stamp`

`open` creates a project, uploads two image pages and a text page, refuses
a file that is neither, draws a box and types its translation, sees its
state colour, runs pseudo-translate to 100 %, sees edits made with curl
and over MCP (the official Python SDK) appear without a reload, keeps a
draft a remote change would overwrite, undoes, downloads an XLIFF export,
shows the phone layout, and checks that a page on another origin cannot
drive the server. `token` checks the login: a wrong token is refused, a
token in the query string is refused, the right one works and images load
with it. `restart` stops the server under the page and starts it again:
the page says it is offline, reconnects, opens the project again and keeps
the person's unsaved draft. `live` types a translation in the browser,
reads it back as an MCP client, and waits for the TUI attached to the same
server (driven by tests/it/web.rs in tmux) to answer with its own edit.
`approval` starts a command engine that needs a person's approval: its
exact command is shown, and it starts only when the server lets HTTP
clients run it and the person ticks that they read it. Screenshots go to OUT_DIR. Prints `web: ok` when every check
passed; run by tests/it/web.rs.
"""

import contextlib
import json
import os
import re
import struct
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
import zipfile
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from playwright.sync_api import expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
# What this machine's Chromium needs headless as root, and no background
# traffic to the (unreachable) internet.
ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
LIVE_MS = 5_000
# How long an expectation waits for the page by default: Playwright's 5 s
# is too short when the whole test suite shares two cores with Chromium.
expect.set_options(timeout=15_000)
AXE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node_modules", "axe-core", "axe.min.js")


def png(width, height, tint):
    """A real RGB PNG with a diagonal gradient, drawn with the standard library."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    rows = b"".join(
        b"\x00" + bytes(v for x in range(width) for v in ((x + y) % 256, tint, 255 - tint))
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def curl(*args):
    """curl, the independent HTTP client; answers (status, body)."""
    out = subprocess.run(
        ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", *args],
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout
    body, _, status = out.rpartition("\n")
    return int(status), body


def curl_json(*args):
    status, body = curl(*args)
    return status, (json.loads(body) if body.strip() else None)


def apply_with_curl(url, session, op):
    status, body = curl_json("-X", "POST", "-H", "Content-Type: application/json",
                             "--data", json.dumps(op), f"{url}/api/v1/sessions/{session}/history/apply")
    assert status == 200, (status, body)
    return body


def scene_with_curl(url, session):
    status, body = curl_json(f"{url}/api/v1/sessions/{session}/scene.json")
    assert status == 200, (status, body)
    return body["scene"]


def wait_for(condition, what, timeout=15):
    """Polls `condition` until it holds, failing with `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.05)


async def _mcp_call(url, tool, arguments):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    async with streamable_http_client(f"{url}/mcp") as (read, write, *_):
        async with ClientSession(read, write) as mcp:
            await mcp.initialize()
            result = await mcp.call_tool(tool, arguments)
            assert not result.is_error, result
            return result.structured_content


def mcp_call(url, tool, arguments):
    """A tool call with the official MCP Python SDK, on its own thread:
    Playwright's sync API holds this thread's event loop."""
    import anyio
    result = {}

    def run():
        try:
            result["ok"] = anyio.run(_mcp_call, url, tool, arguments)
        except BaseException as e:  # re-raised on the caller's thread
            result["error"] = e
    worker = threading.Thread(target=run)
    worker.start()
    worker.join(30)
    if "error" in result:
        raise result["error"]
    return result["ok"]


def accessible(page, what):
    """axe-core's WCAG 2 A and AA rules on the page as it is now: no
    serious or critical violation. (Its script is injected, so the page's
    context must bypass the Content-Security-Policy.)"""
    page.add_script_tag(path=AXE)
    result = page.evaluate("() => axe.run(document, { runOnly: ['wcag2a', 'wcag2aa'] })")
    bad = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
    assert not bad, f"{what}: " + "; ".join(
        f"{v['id']} ({v['help']}) at {[n['target'] for n in v['nodes'][:3]]}: {v['nodes'][0]['failureSummary']}"
        for v in bad)
    return len(result["passes"])


def check_accessibility(browser, url, project, box_page, box):
    """The main screens through axe-core, in a context that lets its script in."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    page = context.new_page()
    page.goto(url + "/")
    expect(page.get_by_role("heading", name="Projects")).to_be_visible()
    accessible(page, "home")
    page.goto(f"{url}/#/p/{project}")
    expect(page.locator(".page-image")).to_be_visible()
    accessible(page, "image page")
    # A link to a node opens its page with the node in the editor.
    page.goto(f"{url}/#/p/{project}/{box_page}/{box}")
    expect(page.locator("#translation")).to_have_value("Hello there")
    expect(page.locator(f'.box[data-node="{box}"]')).to_have_attribute("aria-pressed", "true")
    accessible(page, "editor")
    page.locator(".strip-row").nth(2).get_by_role("button").click()
    expect(page.locator(".block").first).to_be_visible()
    accessible(page, "text page and jobs")
    page.get_by_test_id("run").click()
    expect(page.get_by_role("dialog", name="Run engines")).to_be_visible()
    accessible(page, "run dialog")
    context.close()


@contextlib.contextmanager
def browser_page(**options):
    """Chromium with a 1280 × 800 page; the page's script errors (and those
    of any page added with `watch_errors`) fail the scenario when it ends."""
    errors = []
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 800}, **options)
        watch_errors(page, errors)
        yield browser, page, errors
        browser.close()
    assert not errors, errors


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


# The page's scene reads and failed requests, with a clock: what a test
# that waited in vain reports.
CONSOLE = []


def watch_errors(page, errors):
    page.on("response", lambda r: ("scene.json" in r.url or r.status >= 400)
            and CONSOLE.append(f"{time.monotonic():.3f} {r.status} {r.url[-80:]}"))
    page.on("pageerror", lambda e: errors.append(f"page error: {e}\n{e.stack}"))
    page.on("console", lambda m: m.type == "error" and not m.text.startswith("Failed to load resource")
            and errors.append(f"console: {m.text}"))


def project_of(page):
    """The project id in the page's route (#/p/ID)."""
    project = page.evaluate("location.hash").split("/")[2]
    return project


def open_session_id(url, project_id, timeout=15):
    """The id of the session that has the project open, once one has (the
    page may still be opening it)."""
    deadline = time.monotonic() + timeout
    while True:
        status, sessions = curl_json(f"{url}/api/v1/sessions")
        assert status == 200
        found = [s["id"] for s in sessions if s["projectId"] == project_id]
        if found:
            return found[0]
        assert time.monotonic() < deadline, f"no session has project {project_id}: {sessions}"
        time.sleep(0.05)


def draw(page, x0, y0, x1, y1):
    surface = page.locator(".surface").bounding_box()
    page.mouse.move(surface["x"] + x0, surface["y"] + y0)
    page.mouse.down()
    page.mouse.move(surface["x"] + x1, surface["y"] + y1, steps=6)
    page.mouse.up()


def colour_of(page, selector, prop):
    return page.eval_on_selector(selector, f"e => getComputedStyle(e).{prop}")


class Foreign(BaseHTTPRequestHandler):
    """Another origin's page that tries to create a project on quire."""
    target = ""

    def do_GET(self):
        body = f"""<!doctype html><title>elsewhere</title><script>
          fetch({json.dumps(self.target + '/api/v1/projects')}, {{method: 'POST', mode: 'no-cors',
            headers: {{'Content-Type': 'text/plain'}}, body: JSON.stringify({{name: 'forged'}})}})
            .then(() => document.title = 'sent', () => document.title = 'sent');
        </script>""".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_):
        pass


COMIC = """() => {
  const c = document.createElement('canvas');
  c.width = 800; c.height = 1130;
  const g = c.getContext('2d');
  g.fillStyle = '#fff'; g.fillRect(0, 0, 800, 1130);
  g.lineWidth = 6; g.strokeStyle = '#111';
  const panels = [[30, 30, 740, 500], [30, 560, 360, 540], [410, 560, 360, 540]];
  const tones = ['#dde7f0', '#f3e6d8', '#e4efe0'];
  panels.forEach(([x, y, w, h], i) => {
    g.fillStyle = tones[i]; g.fillRect(x, y, w, h); g.strokeRect(x, y, w, h);
    g.fillStyle = '#9aa7b4';
    for (let k = 0; k < 6; k += 1) g.fillRect(x + 30 + k * (w - 60) / 6, y + h - 120 - (k % 3) * 40, (w - 60) / 8, 120 + (k % 3) * 40);
  });
  const balloons = [
    [220, 150, 160, 80, 'Where are we', 'going?'],
    [560, 330, 170, 80, 'To the sea,', 'at dawn.'],
    [210, 700, 140, 80, 'Bring the', 'map!'],
    [590, 720, 150, 90, 'I forgot', 'it...'],
    [590, 960, 140, 70, 'Again?!', ''],
  ];
  g.font = 'bold 26px sans-serif'; g.textAlign = 'center'; g.textBaseline = 'middle';
  for (const [cx, cy, rx, ry, a, b] of balloons) {
    g.fillStyle = '#fff'; g.strokeStyle = '#111'; g.lineWidth = 4;
    g.beginPath(); g.ellipse(cx, cy, rx, ry, 0, 0, Math.PI * 2); g.fill(); g.stroke();
    g.fillStyle = '#111';
    g.fillText(a, cx, b ? cy - 16 : cy); if (b) g.fillText(b, cx, cy + 18);
  }
  return c.toDataURL('image/png').split(',')[1];
}"""

# The boxes over COMIC's balloons: (x, y, width, height, source).
BALLOONS = [
    (90, 90, 260, 120, "Where are we going?"),
    (420, 270, 280, 120, "To the sea, at dawn."),
    (95, 640, 230, 120, "Bring the map!"),
    (470, 650, 240, 140, "I forgot it..."),
    (480, 910, 220, 100, "Again?!"),
]


def step_box(dialog, engine):
    """The Run dialog's checkbox of one engine (its label also holds the
    engine's description, which may name other engines)."""
    return dialog.locator(f'input[name="step"][value="{engine}"]')


def readme_screenshot(page, url, out):
    """The README's picture: a comic page drawn by Chromium, its balloons in every state."""
    import base64
    comic = os.path.join(out, "files", "comic.png")
    with open(comic, "wb") as f:
        f.write(base64.b64decode(page.evaluate(COMIC)))
    page.goto(url + "/#/")
    page.get_by_label("Name").fill("The sea, chapter 3")
    page.get_by_label("Target language").fill("fr")
    page.get_by_role("button", name="Create").click()
    expect(page.locator(".workbench")).to_be_visible()
    project = project_of(page)
    session = open_session_id(url, project)
    page.locator(".session-bar input[type=file]").set_input_files([comic])
    expect(page.locator(".page-image")).to_be_visible()
    page_id = scene_with_curl(url, session)["pages"][0]["id"]
    ops = [{"type": "AddNode", "page": page_id, "node": {
        "transform": {"x": x, "y": y, "width": w, "height": h}, "visible": True,
        "kind": {"type": "text", "text": text, "sourceLang": "en"}}} for x, y, w, h, text in BALLOONS]
    created = apply_with_curl(url, session, {"type": "Batch", "ops": ops})["created"]
    status, _ = curl_json("-X", "POST", "-H", "Content-Type: application/json", "--data",
                          json.dumps({"steps": ["pseudo-translate"], "pages": [page_id]}),
                          f"{url}/api/v1/sessions/{session}/pipelines")
    assert status == 200
    expect(page.locator(".box.shade-machine")).to_have_count(5, timeout=LIVE_MS)
    edits = [
        (created[0], {"translation": "Où allons-nous ?", "state": "final"}),
        (created[1], {"translation": "À la mer, à l'aube.", "state": "reviewed"}),
        (created[2], {"translation": "Prends la carte !"}),
        (created[4], {"translation": None}),
    ]
    apply_with_curl(url, session, {"type": "Batch", "ops": [
        {"type": "UpdateNode", "page": page_id, "id": node, "patch": {"kind": {"type": "text", **patch}}}
        for node, patch in edits]})
    expect(page.locator(".box.shade-initial")).to_have_count(1, timeout=LIVE_MS)
    page.locator(f'.box[data-node="{created[2]}"]').click()
    expect(page.locator("#translation")).to_have_value("Prends la carte !")
    page.mouse.move(5, 400)
    for close in page.locator(".toast button").all():
        close.click()
    page.screenshot(path=os.path.join(out, "readme.png"))

    # Render the page, look at it, download it as a CBZ.
    page.get_by_test_id("run").click()
    dialog = page.get_by_role("dialog", name="Run engines")
    step_box(dialog, "render").check()
    dialog.get_by_role("button", name="Start").click()
    expect(page.locator(".job").first).to_contain_text("render")
    expect(page.locator(".job").first).to_contain_text("done", timeout=30_000)
    toggle = page.get_by_role("group", name="Image").get_by_role("button", name="Rendered")
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    rendered = next(n["kind"]["blob"] for n in scene_with_curl(url, session)["pages"][0]["nodes"]
                    if n["kind"]["type"] == "image" and n["kind"]["role"] == "rendered")
    expect(page.locator(".page-image")).to_have_attribute("src", re.compile(rendered))
    page.wait_for_function("() => { const i = document.querySelector('.page-image'); return i.complete && i.naturalWidth > 0; }")
    page.screenshot(path=os.path.join(out, "rendered.png"))
    page.get_by_role("button", name="Export").click()
    with page.expect_download() as download:
        page.get_by_role("menuitem", name="Rendered pages, CBZ of JPEGs (.cbz)").click()
    cbz = os.path.join(out, "chapter.cbz")
    download.value.save_as(cbz)
    with zipfile.ZipFile(cbz) as z:
        assert z.namelist() == ["001.jpg", "ComicInfo.xml"], z.namelist()
        assert z.read("001.jpg")[:3] == b"\xff\xd8\xff"
        info = ET.fromstring(z.read("ComicInfo.xml"))
        assert info.findtext("Title") == "The sea, chapter 3" and info.findtext("LanguageISO") == "fr", ET.tostring(info)
    page.get_by_role("group", name="Image").get_by_role("button", name="Source").click()


def scenario_open(url, out):
    files = os.path.join(out, "files")
    os.makedirs(files, exist_ok=True)
    pages = []
    for i, (w, h) in enumerate([(600, 900), (640, 960)], start=1):
        path = os.path.join(files, f"page-{i}.png")
        with open(path, "wb") as f:
            f.write(png(w, h, 60 * i))
        pages.append(path)
    notes = os.path.join(files, "notes.txt")
    with open(notes, "w") as f:
        f.write("Where are we going?\n\nTo the sea, at {0} o'clock.\n\nBring the map!\n")
    junk = os.path.join(files, "program.bin")
    with open(junk, "wb") as f:
        f.write(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))

    with browser_page(accept_downloads=True) as (browser, page, errors):
        page.goto(url + "/")
        expect(page.get_by_role("heading", name="New project")).to_be_visible()
        expect(page.get_by_test_id("link")).to_contain_text("online")

        # A project, two image pages and a text page.
        page.get_by_label("Name").fill("Chapter 1")
        page.get_by_label("Target language").fill("fr")
        page.get_by_role("button", name="Create").click()
        expect(page.locator(".workbench")).to_be_visible()
        project = project_of(page)
        session = open_session_id(url, project)
        page.locator(".session-bar input[type=file]").set_input_files(pages)
        expect(page.locator(".strip-row")).to_have_count(2)
        expect(page.locator(".page-image")).to_be_visible()
        page.locator(".session-bar input[type=file]").set_input_files([notes])
        expect(page.locator(".strip-row")).to_have_count(3)

        # A file that is no page: a clear error, nothing added.
        page.locator(".session-bar input[type=file]").set_input_files([junk])
        expect(page.locator(".toast-error")).to_contain_text("program.bin: not an image")
        expect(page.locator(".strip-row")).to_have_count(3)
        assert len(scene_with_curl(url, session)["pages"]) == 3
        page.locator(".toast-error button").click()

        # Draw a box on page 1 and type its translation.
        page.locator(".strip-row").nth(0).get_by_role("button").click()
        page.get_by_test_id("draw").click()
        draw(page, 40, 40, 200, 140)
        expect(page.locator("#translation")).to_be_focused()
        box = page.locator(".box[data-node]").first
        expect(box).to_have_attribute("data-state", "initial")
        page.keyboard.type("Hello there")
        page.screenshot(path=os.path.join(out, "editing.png"))
        page.keyboard.press("Tab")
        expect(box).to_have_attribute("data-state", "translated")
        node_id = box.get_attribute("data-node")
        translated = colour_of(page, ".legend .swatch.shade-translated", "backgroundColor")
        expect(box).to_have_css("border-top-color", translated)
        assert colour_of(page, ".legend .swatch.shade-initial", "backgroundColor") != translated
        page_one = scene_with_curl(url, session)["pages"][0]
        drawn = next(n for n in page_one["nodes"] if n["id"] == node_id)
        assert drawn["kind"]["translation"] == "Hello there", drawn
        assert drawn["kind"]["origin"]["by"] == "human", drawn
        # The segment's own history says what changed, before and after.
        history = page.get_by_test_id("node-history")
        expect(history).to_contain_text("History")
        history.locator("summary").click()
        expect(history).to_contain_text("translation: — → “Hello there”")
        page.screenshot(path=os.path.join(out, "session.png"))
        # Suggestions beside the editor: proposed, voted for, rejected;
        # another accepted becomes the translation, and the translation is
        # then written back as it was.
        offers = page.get_by_test_id("suggestions")
        for text in ["Hi you", "Hello, you"]:
            offers.get_by_label("New suggestion").fill(text)
            offers.get_by_role("button", name="Suggest").click()
            expect(offers.get_by_test_id("suggestion").filter(has_text=text)).to_have_count(1)
        offers.get_by_role("button", name="For “Hello, you”").click()
        expect(offers.get_by_test_id("suggestion").first).to_contain_text("Hello, you · a person · 1 vote")
        page.screenshot(path=os.path.join(out, "suggestions.png"))
        offers.get_by_test_id("suggestion").filter(has_text="Hi you").get_by_role("button", name="Reject").click()
        expect(offers.get_by_test_id("suggestion")).to_have_count(1)
        offers.get_by_role("button", name="Accept").click()
        expect(page.locator("#translation")).to_have_value("Hello, you")
        expect(offers.get_by_test_id("suggestion")).to_have_count(0)
        page_one = scene_with_curl(url, session)["pages"][0]
        accepted = next(n for n in page_one["nodes"] if n["id"] == node_id)["kind"]
        assert accepted["translation"] == "Hello, you" and "suggestions" not in accepted, accepted
        page.locator("#translation").fill("Hello there")
        page.get_by_role("button", name="Save").click()
        expect(page.locator("#translation")).to_have_value("Hello there")
        expect(page.get_by_role("button", name="Save")).to_be_disabled()
        # Drawing stays on for the next balloon until Select (or v, Esc).
        tools = page.get_by_role("group", name="Tool")
        expect(page.get_by_test_id("draw")).to_have_attribute("aria-pressed", "true")
        tools.get_by_role("button", name="Select").click()
        expect(page.get_by_test_id("draw")).to_have_attribute("aria-pressed", "false")

        # The drawn box has no source text yet: type it.
        page.get_by_role("button", name="Edit source").click()
        expect(page.locator("#source")).to_be_focused()
        page.keyboard.type("Hi there")
        page.get_by_role("button", name="Save source").click()
        expect(page.locator(".source-text")).to_have_text("Hi there")
        page_one = scene_with_curl(url, session)["pages"][0]
        assert next(n for n in page_one["nodes"] if n["id"] == node_id)["kind"]["text"] == "Hi there"
        # A source being typed is kept when another page is opened.
        page.get_by_role("button", name="Edit source").click()
        expect(page.locator("#source")).to_be_focused()
        page.keyboard.press("End")
        page.keyboard.type(" again")
        page.locator(".strip-row").nth(1).get_by_role("button").click()
        expect(page.locator(".page-tools .page-title")).to_contain_text("page-2")
        deadline = time.monotonic() + LIVE_MS / 1000
        while True:
            page_one = scene_with_curl(url, session)["pages"][0]
            text = next(n for n in page_one["nodes"] if n["id"] == node_id)["kind"]["text"]
            if text == "Hi there again":
                break
            assert time.monotonic() < deadline, text
            time.sleep(0.02)
        page.locator(".strip-row").nth(0).get_by_role("button").click()
        box.click()
        expect(page.locator(".source-text")).to_have_text("Hi there again")

        # By keyboard: Enter on a focused box edits it, Esc goes back to the
        # box, n goes to the next untranslated node (the text page's first).
        box.focus()
        page.keyboard.press("Enter")
        expect(page.locator("#translation")).to_be_focused()
        expect(page.locator("#translation")).to_have_value("Hello there")
        page.keyboard.press("Escape")
        expect(box).to_be_focused()
        page.keyboard.press("n")
        expect(page.locator(".block").first).to_have_attribute("aria-pressed", "true")
        expect(page.get_by_role("heading", name="Block 1")).to_be_visible()

        # pseudo-translate over every page, its progress bar to 100 %.
        page.locator(".strip-row").nth(2).get_by_role("button").click()
        expect(page.locator(".block")).to_have_count(3)
        page.get_by_test_id("run").click()
        dialog = page.get_by_role("dialog", name="Run engines")
        step_box(dialog, "pseudo-translate").check()
        dialog.get_by_role("button", name="Start").click()
        bar = page.locator(".job").first.get_by_role("progressbar")
        seen = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            seen.append(int(bar.get_attribute("aria-valuenow")))
            if seen[-1] == 100:
                break
            page.wait_for_timeout(20)
        assert seen[-1] == 100 and seen == sorted(seen), seen
        expect(page.locator(".job").first).to_contain_text("done")
        first_block = page.locator(".block").first
        expect(first_block).to_have_attribute("data-state", "translated")
        expect(first_block).to_have_class("block shade-machine")
        expect(box).to_have_count(0)  # another page is shown; the drawn box kept its text:
        kinds = [n["kind"] for pg in scene_with_curl(url, session)["pages"] for n in pg["nodes"]
                 if n["kind"]["type"] == "text"]
        assert any(k.get("translation") == "Hello there" for k in kinds), kinds
        assert sum(1 for k in kinds if k.get("origin", {}).get("engine") == "pseudo-translate") == 3, kinds

        # Edits made elsewhere appear without a reload: curl, then an MCP agent.
        text_page = scene_with_curl(url, session)["pages"][2]
        first, second, third = (n["id"] for n in text_page["nodes"])
        apply_with_curl(url, session, {"type": "UpdateNode", "page": text_page["id"], "id": first,
                                       "patch": {"kind": {"type": "text", "translation": "Depuis curl"}}})
        expect(page.locator(f'.block[data-node="{first}"]')).to_contain_text("Depuis curl", timeout=LIVE_MS)
        mcp_call(url, "quire_apply", {"sessionId": session, "op": {"type": "UpdateNode", "page": text_page["id"], "id": third,
                                      "patch": {"kind": {"type": "text", "translation": "Apportez la carte !"}}}})
        expect(page.locator(f'.block[data-node="{third}"]')).to_contain_text("Apportez la carte", timeout=LIVE_MS)

        # A remote change never overwrites a draft: the person chooses.
        page.locator(f'.block[data-node="{second}"]').click()
        field = page.locator("#translation")
        field.fill("À la mer, à {0} heures.")
        apply_with_curl(url, session, {"type": "UpdateNode", "page": text_page["id"], "id": second,
                                       "patch": {"kind": {"type": "text", "translation": "Changé ailleurs"}}})
        conflict = page.get_by_test_id("conflict")
        expect(conflict).to_contain_text("Changé ailleurs", timeout=LIVE_MS)
        expect(field).to_have_value("À la mer, à {0} heures.")
        page.screenshot(path=os.path.join(out, "conflict.png"))
        conflict.get_by_role("button", name="Keep mine").click()
        expect(conflict).to_have_count(0)
        expect(page.locator(f'.block[data-node="{second}"]')).to_contain_text("À la mer", timeout=LIVE_MS)
        saved = next(n for n in scene_with_curl(url, session)["pages"][2]["nodes"] if n["id"] == second)
        assert saved["kind"]["translation"] == "À la mer, à {0} heures.", saved

        # Undo takes the last change back (here: keeping mine): Ctrl+Z, then
        # the buttons.
        page.locator(".block").first.focus()
        page.keyboard.press("Control+z")
        expect(page.locator(f'.block[data-node="{second}"]')).to_contain_text("Changé ailleurs", timeout=LIVE_MS)
        expect(page.locator(".toast").last).to_contain_text("Undid")
        page.get_by_role("button", name="Redo (Ctrl+Shift+Z)").click()
        expect(page.locator(f'.block[data-node="{second}"]')).to_contain_text("À la mer", timeout=LIVE_MS)
        page.get_by_role("button", name="Undo (Ctrl+Z)").click()
        expect(page.locator(f'.block[data-node="{second}"]')).to_contain_text("Changé ailleurs", timeout=LIVE_MS)

        # A save that crosses someone else's change on the wire: the page says
        # what it started from, the core refuses it (409 with theirs), and the
        # person chooses; theirs was never overwritten.
        page.locator(f'.block[data-node="{first}"]').click()
        field = page.locator("#translation")
        expect(field).to_have_value("Depuis curl")
        field.fill("Mon brouillon")

        crossed = []

        def crossing(route):
            if not crossed:
                crossed.append(True)
                apply_with_curl(url, session, {"type": "UpdateNode", "page": text_page["id"], "id": first,
                                               "patch": {"kind": {"type": "text", "translation": "Croisé"}}})
            route.continue_()

        page.route("**/history/apply", crossing)
        with page.expect_response(lambda r: "history/apply" in r.url) as answer:
            page.get_by_role("button", name="Save").click()
        page.unroute("**/history/apply", crossing)
        assert crossed and answer.value.status == 409, (answer.value.status, answer.value.request.post_data)
        refused = answer.value.json()
        conflict = page.get_by_test_id("conflict")
        expect(conflict).to_contain_text("Croisé", timeout=LIVE_MS)
        expect(field).to_have_value("Mon brouillon")
        kept = next(n for n in scene_with_curl(url, session)["pages"][2]["nodes"] if n["id"] == first)
        assert kept["kind"]["translation"] == "Croisé", kept
        assert refused["error"]["stale"]["current"] == "Croisé", refused
        conflict.get_by_role("button", name="Use theirs").click()
        expect(conflict).to_have_count(0)
        expect(field).to_have_value("Croisé")

        # An XLIFF export, downloaded.
        page.get_by_role("button", name="Export").click()
        with page.expect_download() as download:
            page.get_by_role("menuitem", name="XLIFF (.xlf)").click()
        xlf = os.path.join(out, "export.xlf")
        download.value.save_as(xlf)
        assert download.value.suggested_filename.endswith(".xlf"), download.value.suggested_filename
        root = ET.parse(xlf).getroot()
        assert root.get("version") == "2.0" and root.get("trgLang") == "fr", root.attrib
        targets = [t.text for t in root.iter("{urn:oasis:names:tc:xliff:document:2.0}target")]
        assert "Changé ailleurs" in targets and "Hello there" in targets, targets

        # The file comes back reviewed: one block changed there only, one
        # changed here too since the export. The first is taken, the
        # second is a conflict the page names and resolves.
        ns = "{urn:oasis:names:tc:xliff:document:2.0}"
        ET.register_namespace("", ns[1:-1])
        tree = ET.parse(xlf)
        for unit in tree.getroot().iter(f"{ns}unit"):
            target = unit.find(f"{ns}segment/{ns}target")
            if unit.get("id") == f"n{second}":
                target.text = "Changé dans le fichier"
            elif unit.get("id") == f"n{third}":
                target.text = "Apportez la carte, relu"
        review = os.path.join(out, "review.xlf")
        tree.write(review, encoding="utf-8", xml_declaration=True)
        apply_with_curl(url, session, {"type": "UpdateNode", "page": text_page["id"], "id": second,
                                       "patch": {"kind": {"type": "text", "translation": "Changé ici"}}})
        page.locator(".session-bar input[type=file]").set_input_files([review])
        merge = page.get_by_role("dialog", name="1 conflict in review.xlf")
        expect(merge).to_be_visible(timeout=LIVE_MS)
        row = merge.locator(f'.conflict[data-unit="n{second}"]')
        expect(row).to_contain_text("Changé ici")
        expect(row).to_contain_text("Changé dans le fichier")
        expect(row).to_contain_text("changed here and in the file")
        try:
            expect(page.locator(f'.block[data-node="{third}"]')).to_contain_text("relu", timeout=LIVE_MS)
        except AssertionError:
            server = scene_with_curl(url, session)
            nodes = [n for p in server["pages"] for n in p["nodes"] if n["id"] == third]
            toasts = page.locator(".toast").all_inner_texts()
            errors = page.locator("[role=alert]").all_inner_texts()
            raise AssertionError(f"the server has {nodes}; toasts {toasts}; alerts {errors}; requests {CONSOLE[-20:]}")
        page.screenshot(path=os.path.join(out, "merge.png"))
        row.get_by_role("button", name="Take theirs").click()
        expect(row).to_contain_text("the file's taken", timeout=LIVE_MS)
        merge.get_by_role("button", name="Done").click()
        expect(merge).to_have_count(0)
        expect(page.locator(f'.block[data-node="{second}"]')).to_contain_text("Changé dans le fichier", timeout=LIVE_MS)

        # QA: run it, and a warning goes to its node (the placeholder {0}
        # that "Changé ailleurs" lost).
        page.get_by_test_id("run").click()
        dialog = page.get_by_role("dialog", name="Run engines")
        step_box(dialog, "qa").check()
        dialog.get_by_role("button", name="Start").click()
        warning = page.locator('.warning[data-rule="placeholders"]')
        expect(warning).to_have_count(1, timeout=LIVE_MS)
        page.locator(".strip-row").nth(0).get_by_role("button").click()
        warning.click()
        expect(page.get_by_role("heading", name="Block 2")).to_be_visible()
        expect(page.locator(f'.block[data-node="{second}"]')).to_have_class("block shade-translated selected warned")

        # Move the drawn box by dragging it, then resize it by a corner; one op each.
        def transform():
            nodes = scene_with_curl(url, session)["pages"][0]["nodes"]
            return next(n for n in nodes if n["id"] == node_id)["transform"]

        def until(condition):
            deadline = time.monotonic() + LIVE_MS / 1000
            while not condition():
                assert time.monotonic() < deadline, transform()
                time.sleep(0.02)

        page.locator(".strip-row").nth(0).get_by_role("button").click()
        drawn_box = page.locator(f'.box[data-node="{node_id}"]')
        start = transform()
        b = drawn_box.bounding_box()
        page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
        page.mouse.down()
        page.mouse.move(b["x"] + b["width"] / 2 + 60, b["y"] + b["height"] / 2 + 40, steps=6)
        page.mouse.up()
        until(lambda: transform()["x"] > start["x"])
        moved = transform()
        assert moved["y"] > start["y"] and moved["width"] == start["width"], (start, moved)
        corner = drawn_box.locator(".handle-se").bounding_box()
        page.mouse.move(corner["x"] + 5, corner["y"] + 5)
        page.mouse.down()
        page.mouse.move(corner["x"] + 55, corner["y"] + 35, steps=6)
        page.mouse.up()
        until(lambda: transform()["width"] > moved["width"])
        resized = transform()
        assert (resized["x"], resized["y"]) == (moved["x"], moved["y"]), (moved, resized)
        page.locator("body").click(position={"x": 5, "y": 300})
        page.keyboard.press("Control+z")
        until(lambda: transform()["width"] == moved["width"])

        # Pages: rename the second, move it up, delete it; undo brings it back.
        page.locator(".strip-row").nth(1).get_by_role("button").click()
        expect(page.locator(".page-tools .page-title")).to_contain_text("page-2")
        page.locator(".page-tools .page-title").click()
        name = page.get_by_role("textbox", name="Page name")
        name.fill("Cover")
        name.press("Enter")
        expect(page.locator(".strip-row").nth(1)).to_contain_text("Cover")
        page.get_by_role("button", name="Move the page up").click()
        expect(page.locator(".strip-row").nth(0)).to_contain_text("Cover")
        page.once("dialog", lambda d: d.accept())
        page.get_by_role("button", name="Delete page").click()
        expect(page.locator(".strip-row")).to_have_count(2)
        page.get_by_role("button", name="Undo (Ctrl+Z)").click()
        expect(page.locator(".strip-row")).to_have_count(3)
        assert [p["name"] for p in scene_with_curl(url, session)["pages"]] == ["Cover", "page-1", "notes"]

        # A file dropped on the window becomes a page.
        page.evaluate("""() => {
          const dt = new DataTransfer();
          dt.items.add(new File(['Dropped line.\\n'], 'dropped.txt', { type: 'text/plain' }));
          window.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt }));
          window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, cancelable: true }));
        }""")
        expect(page.locator(".strip-row")).to_have_count(4)
        expect(page.locator(".strip-row").nth(3)).to_contain_text("dropped")

        # The home screen lists the project.
        page.goto(url + "/#/")
        expect(page.get_by_role("link", name="Chapter 1")).to_be_visible()
        page.screenshot(path=os.path.join(out, "home.png"))

        # A translator's PO dropped on the home screen starts a project of
        # its own: its language from the header, the entry's context,
        # comment and flags beside its source, and the export is that PO.
        page.evaluate("""() => {
          const po = 'msgid ""\\nmsgstr ""\\n"Language: pt_BR\\\\n"\\n\\n' +
            '#. Shown on the File menu\\n#: app/menu.py:12\\n#, python-format\\n' +
            'msgctxt "menu"\\nmsgid "Open %(name)s"\\nmsgstr ""\\n';
          const dt = new DataTransfer();
          dt.items.add(new File([po], 'menu.po', { type: 'text/x-gettext-translation' }));
          window.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt }));
          window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, cancelable: true }));
        }""")
        made = page.get_by_role("dialog", name="New project from menu.po")
        made.get_by_role("button", name="Create").click()
        page.locator("[data-node]").first.click()
        notes = page.get_by_role("list", name="Notes from the file")
        expect(notes).to_contain_text("context: menu")
        expect(notes).to_contain_text("note: Shown on the File menu")
        expect(notes).to_contain_text("flags: python-format")
        field = page.get_by_role("textbox", name="Translation")
        expect(field).to_have_attribute("lang", "pt-BR")
        field.fill("Abrir %(name)s")
        field.press("Control+Enter")
        page.screenshot(path=os.path.join(out, "po-project.png"))
        po_session = open_session_id(url, project_of(page))
        status, exported = curl("-X", "POST", "-H", "content-type: application/json",
                                "--data", '{"format":"po"}',
                                f"{url}/api/v1/sessions/{po_session}/export")
        assert status == 200, (status, exported)
        assert 'msgctxt "menu"\nmsgid "Open %(name)s"\nmsgstr "Abrir %(name)s"' in exported, exported
        assert "#, python-format" in exported and "#: app/menu.py:12" in exported, exported
        page.goto(url + "/#/")

        readme_screenshot(page, url, out)
        box_page = next(p["id"] for p in scene_with_curl(url, session)["pages"]
                        if any(n["id"] == node_id for n in p["nodes"]))
        check_accessibility(browser, url, project, box_page, node_id)

        # A phone: one panel at a time.
        phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        watch_errors(phone, errors)
        phone.goto(f"{url}/#/p/{project}")
        expect(phone.locator(".page-image")).to_be_visible()
        expect(phone.locator(".strip")).to_be_hidden()
        phone.screenshot(path=os.path.join(out, "phone.png"))
        phone.get_by_role("button", name="Pages").click()
        expect(phone.locator(".strip")).to_be_visible()
        phone.locator(".strip-row").nth(2).get_by_role("button").click()
        phone.get_by_role("button", name="Page", exact=True).click()
        phone.locator(".block").first.click()
        expect(phone.locator("#translation")).to_be_visible()
        phone.screenshot(path=os.path.join(out, "phone-edit.png"))

        # Another origin's page cannot drive quire (403 before any route).
        Foreign.target = url
        elsewhere = ThreadingHTTPServer(("127.0.0.1", 0), Foreign)
        threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
        other = browser.new_page()
        other.goto(f"http://127.0.0.1:{elsewhere.server_address[1]}/")
        expect(other).to_have_title("sent")
        elsewhere.shutdown()
        status, projects = curl_json(f"{url}/api/v1/projects")
        assert sorted(p["name"] for p in projects) == ["Chapter 1", "The sea, chapter 3", "menu"], projects
        status, body = curl_json("-X", "POST", "-H", "Origin: http://evil.example", "--data", '{"name":"x"}',
                                 f"{url}/api/v1/projects")
        assert status == 403 and body["error"]["code"] == "forbidden_origin", (status, body)



def scenario_token(url, out, token):
    with browser_page() as (_, page, _):
        page.goto(url + "/")
        expect(page.get_by_role("heading", name="This quire needs its token")).to_be_visible()
        page.screenshot(path=os.path.join(out, "login.png"))
        page.get_by_role("textbox", name="Token").fill("not-the-token")
        page.get_by_role("button", name="Continue").click()
        expect(page.get_by_role("alert")).to_contain_text("not the one")
        expect(page.get_by_role("textbox", name="Token")).to_be_visible()

        # A token in a URL is refused, even the right one.
        status, body = curl_json(f"{url}/api/v1/projects?access_token={token}")
        assert status == 400 and body["error"]["code"] == "token_in_query", (status, body)
        status, body = curl_json(f"{url}/api/v1/projects?token={token}")
        assert status == 400, (status, body)

        page.get_by_role("textbox", name="Token").fill(token)
        page.get_by_role("button", name="Continue").click()
        expect(page.get_by_role("heading", name="New project")).to_be_visible()
        expect(page.get_by_test_id("link")).to_contain_text("online")
        assert page.evaluate("location.href").find(token) < 0
        assert page.evaluate("sessionStorage.getItem('quire.token')") == token

        # Images need the token too: the strip and the canvas still show them.
        page.get_by_label("Name").fill("Locked")
        page.get_by_role("button", name="Create").click()
        expect(page.locator(".workbench")).to_be_visible()
        path = os.path.join(out, "locked.png")
        with open(path, "wb") as f:
            f.write(png(300, 400, 200))
        page.locator(".session-bar input[type=file]").set_input_files([path])
        expect(page.locator(".strip-row")).to_have_count(1)
        page.wait_for_function("() => { const i = document.querySelector('.page-image');"
                               " return i && i.complete && i.naturalWidth === 300; }")
        page.wait_for_function("() => { const i = document.querySelector('.strip .thumb');"
                               " return i && i.complete && i.naturalWidth > 0 && i.naturalWidth <= 256; }")
        # A reload keeps the login for this tab.
        page.reload()
        expect(page.locator(".page-image")).to_be_visible()


def scenario_origin(url, out, token):
    """Behind a proxy that drops the port from Host (nginx's `$host`), the
    browser's Origin is not the server's own: the page loads and signs in
    (reads carry no Origin), then its first write is refused, and the page
    says why and which setting allows it."""
    with browser_page() as (_, page, _):
        page.goto(url + "/")
        page.get_by_role("textbox", name="Token").fill(token)
        page.get_by_role("button", name="Continue").click()
        expect(page.get_by_role("heading", name="New project")).to_be_visible()
        page.get_by_label("Name").fill("Refused")
        page.get_by_role("button", name="Create").click()
        banner = page.get_by_test_id("refused-address")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text(f"Origin `{url}` is not allowed")
        expect(banner).to_contain_text("server.allowed_origins")
        expect(page.get_by_role("alert").first).to_be_visible()
        page.screenshot(path=os.path.join(out, "refused.png"))


def serve(binary, port):
    """`quire --headless` on `port`, once it says it is serving."""
    proc = subprocess.Popen([binary, "--headless", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if line.startswith("quire: serving "):
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc
    raise AssertionError(f"quire exited with {proc.wait()} before serving")


def scenario_restart(binary, out):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    notes = os.path.join(out, "notes.txt")
    with open(notes, "w") as f:
        f.write("One.\n\nTwo.\n\nThree.\n")
    server = serve(binary, port)
    try:
        with browser_page() as (_, page, _):
            page.goto(url + "/")
            page.get_by_label("Name").fill("Restarted")
            page.get_by_role("button", name="Create").click()
            page.locator(".session-bar input[type=file]").set_input_files([notes])
            expect(page.locator(".block")).to_have_count(3)
            project = project_of(page)
            page.locator(".block").first.click()
            page.locator("#translation").fill("Un (brouillon)")

            server.terminate()
            assert server.wait(30) == 0
            expect(page.get_by_test_id("link")).to_contain_text("offline")
            page.screenshot(path=os.path.join(out, "offline.png"))
            server = serve(binary, port)
            expect(page.get_by_test_id("link")).to_contain_text("online", timeout=15_000)

            # The page opened the project again, kept the draft, and follows the new session.
            session = open_session_id(url, project)
            expect(page.locator("#translation")).to_have_value("Un (brouillon)")
            nodes = scene_with_curl(url, session)["pages"][0]["nodes"]
            apply_with_curl(url, session, {"type": "UpdateNode", "page": scene_with_curl(url, session)["pages"][0]["id"],
                                           "id": nodes[1]["id"],
                                           "patch": {"kind": {"type": "text", "translation": "Deux"}}})
            expect(page.locator(f'.block[data-node="{nodes[1]["id"]}"]')).to_contain_text("Deux", timeout=LIVE_MS)
    finally:
        server.terminate()
        server.wait(30)


def scenario_live(url, out, project):
    with browser_page() as (_, page, _):
        page.goto(f"{url}/#/p/{project}")
        expect(page.locator(".block")).to_have_count(2)
        page.locator(".block").first.click()
        page.locator("#translation").fill("Depuis le navigateur")
        page.locator("#translation").press("Tab")
        expect(page.locator(".block").first).to_have_attribute("data-state", "translated")
        session = open_session_id(url, project)
        scene = mcp_call(url, "quire_get_scene", {"sessionId": session})
        first = scene["scene"]["pages"][0]["nodes"][0]["kind"]
        assert first["translation"] == "Depuis le navigateur", first
        print("web: saved", flush=True)
        # The TUI's answer, typed in tmux once it showed ours.
        expect(page.locator(".block").nth(1)).to_contain_text("From the TUI", timeout=60_000)
        page.screenshot(path=os.path.join(out, "live.png"))


def scenario_approval(url, out, allowed):
    with browser_page() as (_, page, _):
        page.goto(url + "/")
        page.get_by_label("Name").fill("Gated")
        page.get_by_role("button", name="Create").click()
        notes = os.path.join(out, "gated.txt")
        with open(notes, "w") as f:
            f.write("Stamp me.\n")
        page.locator(".session-bar input[type=file]").set_input_files([notes])
        expect(page.locator(".block")).to_have_count(1)
        page.keyboard.press("r")
        dialog = page.get_by_role("dialog", name="Run engines")
        step_box(dialog, "stamp").check()
        expect(dialog.locator(".approval pre")).to_have_text("sed -n d")
        start = dialog.get_by_role("button", name="Start")
        expect(start).to_be_disabled()
        if allowed:
            dialog.get_by_role("checkbox", name="I have read these commands").check()
            page.screenshot(path=os.path.join(out, "approval.png"))
            expect(start).to_be_enabled()
            start.click()
            expect(page.locator(".job").first).to_contain_text("stamp")
            expect(page.locator(".job").first).to_contain_text("done", timeout=LIVE_MS)
        else:
            expect(dialog.locator(".approval")).to_contain_text("does not run them for HTTP clients")
            page.screenshot(path=os.path.join(out, "approval.png"))
            # The server refuses it too, whatever a page would send.
            status, sessions = curl_json(f"{url}/api/v1/sessions")
            status, body = curl_json("-X", "POST", "-H", "Content-Type: application/json", "--data",
                                     json.dumps({"steps": ["stamp"]}),
                                     f"{url}/api/v1/sessions/{sessions[0]['id']}/pipelines")
            assert status == 403 and body["error"]["code"] == "approval_required", (status, body)


def scenario_chapter(url, out, pages_dir):
    """A raw chapter to a rendered CBZ without drawing a box: a CBZ of two
    generated comic pages dropped on the home screen (its name and
    languages asked), Find text on every page, the `?` keys, pseudo
    translation, clean and render from Run…, the Cleaned and Rendered
    views (Rendered out of date after an edit), a render warning opened
    from the job and followed to its box, and the CBZ exported."""
    cbz = os.path.join(out, "raw chapter.cbz")
    with zipfile.ZipFile(cbz, "w") as z:
        for name in ("page-01.png", "page-02.png"):
            z.write(os.path.join(pages_dir, name), name)
    with browser_page(accept_downloads=True) as (browser, page, errors):
        page.goto(url + "/")
        expect(page.get_by_test_id("link")).to_contain_text("online")
        page.locator(".home input[type=file]").set_input_files([cbz])
        dialog = page.get_by_role("dialog", name="New project from raw chapter.cbz")
        expect(dialog.get_by_label("Name")).to_have_value("raw chapter")
        dialog.get_by_label("Source language").fill("en")
        dialog.get_by_label("Target language").fill("fr")
        dialog.get_by_role("button", name="Create").click()
        expect(page.locator(".strip-row")).to_have_count(2, timeout=LIVE_MS)
        project = project_of(page)
        session = open_session_id(url, project)
        meta = scene_with_curl(url, session)
        assert (meta["project"]["sourceLanguage"], meta["project"]["targetLanguage"]) == ("en", "fr"), meta["project"]

        # Find text on every page: detect, then ocr; boxes with their regions.
        page.locator(".find-text summary").click()
        page.get_by_role("menuitem", name="On every page").click()
        job = page.locator(".job").first
        expect(job).to_contain_text("detect → ocr")
        expect(job).to_contain_text("done", timeout=60_000)
        scene = scene_with_curl(url, session)
        texts = [[n for n in p["nodes"] if n["kind"]["type"] == "text"] for p in scene["pages"]]
        assert all(len(t) >= 3 for t in texts), [len(t) for t in texts]
        assert all(n["kind"].get("region") and n["kind"].get("text") for t in texts for n in t), texts
        expect(page.locator(".box[data-node]")).to_have_count(len(texts[0]))
        expect(page.locator(".regions polygon")).to_have_count(len(texts[0]))
        page.get_by_role("group", name="Overlays").get_by_role("button", name="Mask").click()
        expect(page.locator(".mask-overlay")).to_be_visible()
        page.screenshot(path=os.path.join(out, "found.png"))
        page.get_by_role("group", name="Overlays").get_by_role("button", name="Mask").click()

        # "Read" on one box: its source cleared, then read from the image again.
        again = texts[0][1]
        apply_with_curl(url, session, {"type": "UpdateNode", "page": scene["pages"][0]["id"], "id": again["id"],
                                       "patch": {"kind": {"type": "text", "text": None}}})
        page.locator(f'.box[data-node="{again["id"]}"]').click()
        editor = page.get_by_role("region", name="Editor")
        expect(editor.locator(".source-text")).to_contain_text("no source text", timeout=LIVE_MS)
        editor.get_by_role("button", name="Read", exact=True).click()
        expect(editor.locator(".source-text")).to_have_text(again["kind"]["text"], timeout=60_000)
        others = [n["kind"]["text"] for n in scene_with_curl(url, session)["pages"][0]["nodes"]
                  if n["kind"]["type"] == "text" and n["id"] != again["id"]]
        assert others == [n["kind"]["text"] for n in texts[0] if n["id"] != again["id"]], others

        # ? lists the keys.
        page.locator("body").click(position={"x": 5, "y": 300})
        page.keyboard.press("?")
        keys = page.get_by_role("dialog", name="Keys")
        expect(keys).to_be_visible()
        expect(keys).to_contain_text("next / previous page")
        keys.get_by_role("button", name="Close").click()
        expect(keys).to_have_count(0)

        # One translation too long for its balloon: render warns about it.
        long_node = texts[0][0]
        apply_with_curl(url, session, {"type": "UpdateNode", "page": scene["pages"][0]["id"], "id": long_node["id"],
                                       "patch": {"kind": {"type": "text", "translation": "Beaucoup trop long. " * 200}}})
        page.get_by_test_id("run").click()
        dialog = page.get_by_role("dialog", name="Run engines")
        expect(step_box(dialog, "chapter")).to_have_count(1)  # the named pipeline is offered
        for engine in ("pseudo-translate", "clean", "render"):
            step_box(dialog, engine).check()
        dialog.get_by_role("button", name="Start").click()
        job = page.locator(".job").first
        expect(job).to_contain_text("pseudo-translate → clean → render")
        expect(job).to_contain_text("done", timeout=60_000)
        strip = page.locator(".strip-row").nth(1).get_by_role("button")
        expect(strip).to_have_attribute("aria-label", re.compile("machine-translated"))
        expect(page.locator(".strip-row").nth(1).locator(".seg.shade-machine")).to_have_count(1)

        # The Cleaned and Rendered views, current.
        images = page.get_by_role("group", name="Image")
        images.get_by_role("button", name="Cleaned").click()
        nodes = scene_with_curl(url, session)["pages"][0]["nodes"]
        blob = lambda role: next(n["kind"]["blob"] for n in nodes if n["kind"].get("role") == role)
        expect(page.locator(".page-image")).to_have_attribute("src", re.compile(blob("cleaned")))
        page.wait_for_function("() => { const i = document.querySelector('.page-image'); return i.complete && i.naturalWidth > 0; }")
        page.screenshot(path=os.path.join(out, "cleaned.png"))
        images.get_by_role("button", name="Rendered").click()
        expect(page.locator(".page-image")).to_have_attribute("src", re.compile(blob("rendered")))
        expect(images).not_to_contain_text("out of date")
        page.wait_for_function("() => { const i = document.querySelector('.page-image'); return i.complete && i.naturalWidth > 0; }")
        page.screenshot(path=os.path.join(out, "rendered.png"))

        # The render's warning, opened from its job, goes to its box.
        job.locator(".job-warnings summary").click()
        warning = job.locator('.warning[data-rule="overflow"]')
        expect(warning).to_have_count(1)
        warning.click()
        expect(page.locator(f'.box[data-node="{long_node["id"]}"]')).to_have_attribute("aria-pressed", "true")
        expect(page.locator("#translation")).to_have_value(re.compile("Beaucoup trop long"))

        # An edit makes the render out of date, and the view says so.
        page.locator("#translation").fill("Court.")
        page.locator("#translation").press("Tab")
        expect(images.get_by_role("button", name="Rendered")).to_contain_text("out of date", timeout=LIVE_MS)
        expect(page.locator(".view-note")).to_contain_text("Run render again")
        page.screenshot(path=os.path.join(out, "stale.png"))

        # The block's lettering and the project's house style, set from
        # the editor and the project bar; each one op in the scene.
        editor = page.get_by_role("region", name="Editor")
        editor.locator(".lettering-panel summary").click()
        block = editor.get_by_test_id("block-lettering")
        block.get_by_label("Size").fill("30")
        block.get_by_label("Weight").select_option("400")
        block.get_by_label("Align").select_option("left")
        block.get_by_label("Outline").fill("#ffffff")
        block.get_by_label("Clean").select_option("false")
        block.get_by_role("button", name="Set lettering").click()
        want = {"fontSize": 30, "fontWeight": 400, "align": "left", "stroke": "#ffffff", "clean": False}
        deadline = time.monotonic() + LIVE_MS / 1000
        while True:
            node = next(n for n in scene_with_curl(url, session)["pages"][0]["nodes"] if n["id"] == long_node["id"])
            if node["kind"].get("style") == want or time.monotonic() > deadline:
                break
            page.wait_for_timeout(100)
        assert node["kind"].get("style") == want, node["kind"]
        page.screenshot(path=os.path.join(out, "lettering.png"))
        page.get_by_test_id("house-style").click()
        house = page.get_by_test_id("project-lettering")
        house.get_by_label("Face").fill("Comic Neue")
        house.get_by_label("Colour").fill("#202080")
        house.get_by_role("button", name="Set lettering").click()
        deadline = time.monotonic() + LIVE_MS / 1000
        while scene_with_curl(url, session)["project"].get("style") != {"fontFamily": "Comic Neue", "color": "#202080"}:
            assert time.monotonic() < deadline, scene_with_curl(url, session)["project"]
            page.wait_for_timeout(100)

        # The rendered chapter, as a CBZ of JPEGs.
        page.get_by_role("button", name="Export").click()
        with page.expect_download() as download:
            page.get_by_role("menuitem", name="Rendered pages, CBZ of JPEGs (.cbz)").click()
        path = os.path.join(out, "chapter.cbz")
        download.value.save_as(path)
        with zipfile.ZipFile(path) as z:
            assert z.namelist() == ["001.jpg", "002.jpg", "ComicInfo.xml"], z.namelist()


EPISODE = """1
00:00:01,000 --> 00:00:03,000
Where are you going?

2
00:00:03,500 --> 00:00:06,000
I told you a hundred times.

3
00:00:06,500 --> 00:00:09,000
See you tomorrow.

4
00:00:09,500 --> 00:00:12,000
Goodbye, my friend.
"""

MEMORY = """<tmx version="1.4"><header srclang="en"/><body>
<tu changedate="20261102T101500Z"><tuv xml:lang="en"><seg>Where are you going?</seg></tuv><tuv xml:lang="pt-BR"><seg>Aonde você vai?</seg></tuv></tu>
<tu><tuv xml:lang="en"><seg>See you tomorrow, Naruto.</seg></tuv><tuv xml:lang="pt-BR"><seg>Até amanhã, Naruto.</seg></tuv></tu>
</body></tmx>"""


def scenario_desk(url, out):
    """A subtitler's episode at the desk in the browser: languages set from
    the project menu, a memory match inserted with a click, the cue's counts
    while typing, Esc asking, a draft back after the tab died, a range of
    cues marked reviewed at once, find and replace with a count and a
    preview, a QA mark gone as soon as its cue is fixed, concordance, and an
    export that says what it wrote for untranslated cues."""
    status, body = curl_json("-X", "POST", "-H", "Content-Type: application/json", "--data",
                             json.dumps({"name": "episode1.tmx", "content": MEMORY}), f"{url}/api/v1/memory")
    assert status == 200, (status, body)
    srt = os.path.join(out, "episode2.srt")
    with open(srt, "w") as f:
        f.write(EPISODE)
    with browser_page() as (browser, first, errors):
        # A context of its own, which outlives a tab closed in it.
        first.close()
        context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
        page = context.new_page()
        watch_errors(page, errors)
        page.goto(url + "/")
        page.get_by_label("Name").fill("Episode 2")
        page.get_by_role("button", name="Create").click()
        expect(page.locator(".workbench")).to_be_visible()
        project = project_of(page)
        session = open_session_id(url, project)
        page.locator(".session-bar input[type=file]").set_input_files([srt])
        expect(page.locator(".block[data-node]")).to_have_count(4)

        # Languages, where the project is.
        page.get_by_test_id("languages").click()
        page.locator(".languages input[name=from]").fill("en")
        page.locator(".languages input[name=to]").fill("pt-BR")
        page.locator(".languages").get_by_role("button", name="Set").click()
        expect(page.get_by_test_id("languages")).to_have_text("en → pt-BR")
        project_meta = scene_with_curl(url, session)["project"]
        assert (project_meta["sourceLanguage"], project_meta["targetLanguage"]) == ("en", "pt-BR"), project_meta
        # A children's programme: its own subtitle profile (13 cps).
        page.get_by_test_id("languages").click()
        page.locator(".languages select[name=profile]").select_option("netflix-children")
        page.locator(".languages").get_by_role("button", name="Set").click()
        expect(page.locator(".languages")).not_to_be_visible()
        wait_for(lambda: scene_with_curl(url, session)["project"].get("subtitleProfile") == "netflix-children",
                 "the project's subtitle profile saved")

        # Cue 1: the memory's match, one click.
        blocks = page.locator(".block[data-node]")
        blocks.nth(0).click()
        expect(page.locator(".editor h2")).to_contain_text("Cue 1")
        match = page.get_by_test_id("match").first
        expect(match).to_contain_text("100 %")
        expect(match).to_contain_text("Aonde você vai?")
        # By keyboard (Alt+1 in the translation), then by a click.
        page.locator("#translation").press("Alt+1")
        expect(page.locator("#translation")).to_have_value("Aonde você vai?")
        page.locator("#translation").fill("")
        match.click()
        expect(page.locator("#translation")).to_have_value("Aonde você vai?")
        page.get_by_role("button", name="Save").click()
        expect(blocks.nth(0)).to_have_attribute("data-state", "translated")

        # Cue 2: the counts while typing, red past the profile's limits.
        blocks.nth(1).click()
        page.locator("#translation").fill("Eu já te disse cem vezes que não quero ver você aqui de novo")
        counter = page.get_by_test_id("cue-counter")
        expect(counter).to_have_class(re.compile("over"))
        expect(counter).to_contain_text("60 chars · 24.0 cps · over 42 chars/line, 13 cps")
        # Esc asks; "no" keeps the draft.
        page.once("dialog", lambda d: d.dismiss())
        page.locator("#translation").press("Escape")
        expect(page.locator("#translation")).to_have_value(re.compile("cem vezes"))
        page.get_by_role("button", name="Save").click()
        expect(blocks.nth(1)).to_have_attribute("data-state", "translated")

        # Cue 3: a draft outlives the tab that typed it.
        blocks.nth(2).click()
        page.locator("#translation").fill("Até aman")
        hash_ = page.evaluate("location.hash")
        # The tab dies with its draft unsaved: no save reaches the server on
        # the way out, and the page is closed without its unload handlers.
        page.route("**/history/apply", lambda route: route.abort())
        page.close(run_before_unload=False)
        page = context.new_page()
        watch_errors(page, errors)
        page.goto(url + "/" + hash_)
        expect(page.get_by_test_id("draft-back")).to_be_visible()
        expect(page.locator("#translation")).to_have_value("Até aman")
        page.locator("#translation").fill("Até amanhã.")
        page.get_by_role("button", name="Save").click()
        blocks = page.locator(".block[data-node]")
        expect(blocks.nth(2)).to_have_attribute("data-state", "translated")

        # QA: cue 2 too long; fixed, its mark goes at once.
        status, job = curl_json("-X", "POST", "-H", "Content-Type: application/json", "--data",
                                json.dumps({"steps": ["qa"]}), f"{url}/api/v1/sessions/{session}/pipelines")
        assert status == 200, (status, job)
        expect(blocks.nth(1)).to_have_class(re.compile("warned"))
        blocks.nth(1).click()
        expect(page.locator(".node-warnings")).to_contain_text("cue 2: line 1 has 60 characters, over 42")
        page.screenshot(path=os.path.join(out, "desk.png"))
        page.locator("#translation").fill("Já te disse cem vezes.")
        page.get_by_role("button", name="Save").click()
        expect(page.locator(".node-warnings")).to_have_count(0)
        expect(blocks.nth(1)).not_to_have_class(re.compile("warned"))

        # Cues 1-3 marked reviewed in one op.
        blocks.nth(0).click()
        blocks.nth(2).click(modifiers=["Shift"])
        expect(page.get_by_test_id("range")).to_contain_text("3 selected")
        page.get_by_test_id("range").get_by_role("button", name="Mark reviewed").click()
        for i in range(3):
            expect(blocks.nth(i)).to_have_attribute("data-state", "reviewed")
        status, undone = curl_json("-X", "POST", f"{url}/api/v1/sessions/{session}/history/undo")
        assert status == 200 and undone["label"] == "marked 3 blocks reviewed", (status, undone)
        expect(blocks.nth(0)).to_have_attribute("data-state", "translated")
        # Only what awaits review: the three translated cues, numbered as
        # they are; n goes from one to the next.
        show = page.get_by_test_id("show")
        expect(show).to_contain_text("needs review (3)")
        show.select_option("review")
        expect(blocks).to_have_count(3)
        expect(blocks.nth(2)).to_contain_text("Até amanhã.")
        show.select_option("all")
        expect(blocks.nth(3)).to_be_visible()

        # Find and replace: a count, a preview, one undo step.
        page.get_by_role("button", name="Find and replace").click()
        page.locator(".find-replace input[name=find]").fill("você")
        page.locator(".find-replace").get_by_label("Whole words").check()
        expect(page.get_by_test_id("find-count")).to_have_text("1 match in 1 segment")
        page.locator(".find-replace input[name=replace]").fill("tu")
        expect(page.get_by_test_id("replace-preview")).to_contain_text("Aonde tu vai?")
        page.locator(".find-replace").get_by_role("button", name=re.compile("Replace in 1")).click()
        expect(blocks.nth(0)).to_contain_text("Aonde tu vai?")
        status, undone = curl_json("-X", "POST", f"{url}/api/v1/sessions/{session}/history/undo")
        assert status == 200 and undone["label"] == "replace “você” with “tu”", (status, undone)

        # The project's History: newest first, what and where, filtered.
        page.get_by_role("button", name="Project history").click()
        history = page.get_by_test_id("project-history")
        entries = history.get_by_test_id("history-entry")
        expect(entries.first).to_contain_text("undo")
        expect(history).to_contain_text("page 1, block 1 · translation: “Aonde tu vai?” → “Aonde você vai?”")
        page.screenshot(path=os.path.join(out, "history.png"))
        expect(history).to_contain_text("a person: edit project")
        history.get_by_label("This page only").check()
        history.get_by_role("button", name="Show").click()
        expect(history).not_to_contain_text("edit project")
        expect(entries.first).to_contain_text("undo")
        history.get_by_label("This page only").uncheck()
        history.get_by_label("Engine").fill("nothing-ran")
        history.get_by_role("button", name="Show").click()
        expect(history).to_contain_text("No change matches.")
        history.get_by_label("Engine").fill("")
        history.get_by_role("button", name="Show").click()
        expect(entries.first).to_contain_text("undo")
        page.get_by_role("button", name="Project history").click()

        # Concordance over the memory.
        page.locator("#concordance").fill("naruto")
        page.locator(".concordance").get_by_role("button", name="Search").click()
        expect(page.get_by_test_id("concordance")).to_contain_text("Até amanhã, Naruto.")

        # A half-done episode's export says what it wrote for cue 4.
        page.get_by_role("button", name="Export").click()
        with page.expect_download():
            page.locator("[data-format=srt]").click()
        expect(page.locator(".toast-warning")).to_contain_text(
            "1 of 4 segments have no translation: written with their source text")
        # Asked to refuse, it names the cue and saves nothing.
        page.get_by_role("button", name="Export").click()
        page.locator("select[name=untranslated]").select_option("refuse")
        page.locator("[data-format=srt]").click()
        expect(page.locator(".toast-error")).to_contain_text("1 of 4 segments have no translation (cue 4)")


def scenario_team(url, out, token, reader, project, page_id, node_id):
    """Bea, signed in with her own token, reads who wrote a translation
    (ana, a person) and, after translating the next block herself, sees
    her own name on it; undoing says whose change it undid. Rui, who may
    only read, is offered nothing that writes."""
    with browser_page() as (_, page, _):
        page.goto(url + "/")
        page.get_by_role("textbox", name="Token").fill(reader)
        page.get_by_role("button", name="Continue").click()
        expect(page.get_by_test_id("who")).to_have_text("rui · read only")
        expect(page.get_by_test_id("role-note")).to_contain_text("Your role: read")
        expect(page.get_by_role("heading", name="New project")).to_have_count(0)
        page.goto(f"{url}/#/p/{project}/{page_id}/{node_id}")
        expect(page.locator(".editor .origin")).to_contain_text("By ana")
        expect(page.get_by_test_id("read-only")).to_be_visible()
        expect(page.locator("#translation")).not_to_be_editable()
        for name in ["Save", "Undo (Ctrl+Z)", "Delete page", "Delete block"]:
            expect(page.get_by_role("button", name=name)).to_have_count(0)
        for test_id in ["run", "import"]:
            expect(page.get_by_test_id(test_id)).to_have_count(0)
        expect(page.get_by_role("button", name="Export")).to_have_count(0)
        expect(page.locator(".states input").first).to_be_disabled()
        page.screenshot(path=os.path.join(out, "team-reader.png"))
    with browser_page() as (_, page, _):
        page.goto(url + "/")
        page.get_by_role("textbox", name="Token").fill(token)
        page.get_by_role("button", name="Continue").click()
        expect(page.get_by_test_id("role-note")).to_contain_text("Your role: edit")
        expect(page.get_by_role("heading", name="New project")).to_have_count(0)
        page.goto(f"{url}/#/p/{project}/{page_id}/{node_id}")
        expect(page.locator(".editor .origin")).to_contain_text("By ana")
        page.screenshot(path=os.path.join(out, "team.png"))
        blocks = page.locator(".block[data-node]")
        blocks.nth(1).click()
        page.locator("#translation").fill("Dois.")
        page.get_by_role("button", name="Save").click()
        expect(blocks.nth(1)).to_have_attribute("data-state", "translated")
        expect(page.locator(".editor .origin")).to_contain_text("By bea")
        page.get_by_role("button", name="Undo (Ctrl+Z)").click()
        expect(page.locator(".toast").last).to_contain_text("(bea's)")


def main():
    global CHROMIUM
    CHROMIUM, what, url, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    if what == "open":
        scenario_open(url, out)
    elif what == "approval":
        scenario_approval(url, out, sys.argv[5] == "allowed")
    elif what == "live":
        scenario_live(url, out, sys.argv[5])
    elif what == "restart":
        scenario_restart(url, out)
    elif what == "chapter":
        scenario_chapter(url, out, sys.argv[5])
    elif what == "token":
        scenario_token(url, out, sys.argv[5])
    elif what == "origin":
        scenario_origin(url, out, sys.argv[5])
    elif what == "desk":
        scenario_desk(url, out)
    elif what == "team":
        scenario_team(url, out, *sys.argv[5:10])
    else:
        raise SystemExit(f"unknown scenario {what}")
    print("web: ok")


if __name__ == "__main__":
    main()
