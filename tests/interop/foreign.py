"""A translator's own files, in and out, through independent tools.

Every PO file in ../shared/testdata/cat (Django's catalogs, OmegaT's test
files with obsolete entries and plural forms) starts a project over HTTP
(a multipart POST /api/v1/projects/import) and goes back out as PO. GNU `msgcmp`
finds every key of the original in the export and nothing else, `msgfmt
--check` accepts it, and polib reads the same entries: contexts, plural
forms, flags, comments, references, obsolete entries and the header. A
translation made in quire goes out in its entry (and `fuzzy` goes when a
person has checked it).

Translate Toolkit's `po2xliff` makes an XLIFF 1.x file from a Django
catalog: it starts a project, a segment is translated in quire, the export
is the same XLIFF version with the same unit ids that Translate Toolkit reads with that
translation; a reviewer edits another unit with Translate Toolkit and the
file merges back by those ids. An XLIFF 2.0 file from OmegaT goes out with
its ids as Translate Toolkit's XLIFF 2.0 store reads them. A file that
cannot be read makes no project.

Usage: foreign.py BASE_URL WORK_DIR TESTDATA_DIR
"""

import os
import re
import subprocess
import sys

import httpx
import polib
from translate.storage import xliff, xliff2


def uid(unit):
    """A unit's id as the file has it (Translate Toolkit's `getid()` puts
    the file's name in front)."""
    return unit.xmlelement.get("id")


def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}: {r.stdout}{r.stderr}"
    return r


