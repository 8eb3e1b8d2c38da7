"""Subtitles and comic archives in and out, checked by independent parsers.

A SubRip file uploaded over HTTP becomes a page of timed cues; translated,
it exports as SubRip that pysrt reads with the original timings and the
translations, and as WebVTT that webvtt-py reads the same way. The timings
are in the XLIFF and PO notes and survive the project archive. A WebVTT
file imports too, and so do the real files in ../shared/testdata/subtitles
(UTF-16 with a BOM, mixed line ends, overlapping dialogues, and a copy in
windows-1252), each with the cues pysrt reads. Bad files (a cue that ends
before it starts, a malformed time) are refused naming the line, nothing
changed. A CBZ made here with unsorted
names (p10, p2, p1, and a ComicInfo.xml) becomes three image pages in
natural order as one history entry; one with a `../` entry is refused.

Usage: roundtrip.py BASE_URL [WORK_DIR]
"""

import io
import os
import struct
import sys
import zipfile
import zlib

import httpx
import pysrt
import webvtt

SRT = """1
00:00:01,000 --> 00:00:02,500
Where are you going?

2
00:00:03,000 --> 00:00:05,250
Home.
It's late!

3
01:02:03,004 --> 01:02:04,000
<i>Goodbye</i>
"""


def png(width, height):
    """A valid grey PNG of that size, made with the standard library."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def zipped(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in entries:
            z.writestr(name, data)
    return buf.getvalue()


def main(url):
    http = httpx.Client(base_url=url.rstrip("/"), timeout=30)

    def call(method, path, expect=200, **kwargs):
        r = http.request(method, path, **kwargs)
        assert r.status_code == expect, f"{method} {path}: {r.status_code} {r.text[:400]}"
        return r

    def scene():
        return call("GET", "/api/v1/scene.json").json()

    def upload(name, data, expect=200):
        return call("POST", "/api/v1/pages", expect, files={"file": (name, data)}).json()

    def export(fmt):
        return call("POST", "/api/v1/projects/current/export", json={"format": fmt}).content

    call("POST", "/api/v1/projects",
         json={"name": "Subtitles", "sourceLanguage": "en", "targetLanguage": "fr"})
    created = upload("episode1.srt", SRT.encode())
    page_id = created["created"][0]
    page = scene()["scene"]["pages"][0]
    assert page["name"] == "episode1", page["name"]
    cues = [n["kind"] for n in page["nodes"]]
    assert [c["text"] for c in cues] == ["Where are you going?", "Home.\nIt's late!", "<i>Goodbye</i>"], cues
    assert [c["timing"] for c in cues] == [
        {"start": 1000, "end": 2500, "number": 1}, {"start": 3000, "end": 5250, "number": 2},
        {"start": 3723004, "end": 3724000, "number": 3}], cues

    translations = ["Où vas-tu ?", "À la maison.\nIl est tard !"]
    ops = [{"type": "UpdateNode", "page": page_id, "id": n["id"],
            "patch": {"kind": {"type": "text", "translation": t}}}
           for n, t in zip(page["nodes"], translations)]
    call("POST", "/api/v1/history/apply", json={"type": "Batch", "ops": ops})

    # SubRip out, read by pysrt: original timings, translations (the
    # untranslated cue keeps its source).
    subs = pysrt.from_string(export("srt").decode())
    assert len(subs) == 3, subs
    assert [s.text for s in subs] == translations + ["<i>Goodbye</i>"], [s.text for s in subs]
    assert [s.start.ordinal for s in subs] == [1000, 3000, 3723004], [s.start.ordinal for s in subs]
    assert [s.end.ordinal for s in subs] == [2500, 5250, 3724000]
    assert [s.index for s in subs] == [1, 2, 3]

    # WebVTT out, read by webvtt-py.
    vtt = webvtt.from_string(export("vtt").decode())
    assert [c.start for c in vtt] == ["00:00:01.000", "00:00:03.000", "01:02:03.004"], [c.start for c in vtt]
    assert [c.end for c in vtt] == ["00:00:02.500", "00:00:05.250", "01:02:04.000"]
    assert vtt.captions[1].raw_text == translations[1], vtt.captions[1].raw_text

    # The timings in the XLIFF and PO notes, and through the archive.
    assert b'<note category="timing">00:00:03,000 --&gt; 00:00:05,250</note>' in export("xliff"), export("xliff")
    assert "#. timing: 01:02:03,004 --> 01:02:04,000" in export("po").decode()
    archive = export("archive")
    opened = call("POST", "/api/v1/projects/import", content=archive,
                  headers={"content-type": "application/zip"}).json()
    back = call("GET", f"/api/v1/sessions/{opened['id']}/scene.json").json()
    assert [n["kind"]["timing"] for n in back["scene"]["pages"][0]["nodes"]] == [c["timing"] for c in cues]
    call("DELETE", f"/api/v1/sessions/{opened['id']}")

    # A WebVTT file in.
    upload("ep2.vtt", b"WEBVTT\n\nNOTE made by hand\n\nintro\n00:01.000 --> 00:02.000 align:start\nHi\n")
    ep2 = scene()["scene"]["pages"][1]
    assert [(n["kind"]["text"], n["kind"]["timing"]) for n in ep2["nodes"]] == [
        ("Hi", {"start": 1000, "end": 2000, "id": "intro", "settings": "align:start",
                "before": "WEBVTT\n\nNOTE made by hand"})], ep2["nodes"]

    # Two subtitle pages: an export must say which.
    r = call("POST", "/api/v1/projects/current/export", 422, json={"format": "srt"})
    assert "export one of them with `pages`" in r.json()["error"]["message"], r.text
    one = call("POST", "/api/v1/projects/current/export", json={"format": "srt", "pages": [ep2["id"]]}).text
    assert pysrt.from_string(one)[0].text == "Hi", one

    # Bad subtitle files: the line named, nothing changed.
    bad = [
        (SRT.replace("00:00:03,000 --> 00:00:05,250", "00:00:06,000 --> 00:00:05,250"), "line 6: the cue ends"),
        (SRT.replace("00:00:03,000 -->", "00:00:3,0000 -->"), "line 6: `00:00:3,0000` is not a time"),
        (SRT.replace("01:02:04,000", "01:02:04,0x0"), "line 11: `01:02:04,0x0` is not a time"),
    ]
    for content, expected in bad:
        epoch = scene()["epoch"]
        r = upload("bad.srt", content.encode(), 422)
        assert expected in r["error"]["message"], (expected, r)
        assert "bad" in r["error"]["message"], r
        assert scene()["epoch"] == epoch, "a refused import changed the scene"

    # A CBZ with unsorted names: natural order, one history entry.
    epoch = scene()["epoch"]
    cbz = zipped([("p10.png", png(3, 2)), ("ComicInfo.xml", b"<ComicInfo/>"),
                  ("p2.png", png(2, 2)), ("p1.png", png(1, 2))])
    upload("chapter.cbz", cbz)
    after = scene()
    assert after["epoch"] == epoch + 1, after["epoch"]
    names = [p["name"] for p in after["scene"]["pages"]][2:]
    assert names == ["p1", "p2", "p10"], names
    assert [p["width"] for p in after["scene"]["pages"][2:]] == [1, 2, 3]
    undone = call("POST", "/api/v1/history/undo").json()
    assert undone["label"] == "import 3 pages", undone
    assert len(scene()["scene"]["pages"]) == 2
    for entries, expected in [([("../p1.png", png(1, 1))], "points outside the archive"),
                              ([("notes.txt", b"x")], "no PNG, JPEG or WebP pages")]:
        epoch = scene()["epoch"]
        r = upload("bad.cbz", zipped(entries), 422)
        assert expected in r["error"]["message"], (expected, r)
        assert scene()["epoch"] == epoch
    cues_as_written(call, upload, scene, export)
    real_files(call, upload)
    print("subtitles roundtrip: ok")


def cues_as_written(call, upload, scene, export):
    # Cue numbers stay as the file has them (numbered from 0 here), and a
    # line holding `-->` starts a cue even without a blank line before it;
    # cues with the same text stay two cues.
    call("POST", "/api/v1/projects", json={"name": "numbered"})
    upload("from-zero.srt", b"0\n00:00:01,000 --> 00:00:02,000\nYes.\n1\n00:00:03,000 --> 00:00:04,000\n"
                            b"Yes.\n\n7\n00:00:05,000 --> 00:00:06,000\nNo.\n")
    nodes = scene()["scene"]["pages"][0]["nodes"]
    assert [(n["kind"]["text"], n["kind"]["timing"]["number"]) for n in nodes] == [
        ("Yes.", 0), ("Yes.", 1), ("No.", 7)], nodes
    subs = pysrt.from_string(export("srt").decode())
    assert [(s.index, s.text) for s in subs] == [(0, "Yes."), (1, "Yes."), (7, "No.")], subs
    call("POST", "/api/v1/projects", json={"name": "unbroken"})
    vtt_in = b"WEBVTT\n\n00:01.000 --> 00:02.000\nAgain\n00:03.000 --> 00:04.000\nAgain\n"
    upload("unbroken.vtt", vtt_in)
    nodes = scene()["scene"]["pages"][0]["nodes"]
    assert [(n["kind"]["timing"]["start"], n["kind"]["text"]) for n in nodes] == [
        (1000, "Again"), (3000, "Again")], nodes
    # (webvtt-py reads the input as one cue whose text holds the second
    # timing line; the WebVTT parsing rules, and browsers, make two.) The
    # export has a blank line between them, and webvtt-py reads two.
    ours = webvtt.from_buffer(io.StringIO(export("vtt").decode()))
    assert [(c.start, c.text) for c in ours] == [("00:00:01.000", "Again"), ("00:00:03.000", "Again")]


def real_files(call, upload):
    """Other people's SubRip files, in the encodings they came in: each
    becomes a page with the cues pysrt reads, text and timings alike."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.environ.get("QUIRE_TESTDATA") or os.path.join(here, "../../../shared/testdata")
    folder = os.path.join(root, "subtitles")
    assert os.path.isdir(folder), f"{folder} is not there"
    files = {}
    for name in ["pysrt_bom-utf-16-le.srt", "pysrt_overlapping-dialogues.srt",
                 "omegat_file-SrtFilter-mixedEol.srt", "pysrt_capability_tester.srt"]:
        with open(os.path.join(folder, name), "rb") as f:
            files[name] = f.read()
    # The same cues as a broadcaster's legacy file would have them.
    text = files["pysrt_overlapping-dialogues.srt"].decode("utf-8-sig")
    files["overlapping-cp1252.srt"] = text.replace("\r\n", "\n").encode("cp1252", errors="replace")
    for name, data in files.items():
        call("POST", "/api/v1/projects", json={"name": name})
        upload(name, data)
        nodes = [n for p in call("GET", "/api/v1/scene.json").json()["scene"]["pages"] for n in p["nodes"]]
        # quire keeps each line as written; pysrt drops trailing spaces.
        def trimmed(text):
            return "\n".join(line.rstrip() for line in text.split("\n"))
        got = [(n["kind"]["timing"]["start"], n["kind"]["timing"]["end"], trimmed(n["kind"]["text"])) for n in nodes]
        encoding = "cp1252" if "cp1252" in name else None
        text = data.decode(encoding or ("utf-16" if data[:2] == b"\xff\xfe" else "utf-8-sig"))
        # pysrt reads no cue where lines end in CR CR LF (OmegaT's mixed
        # line ends); it is given the same text with plain ones.
        text = text.replace("\r\r\n", "\n")
        want = [(c.start.ordinal, c.end.ordinal, trimmed(c.text)) for c in pysrt.from_string(text)]
        assert want, name
        differ = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), None)
        assert got == want, (name, len(got), len(want), differ, differ is not None and (got[differ], want[differ]))
    assert any(a["kind"]["timing"]["end"] > b["kind"]["timing"]["start"]
               for a, b in zip(nodes, nodes[1:])), "no overlapping cues were kept"

    # pysubs2's WebVTT example: its header, STYLE, REGION and NOTE blocks,
    # cue ids and settings go out as they came in (block by block; times
    # written in full), and webvtt-py reads the same cues.
    name = "pysubs2_vtt_example.vtt"
    with open(os.path.join(folder, name), "rb") as f:
        original = f.read().decode("utf-8")
    call("POST", "/api/v1/projects", json={"name": name})
    upload(name, original.encode())
    exported = call("POST", "/api/v1/projects/current/export", json={"format": "vtt"}).text

    def blocks(text):
        return [b.strip() for b in text.replace("\r\n", "\n").split("\n\n") if b.strip()]

    assert blocks(exported) == blocks(original), [
        (a, b) for a, b in zip(blocks(exported), blocks(original)) if a != b][:3]
    theirs = webvtt.from_buffer(io.StringIO(original))
    ours = webvtt.from_buffer(io.StringIO(exported))
    assert [(c.start, c.end, c.text) for c in ours] == [(c.start, c.end, c.text) for c in theirs]


if __name__ == "__main__":
    main(sys.argv[1])
