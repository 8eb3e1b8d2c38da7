"""An XLIFF 2.0 round trip through an independent implementation.

quire exports a project as XLIFF; Translate Toolkit's XLIFF 2.0 store (the
one Weblate and Pootle use) reads it, a "reviewer" changes targets and
states with it and writes the file again; quire imports that back and the
scene must say what the reviewer did. Also: a conflict (the source changed
in quire after the export) is reported and not applied unless its unit is
named in `take` (`force`, the language override, never takes it), one
undo takes the import back, and bad files (another project's XLIFF 1.2,
not XLIFF, not well-formed, none of the units ours) change nothing. Then the reviewer scenario of
spec 14: after the export, one unit changes in quire only, one in the file
only and one on both sides; the import takes the file's, keeps quire's
(a returned file never reverts later work) and names the conflict with
both values, which is then resolved both ways, each import one undo.

Usage: roundtrip.py BASE_URL [WORK_DIR]
"""

import sys
import uuid

import httpx
from translate.storage.xliff import xlifffile
from translate.storage.xliff2 import Xliff2File


def main(url):
    http = httpx.Client(base_url=url.rstrip("/"), timeout=30)

    def call(method, path, expect=200, **kwargs):
        r = http.request(method, path, **kwargs)
        assert r.status_code == expect, f"{method} {path}: {r.status_code} {r.text[:400]}"
        return r

    def apply(op):
        return call("POST", "/api/v1/history/apply", json=op).json()

    def scene():
        return call("GET", "/api/v1/scene.json").json()

    def nodes():
        return {n["id"]: n for p in scene()["scene"]["pages"] for n in p["nodes"]}

    call("POST", "/api/v1/projects", json={"name": "Round trip"})
    apply({"type": "UpdateProject", "patch": {"sourceLanguage": "ja", "targetLanguage": "pt-BR"}})
    page = call("POST", "/api/v1/pages",
                json={"name": "p1", "text": "一つ\n\n二つ <b> & \"q\"\n\n三つ\n\n四つ", "sourceLang": "ja"}).json()
    page_id, ids = page["created"][0], page["created"][1:]

    def patch(node, **kind):
        return {"type": "UpdateNode", "page": page_id, "id": node,
                "patch": {"kind": {"type": "text", **kind}}}

    apply(patch(ids[3], translation="quatro"))

    # Export, read with Translate Toolkit.
    xliff = call("POST", "/api/v1/projects/current/export", json={"format": "xliff"}).content
    store = Xliff2File.parsestring(xliff)
    assert store.getsourcelanguage() == "ja", store.getsourcelanguage()
    assert store.gettargetlanguage() == "pt-BR", store.gettargetlanguage()
    units = {u.getid(): u for u in store.units}
    assert sorted(units) == sorted(f"n{i}" for i in ids), sorted(units)
    assert units[f"n{ids[1]}"].source == "二つ <b> & \"q\"", units[f"n{ids[1]}"].source
    assert units[f"n{ids[0]}"].xmlelement.get("state") == "initial"
    assert units[f"n{ids[3]}"].xmlelement.get("state") == "translated"
    assert units[f"n{ids[3]}"].target == "quatro"

    # The reviewer: translates 0 and reviews it, translates 1 as final,
    # translates 2 (whose source changes in quire meanwhile), confirms 3.
    units[f"n{ids[0]}"].target = "um"
    units[f"n{ids[0]}"].markapproved(True)
    units[f"n{ids[1]}"].target = "dois <b> & \"q\""
    units[f"n{ids[1]}"].xmlelement.set("state", "final")
    units[f"n{ids[2]}"].target = "três"
    units[f"n{ids[2]}"].marktranslated()
    units[f"n{ids[3]}"].markapproved(True)
    stray = store.UnitClass("not in the project")
    stray.setid(f"n{uuid.uuid4()}")
    store.addunit(stray)
    reviewed = bytes(store)
    apply(patch(ids[2], text="三つ (edited)"))

    before = scene()["epoch"]
    report = call("POST", "/api/v1/projects/current/import",
                  files={"file": ("review.xlf", reviewed, "application/xliff+xml")}).json()
    assert report["updated"] == 3, report
    assert report["unchanged"] == 0, report
    assert [c["nodeId"] for c in report["conflicts"]] == [ids[2]], report
    assert report["conflicts"][0]["applied"] is False
    assert "source changed" in report["conflicts"][0]["message"], report
    assert report["unmatched"] == [stray.getid()], report
    assert report["epoch"] == before + 1, report
    got = nodes()
    assert got[ids[0]]["kind"]["translation"] == "um"
    assert got[ids[0]]["kind"]["state"] == "reviewed"
    assert got[ids[0]]["kind"]["origin"]["by"] == "human"
    assert got[ids[1]]["kind"]["translation"] == "dois <b> & \"q\""
    assert got[ids[1]]["kind"]["state"] == "final"
    assert "translation" not in got[ids[2]]["kind"], got[ids[2]]
    assert got[ids[3]]["kind"]["state"] == "reviewed"

    # The same file again: nothing new but the conflict; forced, still
    # not; named in take, it lands.
    again = call("POST", "/api/v1/projects/current/import",
                 json={"format": "xliff", "content": reviewed.decode()}).json()
    assert again["updated"] == 0 and again["unchanged"] == 3, again
    assert again["epoch"] == report["epoch"], again
    forced = call("POST", "/api/v1/projects/current/import",
                  json={"format": "xliff", "content": reviewed.decode(), "force": True}).json()
    assert forced["updated"] == 0 and forced["conflicts"][0]["applied"] is False, forced
    unit = forced["conflicts"][0]["unit"]
    forced = call("POST", "/api/v1/projects/current/import",
                  files={"file": ("back.xlf", reviewed)}, data={"take": unit}).json()
    assert forced["updated"] == 1 and forced["conflicts"][0]["applied"] is True, forced
    assert nodes()[ids[2]]["kind"]["translation"] == "três"
    undone = call("POST", "/api/v1/history/undo").json()
    assert undone["label"] == "import XLIFF · 1 segments", undone
    assert "translation" not in nodes()[ids[2]]["kind"]

    # Bad files: each refused with a clear message, nothing changed.
    # An XLIFF 1.2 file of another project's units: read, matched to
    # nothing (its languages would refuse it first: set them alike).
    xliff1 = xlifffile(sourcelanguage="ja", targetlanguage="pt-BR")
    xliff1.addsourceunit("一つ").target = "um"
    bad = [
        (bytes(xliff1), "none of the file"),
        (b"<tmx version='1.4'><body/></tmx>", "not <xliff>"),
        (b"<xliff version='2.0' xmlns='urn:oasis:names:tc:xliff:document:2.0'><file", "well-formed"),
        (reviewed.replace(b'id="n', b'id="x'), "none of the file"),
        (b"<!DOCTYPE x [<!ENTITY a 'aaaa'>]><xliff/>", "declares a DTD"),
    ]
    for content, expected in bad:
        epoch = scene()["epoch"]
        r = call("POST", "/api/v1/projects/current/import", 422,
                 files={"file": ("bad.xlf", content, "application/xliff+xml")})
        message = r.json()["error"]["message"]
        assert expected in message, (expected, message)
        assert scene()["epoch"] == epoch, "a refused import changed the scene"
    reviewer(call, apply, nodes)
    print("xliff roundtrip: ok")