def main(url, work, testdata):
    http = httpx.Client(base_url=url.rstrip("/"), timeout=60)

    def call(method, path, expect=200, **kwargs):
        r = http.request(method, path, **kwargs)
        assert r.status_code == expect, f"{method} {path}: {r.status_code} {r.text[:400]}"
        return r

    def new_project(file_name, data, **fields):
        return call("POST", "/api/v1/projects/import", files={"file": (file_name, data)},
                    data=fields).json()

    def page():
        pages = call("GET", "/api/v1/scene.json").json()["scene"]["pages"]
        assert len(pages) == 1, len(pages)
        return pages[0]

    def export(fmt):
        return call("POST", "/api/v1/projects/current/export", json={"format": fmt})

    def translate(page_id, node, text, state="translated"):
        call("POST", "/api/v1/history/apply", json={
            "type": "UpdateNode", "page": page_id, "id": node["id"],
            "patch": {"kind": {"type": "text", "translation": text, "state": state}}})

    cat = os.path.join(testdata, "cat")
    names = sorted(n for n in os.listdir(cat) if n.endswith(".po"))
    assert len(names) >= 9, names
    for name in names:
        original_path = os.path.join(cat, name)
        with open(original_path, "rb") as f:
            data = f.read()
        project = new_project(name, data)
        assert project["name"] == name[:-3], project
        original = polib.pofile(original_path)
        p = page()
        # A node per entry, per plural form of a plural entry: Django's
        # "May" as a month and as an abbreviation are two.
        live = [e for e in original if e.msgid and not e.obsolete]
        forms = sum(max(len(e.msgstr_plural), 1) if e.msgid_plural else 1 for e in live)
        assert len(p["nodes"]) == forms, (name, len(p["nodes"]), forms)
        keys = {(n["kind"]["entry"]["key"], n["kind"]["entry"].get("form")) for n in p["nodes"]}
        assert len(keys) == len(p["nodes"]), name

        out = export("po")
        assert out.headers["content-disposition"].endswith(f'"{name}"'), out.headers
        out_path = os.path.join(work, name)
        with open(out_path, "wb") as f:
            f.write(out.content)
        # What msgfmt accepts of the original (OmegaT's Belarusian file has
        # plural entries and no Plural-Forms), it accepts of the export.
        checked = subprocess.run(["msgfmt", "--check", "-o", os.devnull, original_path],
                                 capture_output=True)
        if checked.returncode == 0:
            run("msgfmt", "--check", "-o", os.devnull, out_path)
        # msgcmp DEF REF: every key of REF is in DEF. Both ways: nothing
        # lost, nothing added.
        run("msgcmp", "--use-fuzzy", "--use-untranslated", out_path, original_path)
        # (gettext converts between charsets by portable names only: an
        # original in `ISO8859-1` is compared one way.)
        if original.encoding.lower() in ("utf-8", "utf8"):
            run("msgcmp", "--use-fuzzy", "--use-untranslated", original_path, out_path)
        back = polib.pofile(out_path)
        assert back.metadata.pop("X-Quire-Export"), back.metadata
        expected = dict(original.metadata, **{"Content-Type": "text/plain; charset=UTF-8"})
        assert back.metadata == expected, (name, back.metadata, expected)
        assert len(back) == len(original), name
        assert len(back.obsolete_entries()) == len(original.obsolete_entries()), name
        for a, b in zip(original, back):
            for field in ["msgctxt", "msgid", "msgid_plural", "msgstr", "msgstr_plural",
                          "flags", "comment", "tcomment", "occurrences", "obsolete",
                          "previous_msgid"]:
                assert getattr(a, field) == getattr(b, field), (name, field, a, b)

    # A translation made here goes out in its entry; `fuzzy` goes once a
    # person has checked it.
    name = "omegat_file-POFilter-fuzzyCtx.po"
    with open(os.path.join(cat, name), "rb") as f:
        new_project(name, f.read(), name="fuzzy ctx", targetLanguage="pt-BR")
    original = polib.pofile(os.path.join(cat, name))
    fuzzy = [e for e in original if "fuzzy" in e.flags]
    assert fuzzy, name
    p = page()
    by_key = {n["kind"]["entry"]["key"]: n for n in p["nodes"]}
    key = (fuzzy[0].msgctxt + "\x04" if fuzzy[0].msgctxt else "") + fuzzy[0].msgid
    translate(p["id"], by_key[key], "Revisto", "reviewed")
    back = polib.pofile(export("po").text)
    entry = back.find(fuzzy[0].msgid, msgctxt=fuzzy[0].msgctxt)
    assert entry.msgstr == "Revisto" and "fuzzy" not in entry.flags, entry
    # The project's language, as gettext names it.
    assert back.metadata["Language"] == "pt_BR", back.metadata

    sent_out_as_xliff(call, new_project, page, export, cat, work)

    # XLIFF 1.2 made by po2xliff from Django's catalog.
    po_path = os.path.join(cat, "django-5.2.19_contrib_admin_locale_pl_django.po")
    xlf_path = os.path.join(work, "admin-pl.xlf")
    run(os.path.join(os.path.dirname(sys.executable), "po2xliff"), po_path, xlf_path)
    with open(xlf_path, "rb") as f:
        made = f.read()
    original = xliff.xlifffile(made)
    ids = [uid(u) for u in original.units if u.source]
    new_project("admin-pl.xlf", made, name="admin pl")
    p = page()
    assert len(p["nodes"]) == len(ids), (len(p["nodes"]), len(ids))
    changed = p["nodes"][3]
    translate(p["id"], changed, "Przetłumaczone & <ok>")
    out = export("xliff")
    assert out.headers["content-disposition"].endswith('"admin-pl.xlf"'), out.headers
    # As it came: po2xliff writes XLIFF 1.1.
    version = re.search(rb'<xliff[^>]* version="([^"]+)"', made).group(1)
    assert re.search(rb'<xliff[^>]* version="([^"]+)"', out.content).group(1) == version
    back = xliff.xlifffile(out.content)
    assert [uid(u) for u in back.units if u.source] == ids
    got = {uid(u): u for u in back.units}
    key = changed["kind"]["entry"]["key"].split("/", 1)[1]
    assert got[key].target == "Przetłumaczone & <ok>", got[key].target
    for u in original.units:
        if u.source and uid(u) != key:
            assert got[uid(u)].target == u.target, uid(u)
    # The reviewer edits one unit in Translate Toolkit; it comes back by id.
    reviewed = next(u for u in back.units if u.source and u.target and uid(u) != key)
    reviewed.target = "Poprawione przez recenzenta"
    report = call("POST", "/api/v1/projects/current/import",
                  json={"format": "xliff", "content": bytes(back).decode()}).json()
    assert report["updated"] == 1 and not report["unmatched"] and not report["conflicts"], report
    assert report["base"], report
    texts = {n["kind"]["entry"]["key"].split("/", 1)[1]: n["kind"].get("translation")
             for n in page()["nodes"]}
    assert texts[uid(reviewed)] == "Poprawione przez recenzenta", texts[uid(reviewed)]

    # The same file named as translate-toolkit names its PO-flavoured
    # XLIFF starts a project too.
    named = new_project("admin-pl.poxliff", made, name="admin pl poxliff")
    assert named["name"] == "admin pl poxliff", named
    assert len(page()["nodes"]) == len(ids)

    # Units without an id (XLIFF 1.1 monolingual files, some extractors)
    # are named by their place and source; the export writes those ids,
    # Translate Toolkit reads them, and the file comes back by them.
    idless = ("<?xml version='1.0' encoding='UTF-8'?><xliff version='1.2' "
              "xmlns='urn:oasis:names:tc:xliff:document:1.2'><file original='ui' "
              "source-language='en' target-language='de' datatype='plaintext'><body>"
              "<trans-unit><source>Open</source></trans-unit>"
              "<trans-unit><source>Close</source><target>Schließen</target></trans-unit>"
              "</body></file></xliff>").encode()
    new_project("idless.xlf", idless, name="idless")
    p = page()
    assert len(p["nodes"]) == 2, p["nodes"]
    translate(p["id"], p["nodes"][0], "Öffnen")
    first = export("xliff").content
    assert export("xliff").content.count(b" id=\"quire-") == 2, first
    back = xliff.xlifffile(first)
    made_ids = [uid(u) for u in back.units]
    assert all(i and i.startswith("quire-") for i in made_ids), made_ids
    assert made_ids == [uid(u) for u in xliff.xlifffile(export("xliff").content).units]
    back.units[1].target = "Zumachen"
    report = call("POST", "/api/v1/projects/current/import",
                  json={"format": "xliff", "content": bytes(back).decode()}).json()
    assert report["updated"] == 1 and not report["unmatched"] and not report["conflicts"], report
    assert page()["nodes"][1]["kind"]["translation"] == "Zumachen"

    # XLIFF 2.0 from OmegaT: its unit ids go back out.
    name = "omegat_xliff2_ex.9.5.xlf"
    with open(os.path.join(cat, name), "rb") as f:
        made = f.read()
    new_project(name, made, targetLanguage="de")
    p = page()
    translate(p["id"], p["nodes"][0], "Vögel in Oregon")
    back = xliff2.Xliff2File(export("xliff").content)
    original = xliff2.Xliff2File(made)
    assert [uid(u) for u in back.units] == [uid(u) for u in original.units]
    assert back.units[0].target == "Vögel in Oregon", back.units[0].target

    # A file that cannot be read makes no project.
    before = len(call("GET", "/api/v1/projects").json())
    bad = call("POST", "/api/v1/projects/import", expect=422,
               files={"file": ("broken.po", b'msgid "x"\nmsgstr "y\n')}).json()
    assert "line 2" in bad["error"]["message"], bad
    bad = call("POST", "/api/v1/projects/import", expect=422,
               files={"file": ("v3.xlf", b"<xliff version='3.0'><file/></xliff>")}).json()
    assert "version `3.0`" in bad["error"]["message"], bad
    assert len(call("GET", "/api/v1/projects").json()) == before
    print("foreign files roundtrip: ok")


