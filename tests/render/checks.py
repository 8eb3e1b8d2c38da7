"""The render engine and the page exports over MCP, read by independent code.

Usage: python checks.py URL OUT_DIR

With the official MCP Python SDK over URL/mcp: a project, an image page
(drawn here) with two boxes and their translations, `render` run with
`wait`, the page's rendered image seen in the scene, then `quire_export`
as cbz (JPEG pages) and pdf returned inline. ComicTagger's `comicapi`
reads the CBZ: a comic archive with the pages in order and a
ComicInfo.xml that says the title, series, number, page count, language
and reading direction. The PDF starts with `%PDF-`.
Prints "render: ok"; run by tests/it/render.rs.
"""

import base64
import os
import struct
import sys
import zlib

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def png(width, height):
    """A light page with two white rectangles, drawn with the standard library."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    rows = []
    for y in range(height):
        row = bytearray(b"\x00")
        for x in range(width):
            inside = (40 <= x < 360 and 40 <= y < 140) or (40 <= x < 360 and 260 <= y < 360)
            row += bytes((250, 250, 250) if inside else (170, 190, 60 + y % 100))
        rows.append(bytes(row))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b""))


def check(ok, what):
    if not ok:
        raise SystemExit(f"render: FAILED: {what}")


def structured(result, what):
    check(not result.is_error, f"{what}: {result}")
    return result.structured_content


async def run(url, out):
    async with streamable_http_client(f"{url}/mcp") as (read, write, *_):
        async with ClientSession(read, write) as mcp:
            await mcp.initialize()
            opened = structured(await mcp.call_tool(
                "quire_open_project", {"path": "rendered", "createName": "Render check"}), "create")
            sid = opened["sessionId"]
            structured(await mcp.call_tool("quire_apply", {"sessionId": sid, "op": {
                "type": "UpdateProject", "patch": {"targetLanguage": "es", "readingDirection": "rtl",
                "series": "Render tales", "number": "7"}}}), "language")
            for name in ("p1.png", "p2.png"):
                imported = structured(await mcp.call_tool("quire_import_pages", {"sessionId": sid, "items": [
                    {"name": name, "mimeType": "image/png", "data": base64.b64encode(png(400, 400)).decode()}]}),
                    "import")
                page = imported["created"][0]
                for i, (y, text) in enumerate([(40, "¿Adónde vamos?"), (260, "Al mar.")]):
                    structured(await mcp.call_tool("quire_apply", {"sessionId": sid, "op": {
                        "type": "AddNode", "page": page, "node": {
                            "transform": {"x": 40, "y": y, "width": 320, "height": 100},
                            "kind": {"type": "text", "text": f"source {i}", "translation": text}}}}), "box")
            job = structured(await mcp.call_tool(
                "quire_start_pipeline", {"sessionId": sid, "steps": ["render"], "wait": True}), "render")
            check(job["status"] == "completed", f"render: {job}")
            scene = structured(await mcp.call_tool("quire_get_scene", {"sessionId": sid}), "scene")
            roles = [[n["kind"].get("role") for n in p["nodes"] if n["kind"]["type"] == "image"]
                     for p in scene["scene"]["pages"]]
            check(roles == [["source", "rendered"], ["source", "rendered"]], f"rendered nodes: {roles}")
            files = {}
            for fmt, images in (("cbz", {"imageFormat": "jpeg", "quality": 80}), ("pdf", {})):
                result = await mcp.call_tool("quire_export", {"sessionId": sid, "format": fmt, **images})
                meta = structured(result, f"export {fmt}")
                blobs = [c for c in result.content if c.type == "resource"]
                check(blobs, f"{fmt}: the export is an embedded resource")
                path = os.path.join(out, meta["fileName"])
                with open(path, "wb") as f:
                    f.write(base64.b64decode(blobs[0].resource.blob))
                files[fmt] = (path, meta)
            return files


def main():
    url, out = sys.argv[1:3]
    os.makedirs(out, exist_ok=True)
    files = anyio.run(run, url, out)
    path, meta = files["cbz"]
    check(meta["mediaType"] == "application/vnd.comicbook+zip", f"cbz media type: {meta}")
    import comicapi.comicarchive as ca
    archive = ca.ComicArchive(path)
    check(archive.seems_to_be_a_comic_archive(), "comicapi: not a comic archive")
    check(archive.get_number_of_pages() == 2, f"pages: {archive.get_page_name_list()}")
    check(archive.get_page_name_list() == ["001.jpg", "002.jpg"], f"order: {archive.get_page_name_list()}")
    check(archive.has_cix(), "comicapi: no ComicInfo.xml")
    info = archive.read_cix()
    check(info.title == "Render check", f"title: {info.title}")
    check(info.page_count == 2, f"page count: {info.page_count}")
    check(info.language == "es", f"language: {info.language}")
    check((info.series, info.issue) == ("Render tales", "7"), f"series: {info.series} #{info.issue}")
    check(info.manga == "YesAndRightToLeft", f"manga: {info.manga}")
    check([int(p["Image"]) for p in info.pages] == [0, 1], f"pages: {info.pages}")
    check(all(p["ImageWidth"] == "400" for p in info.pages), f"sizes: {info.pages}")
    for i in range(2):
        page = archive.get_page(i)
        check(page[:3] == b"\xff\xd8\xff", f"page {i} is a JPEG")
    path, meta = files["pdf"]
    with open(path, "rb") as f:
        check(f.read(5) == b"%PDF-", "a PDF")
    print("render: ok")


if __name__ == "__main__":
    main()
