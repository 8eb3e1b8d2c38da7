"""A gettext PO round trip through independent implementations.

quire exports a project as PO; GNU `msgfmt --check` must accept the file
and Python's polib (what Poedit-style scripts and many CI checks use) reads
it: header `Language:`, `msgctxt` = node id, `#.` page name, `fuzzy` on the
engine's translations. A "translator" then edits it with polib (accepts a
fuzzy entry, writes new translations, marks one fuzzy, adds an entry with
plural forms) and saves it; `msgfmt --check` accepts that too; quire
imports it back and the scene says what the translator did. One undo takes
the import back; bad files (a broken quote, an unknown keyword, another
project's file) change nothing and name the line. Then the reviewer
scenario of spec 14 with polib: after the export an entry changes in quire
only, one in the file only, one on both sides; the file's is taken,
quire's kept, the conflict named and resolved both ways.

Usage: roundtrip.py BASE_URL WORK_DIR
"""

import os
import subprocess
import sys
import time

import httpx
import polib


def msgfmt_check(path):
    r = subprocess.run(["msgfmt", "--check", "-o", os.devnull, path],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"msgfmt --check {path}: {r.stderr}"


def main(url, work):
    http = httpx.Client(base_url=url.rstrip("/"), timeout=30)

    def call(method, path, expect=200, **kwargs):
        r = http.request(method, path, **kwargs)
        assert r.status_code == expect, f"{method} {path}: {r.status_code} {r.text[:400]}"
        return r

    def scene():
        return call("GET", "/api/v1/scene.json").json()

    def nodes():
        return {n["id"]: n for p in scene()["scene"]["pages"] for n in p["nodes"]}

    call("POST", "/api/v1/projects",
         json={"name": "PO trip", "sourceLanguage": "en", "targetLanguage": "fr"})
    page = call("POST", "/api/v1/pages",
                json={"name": "Chapter \"1\"",
                      "text": "Hello, world!\n\nTwo lines\nof text\n\nA \"quoted\" back\\slash\n\nUntouched"}).json()
    ids = page["created"][1:]
    job = call("POST", "/api/v1/pipelines", json={"steps": ["pseudo-translate"]}).json()
    deadline = time.monotonic() + 30
    def status():
        jobs = call("GET", "/api/v1/operations").json()
        return next(j["status"] for j in jobs if j["id"] == job["jobId"])

    while status() != "completed":
        assert time.monotonic() < deadline, "pseudo-translate did not finish"
        time.sleep(0.05)
    # A person's translation on the last node: not fuzzy.
    call("POST", "/api/v1/history/apply", json={
        "type": "UpdateNode", "page": page["created"][0], "id": ids[3],
        "patch": {"kind": {"type": "text", "translation": "Intact"}}})

    exported = call("POST", "/api/v1/projects/current/export", json={"format": "po"})
    assert exported.headers["content-type"].startswith("text/x-gettext-translation"), exported.headers
    path = os.path.join(work, "out.po")
    with open(path, "wb") as f:
        f.write(exported.content)
    msgfmt_check(path)
    po = polib.pofile(path)
    assert po.metadata["Language"] == "fr", po.metadata
    assert po.metadata["Content-Type"] == "text/plain; charset=UTF-8", po.metadata
    entries = {e.msgctxt: e for e in po}
    assert sorted(entries) == sorted(ids), sorted(entries)
    assert entries[ids[1]].msgid == "Two lines\nof text", entries[ids[1]].msgid
    assert entries[ids[2]].msgid == "A \"quoted\" back\\slash", entries[ids[2]].msgid
    assert entries[ids[0]].comment == "page: Chapter \"1\"", entries[ids[0]].comment
    for i in ids[:3]:
        assert "fuzzy" in entries[i].flags, (i, entries[i].flags)
        assert entries[i].msgstr, entries[i]
    assert "fuzzy" not in entries[ids[3]].flags and entries[ids[3]].msgstr == "Intact"

    # The translator: accepts 0 as it is, rewrites 1, rewrites 2 but leaves
    # it fuzzy, and adds a plural entry for node 3.
    entries[ids[0]].flags.remove("fuzzy")
    entries[ids[1]].msgstr = "Deux lignes\nde texte"
    entries[ids[1]].flags.remove("fuzzy")
    entries[ids[2]].msgstr = "Un « guillemet » anti\\slash"
    po.remove(entries[ids[3]])
    po.append(polib.POEntry(msgctxt=ids[3], msgid="Untouched", msgid_plural="Untouched all",
                            msgstr_plural={0: "Intact", 1: "Intacts"}))
    po.metadata["Plural-Forms"] = "nplurals=2; plural=(n > 1);"
    edited = os.path.join(work, "edited.po")
    po.save(edited)
    msgfmt_check(edited)

    before = scene()["epoch"]
    with open(edited, "rb") as f:
        report = call("POST", "/api/v1/projects/current/import",
                      files={"file": ("edited.po", f.read(), "text/x-gettext-translation")}).json()
    assert report["updated"] == 3, report
    assert [c["nodeId"] for c in report["conflicts"]] == [ids[3]], report
    assert "plural" in report["conflicts"][0]["message"], report
    assert report["epoch"] == before + 1, report
    got = nodes()
    assert got[ids[0]]["kind"]["origin"]["by"] == "human", got[ids[0]]
    assert got[ids[1]]["kind"]["translation"] == "Deux lignes\nde texte"
    assert got[ids[1]]["kind"]["origin"]["by"] == "human"
    assert got[ids[2]]["kind"]["translation"] == "Un « guillemet » anti\\slash"
    assert got[ids[2]]["kind"]["origin"]["by"] == "engine", got[ids[2]]
    assert got[ids[3]]["kind"]["translation"] == "Intact"

    # Exported again, the fuzzy flags say the same.
    again = polib.pofile(call("POST", "/api/v1/projects/current/export",
                              json={"format": "po"}).text)
    flags = {e.msgctxt: "fuzzy" in e.flags for e in again}
    assert flags == {ids[0]: False, ids[1]: False, ids[2]: True, ids[3]: False}, flags

    undone = call("POST", "/api/v1/history/undo").json()
    assert undone["label"] == "import PO · 3 segments", undone
    assert nodes()[ids[1]]["kind"]["translation"] != "Deux lignes\nde texte"

    # Bad files: refused with the line named, nothing changed.
    text = open(edited, encoding="utf-8").read()
    broken = text.splitlines().index('msgid "Hello, world!"') + 1
    bad = [
        (text.replace('msgid "Hello, world!"', 'msgid "Hello, world!', 1),
         f"line {broken}: the string is not closed"),
        (text.replace("msgstr", "msgtext", 1), "unknown keyword `msgtext`"),
        (text.replace(ids[0], "x").replace(ids[1], "y").replace(ids[2], "z").replace(ids[3], "w"),
         "none of the file"),
    ]
    for content, expected in bad:
        epoch = scene()["epoch"]
        r = call("POST", "/api/v1/projects/current/import", 422,
                 files={"file": ("bad.po", content.encode(), "text/x-gettext-translation")})
        message = r.json()["error"]["message"]
        assert expected in message, (expected, message)
        if expected != "none of the file":
            assert "line " in message, message
        assert scene()["epoch"] == epoch, "a refused import changed the scene"
    reviewer(call, work, nodes)
    print("po roundtrip: ok")


def reviewer(call, work, nodes):
    call("POST", "/api/v1/projects",
         json={"name": "PO review", "sourceLanguage": "en", "targetLanguage": "de"})
    page = call("POST", "/api/v1/pages", json={"name": "p", "text": "One\n\nTwo\n\nThree"}).json()
    page_id, ids = page["created"][0], page["created"][1:]

    def translate(node, text):
        call("POST", "/api/v1/history/apply", json={
            "type": "UpdateNode", "page": page_id, "id": node,
            "patch": {"kind": {"type": "text", "translation": text}}})

    for node, text in zip(ids, ["eins", "zwei", "drei"]):
        translate(node, text)
    path = os.path.join(work, "review.po")
    with open(path, "wb") as f:
        f.write(call("POST", "/api/v1/projects/current/export", json={"format": "po"}).content)
    po = polib.pofile(path)
    export_id = po.metadata.get("X-Quire-Export")
    assert export_id, po.metadata
    translate(ids[0], "eins (quire)")
    translate(ids[1], "zwei (quire)")
    entries = {e.msgctxt: e for e in po}
    entries[ids[0]].msgstr = "eins (Lektorat)"
    entries[ids[2]].msgstr = "drei (Lektorat)"
    po.save(path)
    msgfmt_check(path)
    content = open(path, encoding="utf-8").read()

    report = call("POST", "/api/v1/projects/current/import",
                  files={"file": ("review.po", content.encode(), "text/x-gettext-translation")}).json()
    assert report["base"] == export_id, report
    assert (report["updated"], report["kept"]) == (1, 1), report
    [conflict] = report["conflicts"]
    assert (conflict["nodeId"], conflict["mine"], conflict["theirs"]) == \
        (ids[0], "eins (quire)", "eins (Lektorat)"), conflict
    got = nodes()
    assert [got[i]["kind"]["translation"] for i in ids] == \
        ["eins (quire)", "zwei (quire)", "drei (Lektorat)"], got
    taken = call("POST", "/api/v1/projects/current/import",
                 json={"format": "po", "content": content, "take": [conflict["unit"]]}).json()
    assert taken["updated"] == 1, taken
    assert nodes()[ids[0]]["kind"]["translation"] == "eins (Lektorat)"
    call("POST", "/api/v1/history/undo")
    assert nodes()[ids[0]]["kind"]["translation"] == "eins (quire)"

    # The same file saved in the charset its header declares (ISO-8859-1,
    # as older tools write it): read in it, the umlaut intact.
    po = polib.pofile(path)
    po.metadata["Content-Type"] = "text/plain; charset=ISO-8859-1"
    po.encoding = "iso-8859-1"
    {e.msgctxt: e for e in po}[ids[1]].msgstr = "zwei (geändert)"
    latin1 = os.path.join(work, "latin1.po")
    po.save(latin1)
    raw = open(latin1, "rb").read()
    assert "geändert".encode("iso-8859-1") in raw, raw[:200]
    report = call("POST", "/api/v1/projects/current/import",
                  files={"file": ("latin1.po", raw, "text/x-gettext-translation")}).json()
    assert nodes()[ids[1]]["kind"]["translation"] == "zwei (quire)", report
    assert [c["theirs"] for c in report["conflicts"] if c["nodeId"] == ids[1]] == ["zwei (geändert)"], report


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
