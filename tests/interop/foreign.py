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
    assert back.metadata["Language"] in (original.metadata.get("Language"), "pt-BR"), back.metadata

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
               files={"file": ("v1.xlf", b"<xliff version='1.2'><file><body><trans-unit>"
                                         b"<source>x</source></trans-unit></body></file></xliff>")}).json()
    assert "without an id" in bad["error"]["message"], bad
    assert len(call("GET", "/api/v1/projects").json()) == before
    print("foreign files roundtrip: ok")


if __name__ == "__main__":
    main(*sys.argv[1:])
