"""TMX through an independent implementation: Translate Toolkit.

quire exports a project's reviewed and final segments as TMX; Translate
Toolkit's TMX store reads the same units, languages and dates. A TMX made
by its `po2tmx` from a PO file comes into quire's memory over HTTP, and a
new project's `tm` step fills from it (the job says what it filled). A
file that is not TMX is refused and changes nothing.

Usage: roundtrip.py BASE_URL WORK_DIR
"""

import os
import subprocess
import sys
import time

import httpx
import polib
from translate.storage.tmx import tmxfile


def main(url, work):
    http = httpx.Client(base_url=url.rstrip("/"), timeout=30)

    def call(method, path, expect=200, **kwargs):
        r = http.request(method, path, **kwargs)
        assert r.status_code == expect, f"{method} {path}: {r.status_code} {r.text[:400]}"
        return r

    def nodes():
        scene = call("GET", "/api/v1/scene.json").json()["scene"]
        return [n for p in scene["pages"] for n in p["nodes"] if n["kind"]["type"] == "text"]

    def run(step):
        job = call("POST", "/api/v1/pipelines", json={"steps": [step]}).json()["jobId"]
        deadline = time.monotonic() + 30
        while True:
            j = next(j for j in call("GET", "/api/v1/operations").json() if j["id"] == job)
            if j["status"] in ("completed", "completedWithErrors", "failed"):
                return j
            assert time.monotonic() < deadline, j
            time.sleep(0.05)

    # Out: reviewed and final segments, read by Translate Toolkit.
    call("POST", "/api/v1/projects",
         json={"name": "Out", "sourceLanguage": "en", "targetLanguage": "fr"})
    page = call("POST", "/api/v1/pages", json={"name": "p", "text": "Good morning\n\nGood night\n\nDraft"}).json()
    page_id, ids = page["created"][0], page["created"][1:]
    for node, text, state in [(ids[0], "Bonjour", "reviewed"), (ids[1], "Bonne nuit", "final"),
                              (ids[2], "Brouillon", "translated")]:
        call("POST", "/api/v1/history/apply", json={
            "type": "UpdateNode", "page": page_id, "id": node,
            "patch": {"kind": {"type": "text", "translation": text, "state": state}}})
    exported = call("POST", "/api/v1/projects/current/export", json={"format": "tmx"})
    assert exported.headers["content-type"].startswith("application/x-tmx+xml"), exported.headers
    store = tmxfile(exported.content, "en", "fr")
    pairs = sorted((u.source, u.target) for u in store.units)
    assert pairs == [("Good morning", "Bonjour"), ("Good night", "Bonne nuit")], pairs
    for unit in store.units:
        assert unit.xmlelement.get("changedate", "").endswith("Z"), unit.xmlelement.attrib
        assert unit.xmlelement.get("creationid") == "person", unit.xmlelement.attrib

    # In: po2tmx's TMX into the memory, then a project fills from it.
    po = polib.POFile()
    po.metadata = {"Content-Type": "text/plain; charset=UTF-8", "Language": "de"}
    for source, target in [("Open the file", "Datei öffnen"), ("Save all changes", "Alle Änderungen speichern")]:
        po.append(polib.POEntry(msgid=source, msgstr=target))
    po_path = os.path.join(work, "app.po")
    po.save(po_path)
    tmx_path = os.path.join(work, "app.tmx")
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "po2tmx"), "-l", "de",
                    "-i", po_path, "-o", tmx_path], check=True, capture_output=True)
    with open(tmx_path, "rb") as f:
        report = call("POST", "/api/v1/memory", files={"file": ("app.tmx", f.read(), "application/x-tmx+xml")}).json()
    assert report["name"] == "app" and report["units"] == 2, report
    assert sorted(l.lower() for l in report["languages"]) == ["de", "en"], report

    call("POST", "/api/v1/projects",
         json={"name": "In", "sourceLanguage": "en", "targetLanguage": "de"})
    call("POST", "/api/v1/pages", json={"name": "p", "text": "Open the file\n\nSave all changes!\n\nQuit"})
    job = run("tm")
    assert job["status"] == "completed", job
    said = [w["message"] for w in job["warnings"] if w["rule"] == "summary"]
    assert said == ["filled 2 of 3 segments from the memory (1 at 100 %, 1 at 90–94 %); "
                    "1 had no match of at least 85 %"], job["warnings"]
    got = [n["kind"].get("translation") for n in nodes()]
    assert got == ["Datei öffnen", "Alle Änderungen speichern", None], got

    # Not TMX: refused, the memory as it was.
    r = call("POST", "/api/v1/memory", 422, files={"file": ("junk.tmx", b"<xliff/>", "application/xml")})
    assert "not <tmx>" in r.json()["error"]["message"], r.text
    again = call("POST", "/api/v1/memory", json={"name": "app.tmx", "content": open(tmx_path, encoding="utf-8").read()}).json()
    assert again["replaced"] is True, again
    print("tmx roundtrip: ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