def sent_out_as_xliff(call, new_project, page, export, cat, work):
    """A PO project sent out as XLIFF (spec 14): Translate Toolkit reads
    each unit's msgctxt, flags, comments and references as notes, and a
    fuzzy entry's segment waits for review; the reviewer approves one fuzzy
    unit and clears another's mark; the file comes back, and the PO
    exported then has the original's entries with `fuzzy` gone from those
    two only (polib and msgcmp)."""
    from lxml import etree

    ns = {"x": "urn:oasis:names:tc:xliff:document:2.0"}
    for name in ["omegat_file-POFilter-be.po", "django-5.2.19_conf_locale_ja_django.po"]:
        path = os.path.join(cat, name)
        original = polib.pofile(path)
        with open(path, "rb") as f:
            new_project(name, f.read(), sourceLanguage="en")
        nodes = {n["id"]: n for n in page()["nodes"]}
        out = export("xliff")
        assert out.headers["content-disposition"].endswith('.xlf"'), out.headers
        # Translate Toolkit reads every unit by its id, with its target;
        # its XLIFF 2.0 store reads notes on segments only, so the unit's
        # notes are read with lxml.
        store = xliff2.Xliff2File(out.content)
        assert sorted(u.getid() for u in store.units) == sorted(f"n{i}" for i in nodes), name
        doc = etree.fromstring(out.content)

        def notes(unit, category):
            return "\n".join(n.text for n in unit.findall("x:notes/x:note", ns)
                             if n.get("category") == category)

        seen = 0
        for unit in doc.iterfind(".//x:unit", ns):
            node = nodes[unit.get("id")[1:]]
            entry = node["kind"]["entry"]
            if entry.get("form") is not None:
                continue
            key = entry["key"]
            msgctxt, _, msgid = key.rpartition("\x04")
            po = original.find(msgid, msgctxt=msgctxt or False)
            assert po is not None, key
            seen += 1
            assert notes(unit, "context") == (po.msgctxt or ""), (name, key)
            flags = [f for f in po.flags if f != "fuzzy"]
            assert notes(unit, "flags") == ", ".join(flags), (name, key, notes(unit, "flags"))
            assert notes(unit, "developer") == (po.comment or ""), (name, key)
            assert notes(unit, "translator") == (po.tcomment or ""), (name, key)
            refs = " ".join(f"{f}:{line}" if line else f for f, line in po.occurrences)
            assert notes(unit, "location") == refs, (name, key, notes(unit, "location"), refs)
            segment = unit.find("x:segment", ns)
            waits = segment.get("subState") == "quire:needs-review"
            assert waits == ("fuzzy" in po.flags and bool(po.msgstr)), (name, key)
        assert seen > 10, (name, seen)

        # The reviewer approves the first fuzzy unit and clears the second's
        # mark; the rest is left as it came.
        waiting = doc.xpath("//x:segment[@subState='quire:needs-review']", namespaces=ns)
        changed = {}
        if waiting:
            assert len(waiting) >= 2, name
            waiting[0].set("state", "reviewed")
            del waiting[0].attrib["subState"]
            del waiting[1].attrib["subState"]
            for segment in waiting[:2]:
                unit = segment.getparent()
                entry = nodes[unit.get("id")[1:]]["kind"]["entry"]
                changed[entry["key"]] = segment.get("state")
        # Midnight Commander's catalog has fuzzy entries; Django's has none.
        assert len(changed) == (2 if name.endswith("-be.po") else 0), (name, changed)
        reviewed = etree.tostring(doc, xml_declaration=True, encoding="UTF-8").decode()
        report = call("POST", "/api/v1/projects/current/import",
                      json={"format": "xliff", "content": reviewed}).json()
        assert report["updated"] == len(changed), report
        assert not report["conflicts"] and not report["unmatched"], report

        out_path = os.path.join(work, "again-" + name)
        with open(out_path, "wb") as f:
            f.write(export("po").content)
        run("msgcmp", "--use-fuzzy", "--use-untranslated", out_path, path)
        back = polib.pofile(out_path)
        assert len(back) == len(original), name
        for a, b in zip(original, back):
            key = (a.msgctxt + "\x04" if a.msgctxt else "") + a.msgid
            flags = [f for f in a.flags if not (key in changed and f == "fuzzy")]
            assert b.flags == flags, (name, key, a.flags, b.flags)
            for field in ["msgctxt", "msgid", "msgid_plural", "msgstr", "msgstr_plural",
                          "comment", "tcomment", "occurrences", "previous_msgid"]:
                assert getattr(a, field) == getattr(b, field), (name, field, a, b)


if __name__ == "__main__":
    main(*sys.argv[1:])