def reviewer(call, apply, nodes):
    call("POST", "/api/v1/projects", json={"name": "Reviewed"})
    apply({"type": "UpdateProject", "patch": {"sourceLanguage": "en", "targetLanguage": "fr"}})
    page = call("POST", "/api/v1/pages",
                json={"name": "p1", "text": "One\n\nTwo\n\nThree\n\nFour"}).json()
    page_id, ids = page["created"][0], page["created"][1:]

    def translate(node, text):
        apply({"type": "UpdateNode", "page": page_id, "id": node,
               "patch": {"kind": {"type": "text", "translation": text}}})

    for node, text in zip(ids, ["un", "deux", "trois", "quatre"]):
        translate(node, text)
    exported = call("POST", "/api/v1/projects/current/export", json={"format": "xliff"}).content
    store = Xliff2File.parsestring(exported)
    export_id = store.document.getroot().find(
        "{urn:oasis:names:tc:xliff:document:2.0}file").get("{urn:quire:xliff}export")
    assert export_id, "the export carries no export id"
    # In quire after the export: 0 on both sides, 1 only here.
    translate(ids[0], "un (quire)")
    translate(ids[1], "deux (quire)")
    # In the file: 0 on both sides, 2 only there; 3 left as exported.
    units = {u.getid(): u for u in store.units}
    units[f"n{ids[0]}"].target = "un (relecture)"
    units[f"n{ids[2]}"].target = "trois (relecture)"
    reviewed = bytes(store)
    assert export_id.encode() in reviewed, "Translate Toolkit dropped the export id"

    epoch = call("GET", "/api/v1/scene.json").json()["epoch"]
    report = call("POST", "/api/v1/projects/current/import",
                  files={"file": ("review.xlf", reviewed, "application/xliff+xml")}).json()
    assert report["base"] == export_id, report
    assert (report["updated"], report["kept"], report["unchanged"]) == (1, 1, 1), report
    assert len(report["conflicts"]) == 1, report
    conflict = report["conflicts"][0]
    assert conflict["nodeId"] == ids[0] and conflict["page"] == 1, conflict
    assert (conflict["mine"], conflict["theirs"]) == ("un (quire)", "un (relecture)"), conflict
    assert "changed here and in the file" in conflict["message"], conflict
    assert conflict["applied"] is False, conflict
    assert report["epoch"] == epoch + 1, report
    got = nodes()
    assert [got[i]["kind"]["translation"] for i in ids] == \
        ["un (quire)", "deux (quire)", "trois (relecture)", "quatre"], got

    # Keep mine: the same file again changes nothing. Take theirs: the
    # conflict's unit named, one more undo step, and undo brings mine back.
    again = call("POST", "/api/v1/projects/current/import",
                 json={"format": "xliff", "content": reviewed.decode()}).json()
    assert again["epoch"] == report["epoch"] and again["updated"] == 0, again
    taken = call("POST", "/api/v1/projects/current/import",
                 json={"format": "xliff", "content": reviewed.decode(),
                       "take": [conflict["unit"]]}).json()
    assert taken["updated"] == 1 and taken["conflicts"][0]["applied"] is True, taken
    assert taken["epoch"] == report["epoch"] + 1, taken
    assert nodes()[ids[0]]["kind"]["translation"] == "un (relecture)"
    call("POST", "/api/v1/history/undo")
    assert nodes()[ids[0]]["kind"]["translation"] == "un (quire)"
    # The import itself is one undo step: the file's unit goes back too.
    call("POST", "/api/v1/history/undo")
    assert nodes()[ids[2]]["kind"]["translation"] == "trois"
    assert nodes()[ids[1]]["kind"]["translation"] == "deux (quire)"


if __name__ == "__main__":
    main(sys.argv[1])
