"""Interop test of quire's MCP server with the official MCP Python SDK.

Usage:
  python interop.py stdio QUIRE_BINARY   # spawns `quire mcp stdio` (env passed through)
  python interop.py http URL             # connects to URL (…/mcp)

Exits 0 when every check passed; otherwise prints the failed check and
exits 1. Run by tests/it/mcp_interop.rs, which prepares a sandbox.
"""

import base64
import io
import json
import os
import re
import struct
import sys
import zlib

import anyio
from mcp import ClientSession, StdioServerParameters, types
from PIL import Image
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from checks import check, run_checks

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
EXPECTED_TOOLS = {
    "quire_open_project", "quire_close_project", "quire_apply", "quire_undo",
    "quire_redo", "quire_start_pipeline", "quire_list_sessions", "quire_get_scene",
    "quire_list_engines", "quire_get_job", "quire_cancel_job", "quire_export",
    "quire_view_page", "quire_import_pages", "quire_import_translations", "quire_suggestions",
}


def png(width, height):
    """A real RGB PNG (a colour gradient), drawn with the standard library."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    rows = b"".join(
        b"\x00" + b"".join(bytes((x % 256, y % 256, 128)) for x in range(width))
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


# What the server sent on its own: resource updates and log messages.
UPDATED = []
LOGGED = []


async def on_message(message):
    root = getattr(message, "root", message)
    if isinstance(root, types.ResourceUpdatedNotification):
        UPDATED.append(str(root.params.uri))


async def on_log(params):
    LOGGED.append(params)


async def until(predicate, what):
    with anyio.fail_after(10):
        while not predicate():
            await anyio.sleep(0.01)


async def protocol_error(session, tool, args, code, message_part):
    try:
        result = await session.call_tool(tool, args)
    except MCPError as e:
        check(e.error.code == code, f"{tool}: code {e.error.code} != {code} ({e.error.message})")
        check(message_part in e.error.message, f"{tool}: {e.error.message!r} lacks {message_part!r}")
        return
    raise AssertionError(f"{tool}: expected JSON-RPC {code}, got {result}")


def tool_error(result, code, what):
    """A tool execution error: isError, no structured content (the
    TypeScript SDK would validate it against the output schema), the
    message as the text's first line, the JSON envelope as its second."""
    check(result.is_error, f"{what}: not isError: {result}")
    check(result.structured_content is None, f"{what}: structured content on an error")
    first, envelope = result.content[0].text.split("\n", 1)
    err = json.loads(envelope)["error"]
    check(err["code"] == code, f"{what}: code {err['code']} != {code} ({err['message']})")
    check(err["message"] and first == err["message"].replace("\n", " "), f"{what}: first line {first!r}")
    return err


def structured(result, what):
    check(not result.is_error, f"{what}: isError {result}")
    check(result.structured_content is not None, f"{what}: no structuredContent")
    text = json.loads(result.content[0].text)
    check(text == result.structured_content, f"{what}: text block differs from structuredContent")
    return result.structured_content


async def run(session, transport):
    await session.initialize()
    tools = (await session.list_tools()).tools
    names = {t.name for t in tools}
    check(names == EXPECTED_TOOLS, f"tools: {sorted(names)}")
    for t in tools:
        check(NAME.match(t.name), f"tool name {t.name!r} breaks ^[a-zA-Z0-9_-]{{1,64}}$")
        check(t.input_schema.get("type") == "object", f"{t.name}: input schema is not an object")
        check(t.output_schema and t.output_schema.get("type") == "object", f"{t.name}: no object output schema")
        check(t.description, f"{t.name}: no description")
    apply_schema = next(t for t in tools if t.name == "quire_apply").input_schema
    check("op" in apply_schema["properties"] and "op" in apply_schema.get("required", []), "quire_apply: op is required")

    # Nothing open yet: tool errors a model can read.
    none = tool_error(await session.call_tool("quire_get_scene", {}), "no_session", "get scene, none open")
    check(none["message"] == "no project is open", f"no session: {none}")
    tool_error(await session.call_tool("quire_undo", {}), "no_session", "undo, none open")
    unknown = tool_error(
        await session.call_tool("quire_get_scene", {"sessionId": "0190d2a0-0000-7000-8000-000000000001"}),
        "unknown_session", "unknown session")
    check(unknown["id"] == "0190d2a0-0000-7000-8000-000000000001", f"unknown session: {unknown}")

    # Schema misfits name the field; an unknown tool is a protocol error.
    misfit = tool_error(await session.call_tool("quire_apply", {"op": {"type": "Teleport"}}), "invalid_arguments", "Teleport")
    check("Teleport" in misfit["message"] and misfit["field"].startswith("op"), f"misfit: {misfit}")
    tool_error(await session.call_tool("quire_open_project", {"nope": 1}), "invalid_arguments", "unknown field")
    await protocol_error(session, "quire_teleport", {}, -32602, "quire_teleport")

    # Paths: `..` never climbs out.
    refused = await session.call_tool("quire_open_project", {"path": "../outside", "createName": "X"})
    tool_error(refused, "invalid_input", "open ../outside")

    opened = structured(await session.call_tool("quire_open_project", {"path": f"interop-{transport}", "createName": "Interop"}), "create")
    session_id = opened["sessionId"]
    check(opened["name"] == "Interop", f"opened: {opened}")

    sessions = structured(await session.call_tool("quire_list_sessions", {}), "list sessions")
    check(any(s["id"] == session_id for s in sessions["sessions"]), "session listed")

    # Apply a page with text, then a Batch.
    page = {"type": "AddPage", "page": {"name": "p1", "nodes": [
        {"kind": {"type": "text", "text": "Hello {0}", "sourceLang": "en"}},
        {"kind": {"type": "text", "text": "Good night"}},
    ]}}
    applied = structured(await session.call_tool("quire_apply", {"op": page}), "apply AddPage")
    check(applied["epoch"] == 1 and len(applied["created"]) == 3, f"apply: {applied}")
    page_id = applied["created"][0]
    batch = {"type": "Batch", "label": "two more", "ops": [
        {"type": "AddPage", "page": {"name": "p2"}},
        {"type": "UpdatePage", "id": page_id, "patch": {"name": "first"}},
    ]}
    applied = structured(await session.call_tool("quire_apply", {"op": batch}), "apply Batch")
    check(applied["epoch"] == 2 and len(applied["created"]) == 1, f"batch: {applied}")

    # A bad op is a tool error and changes nothing.
    bad = await session.call_tool("quire_apply", {"op": {"type": "RemovePage", "id": "0190d2a0-0000-7000-8000-000000000009"}})
    tool_error(bad, "invalid_op", "bad op")
    scene = structured(await session.call_tool("quire_get_scene", {}), "get scene")
    check(scene["epoch"] == 2, f"epoch after bad op: {scene['epoch']}")

    # Undo / redo, including the null boundary.
    check(structured(await session.call_tool("quire_undo", {}), "undo")["epoch"] == 3, "undo 1")
    check(structured(await session.call_tool("quire_undo", {}), "undo")["epoch"] == 4, "undo 2")
    check(structured(await session.call_tool("quire_undo", {}), "undo")["epoch"] is None, "undo at boundary")
    check(structured(await session.call_tool("quire_redo", {}), "redo")["epoch"] == 5, "redo 1")
    check(structured(await session.call_tool("quire_redo", {"sessionId": session_id}), "redo")["epoch"] == 6, "redo 2")
    check(structured(await session.call_tool("quire_redo", {}), "redo")["epoch"] is None, "redo at boundary")

    engines = structured(await session.call_tool("quire_list_engines", {}), "engines")["engines"]
    check({"pseudo-translate", "qa", "llm-translate"} <= {e["id"] for e in engines}, f"engines: {engines}")

    # Unknown step: a tool error, no job.
    unknown = await session.call_tool("quire_start_pipeline", {"steps": ["nope"]})
    tool_error(unknown, "invalid_input", "unknown step")

    # A pipeline with wait and progress.
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    done = await session.call_tool(
        "quire_start_pipeline", {"steps": ["pseudo-translate", "qa"], "wait": True}, progress_callback=on_progress
    )
    done = structured(done, "pipeline")
    check(done["status"] == "completed", f"pipeline: {done}")
    check(done["warnings"] == [], f"warnings: {done['warnings']}")
    check(progress, "no progress notifications")
    check(progress[-1][0] == 100.0 and progress[-1][1] == 100.0, f"progress: {progress}")
    values = [p[0] for p in progress]
    check(all(a < b for a, b in zip(values, values[1:])), f"progress must strictly increase: {values}")
    job = structured(await session.call_tool("quire_get_job", {"jobId": done["jobId"]}), "get job")
    check(job["status"] == "completed", f"job: {job}")
    cancelled = structured(await session.call_tool("quire_cancel_job", {"jobId": done["jobId"]}), "cancel")
    check(cancelled["cancelled"] is False, "a finished job is not cancelled")

    scene = structured(await session.call_tool("quire_get_scene", {"pages": [page_id]}), "scene")
    check(len(scene["scene"]["pages"]) == 1, "filtered pages")
    texts = [n["kind"] for n in scene["scene"]["pages"][0]["nodes"]]
    check(all(k["translation"].startswith("[") for k in texts), f"translations: {texts}")
    check("{0}" in texts[0]["translation"], "placeholder kept")

    # An image page in, then seen: the image as image content, boxes in its pixels.
    data = base64.b64encode(png(300, 400)).decode()
    imported = structured(await session.call_tool("quire_import_pages", {
        "items": [{"name": "scan-1.png", "mimeType": "image/png", "data": data}]}), "import pages")
    image_page = imported["created"][0]
    structured(await session.call_tool("quire_apply", {"op": {"type": "AddNode", "page": image_page, "node": {
        "kind": {"type": "text", "text": "Boxed"}, "transform": {"x": 30, "y": 40, "width": 90, "height": 20}}}}), "add box")
    view = await session.call_tool("quire_view_page", {"pageId": image_page, "maxSide": 200})
    seen = structured(view, "view page")
    images = [c for c in view.content if c.type == "image"]
    check(images and images[0].mime_type == "image/jpeg", f"view: {[c.type for c in view.content]}")
    check(base64.b64decode(images[0].data)[:2] == b"\xff\xd8", "a JPEG")
    check((seen["image"]["width"], seen["image"]["height"]) == (150, 200), f"scaled: {seen['image']}")
    boxed = next(n for n in seen["nodes"] if n.get("text") == "Boxed")
    check(boxed["box"] == {"x": 15.0, "y": 20.0, "width": 45.0, "height": 10.0}, f"box: {boxed}")
    tool_error(await session.call_tool("quire_view_page", {"pageId": page_id}), "invalid_input", "view a text page")
    # Lettering through quire_apply: the box's own and the project's house
    # style; a weight out of range is refused and changes nothing.
    lettering = {"fontWeight": 400, "italic": True, "align": "right", "stroke": "#ffffff"}
    structured(await session.call_tool("quire_apply", {"op": {"type": "UpdateNode", "page": image_page, "id": boxed["id"],
        "patch": {"kind": {"type": "text", "style": lettering}}}}), "block lettering")
    structured(await session.call_tool("quire_apply", {"op": {"type": "UpdateProject",
        "patch": {"style": {"fontFamily": "Comic Neue", "fontSize": 24}}}}), "house style")
    bad_weight = await session.call_tool("quire_apply", {"op": {"type": "UpdateNode", "page": image_page, "id": boxed["id"],
        "patch": {"kind": {"type": "text", "style": {"fontWeight": 1000}}}}})
    check("100 (thin) to 900" in tool_error(bad_weight, "invalid_op", "weight 1000")["message"], "weight 1000 named")
    lettered = structured(await session.call_tool("quire_get_scene", {"pages": [image_page]}), "scene")["scene"]
    check(lettered["project"]["style"] == {"fontFamily": "Comic Neue", "fontSize": 24}, f"house style: {lettered['project']}")
    styled = next(n for n in lettered["pages"][0]["nodes"] if n["id"] == boxed["id"])
    check(styled["kind"]["style"] == lettering, f"block style: {styled['kind']}")
    # Its balloon outlined on request (magenta on the gradient); no
    # cleaned image before `clean` ran, and the error says so.
    region = [[20, 30], [130, 30], [130, 70], [20, 70]]
    structured(await session.call_tool("quire_apply", {"op": {"type": "UpdateNode", "page": image_page, "id": boxed["id"],
        "patch": {"kind": {"type": "text", "region": region}}}}), "set a region")
    outlined = await session.call_tool("quire_view_page", {"pageId": image_page, "maxSide": 200, "regions": True})
    structured(outlined, "view with regions")
    picture = Image.open(io.BytesIO(base64.b64decode(next(c for c in outlined.content if c.type == "image").data)))
    r, g, b = picture.convert("RGB").getpixel((40, 15))
    check(r > 180 and g < 90 and b > 60, f"the region's top edge at (40, 15) is {(r, g, b)}")
    plain = Image.open(io.BytesIO(base64.b64decode(images[0].data))).convert("RGB").getpixel((40, 15))
    check(plain[0] < 150, f"no outline without regions: {plain}")
    err = tool_error(await session.call_tool("quire_view_page", {"pageId": image_page, "view": "cleaned"}),
                     "invalid_input", "view a page not cleaned")
    check("run clean" in err["message"], err["message"])

    # Resources, subscriptions, prompts, completion, logging.
    scene_uri = f"quire://sessions/{session_id}/scene"
    listed = await session.list_resources()
    check(any(str(r.uri) == scene_uri for r in listed.resources), f"resources: {listed}")
    templates = await session.list_resource_templates()
    check(len(templates.resource_templates) == 6, f"templates: {templates}")
    read = await session.read_resource(scene_uri)
    check(json.loads(read.contents[0].text)["scene"]["pages"], "scene resource")
    # The desk's lookups as resources: a node's matches, concordance.
    first_node = scene["scene"]["pages"][0]["nodes"][0]["id"]
    matches = await session.read_resource(f"quire://sessions/{session_id}/nodes/{first_node}/matches")
    check(json.loads(matches.contents[0].text)["matches"] == [], f"matches: {matches}")
    found = await session.read_resource(f"quire://sessions/{session_id}/concordance/hello%20world")
    check("matches" in json.loads(found.contents[0].text), f"concordance: {found}")
    try:
        await session.read_resource(f"quire://sessions/{session_id}/concordance/%20")
        raise AssertionError("a concordance of no words was read")
    except MCPError as e:
        check(e.error.code == -32602, f"no words: {e.error}")
    await session.subscribe_resource(scene_uri)
    structured(await session.call_tool("quire_apply", {"op": {"type": "UpdatePage", "id": image_page, "patch": {"name": "scan 1"}}}), "rename")
    await until(lambda: scene_uri in UPDATED, "notifications/resources/updated")
    try:
        await session.read_resource("quire://sessions/nope/scene")
        raise AssertionError("a malformed URI was read")
    except MCPError as e:
        check(e.error.code == -32602, f"malformed URI: {e.error}")
    prompt = await session.get_prompt("review_qa", {"sessionId": session_id})
    check("quire_start_pipeline" in prompt.messages[0].content.text, f"prompt: {prompt}")
    done = await session.complete(types.PromptReference(type="ref/prompt", name="review_qa"), {"name": "sessionId", "value": ""})
    check(session_id in done.completion.values, f"completion: {done}")
    await session.set_logging_level("warning")
    structured(await session.call_tool("quire_apply", {"op": {"type": "AddNode", "page": image_page, "node": {"kind": {"type": "text", "text": "Untranslated"}}}}), "add node")
    qa = structured(await session.call_tool("quire_start_pipeline", {"steps": ["qa"], "wait": True}), "qa")
    mine = lambda: [m for m in LOGGED if isinstance(m.data, dict) and m.data.get("jobId") == qa["jobId"] and m.data.get("step")]
    # (A step's notes, severity info, are below the level asked for.)
    loud = [w for w in qa["warnings"] if w["severity"] != "info"]
    await until(lambda: len(mine()) == len(loud), "a log message per QA warning")
    check(all(m.level == "warning" for m in mine()), f"levels: {mine()}")

    # XLIFF out and back in: a reviewer's target and state merge; a unit
    # whose source changed here is a conflict, applied only when its unit
    # is named in take (force overrides the languages, never a conflict).
    xliff = structured(await session.call_tool("quire_export", {"format": "xliff", "pages": [page_id]}), "export xliff")["text"]
    node = scene["scene"]["pages"][0]["nodes"][0]["id"]
    other = scene["scene"]["pages"][0]["nodes"][1]["id"]
    reviewed = re.sub(rf'(<unit id="n{node}">.*?<segment state=")[a-z]+("[^>]*>.*?<target[^>]*>)[^<]*',
                      r"\g<1>final\g<2>Revu", xliff, flags=re.S)
    reviewed = re.sub(rf'(<unit id="n{other}">.*?<target[^>]*>)[^<]*', r"\g<1>Autre", reviewed, flags=re.S)
    check(reviewed.count("Revu") == 1 and reviewed.count("Autre") == 1, "the reviewer's edits")
    structured(await session.call_tool("quire_apply", {"op": {"type": "UpdateNode", "page": page_id, "id": other,
        "patch": {"kind": {"type": "text", "text": "Changed source"}}}}), "change a source")
    report = structured(await session.call_tool("quire_import_translations", {"content": reviewed}), "import xliff")
    check(report["updated"] == 1 and [c["nodeId"] for c in report["conflicts"]] == [other], f"report: {report}")
    page = structured(await session.call_tool("quire_get_scene", {"pages": [page_id]}), "scene")["scene"]["pages"][0]
    merged = next(n["kind"] for n in page["nodes"] if n["id"] == node)
    check(merged["translation"] == "Revu" and merged["state"] == "final", f"merged: {merged}")
    forced = structured(await session.call_tool("quire_import_translations", {"content": reviewed, "force": True}), "forced")
    check(forced["updated"] == 0 and not forced["conflicts"][0]["applied"], f"forced: {forced}")
    unit = forced["conflicts"][0]["unit"]
    taken = structured(await session.call_tool("quire_import_translations", {"content": reviewed, "take": [unit]}), "taken")
    check(taken["updated"] == 1 and taken["conflicts"][0]["applied"], f"taken: {taken}")
    undone = structured(await session.call_tool("quire_undo", {}), "undo the import")
    check(undone["label"].startswith("import XLIFF"), f"undo: {undone}")
    tool_error(await session.call_tool("quire_import_translations", {"content": "<xliff version='1.2'/>"}),
               "invalid_input", "XLIFF 1.2")

    md = structured(await session.call_tool("quire_export", {"format": "markdown"}), "export markdown")
    check(md["mediaType"].startswith("text/markdown") and "# Interop" in md["text"], f"markdown: {md}")
    archive = await session.call_tool("quire_export", {"format": "archive"})
    meta = structured(archive, "export archive")
    check(meta["mediaType"] == "application/zip", f"archive: {meta}")
    blobs = [c for c in archive.content if c.type == "resource"]
    check(blobs and blobs[0].resource.mime_type == "application/zip", "archive is an embedded resource")
    if transport == "stdio":
        # The archive opens again as a copy: a new project, a new session.
        copy_path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"interop-{os.getpid()}.quire.zip")
        with open(copy_path, "wb") as f:
            f.write(base64.b64decode(blobs[0].resource.blob))
        copy = structured(await session.call_tool("quire_open_project", {"path": copy_path}), "open an archive")
        os.remove(copy_path)
        check(copy["sessionId"] != session_id and copy["name"] == "Interop", f"copy: {copy}")
        structured(await session.call_tool("quire_close_project", {"sessionId": copy["sessionId"]}), "close the copy")
    if transport == "http":
        refused = await session.call_tool("quire_export", {"format": "json", "outPath": "/tmp/x.json"})
        tool_error(refused, "invalid_input", "outPath over http")
        outside = await session.call_tool("quire_open_project", {"path": "/tmp"})
        tool_error(outside, "invalid_input", "absolute path outside projects over http")

    closed = structured(await session.call_tool("quire_close_project", {"sessionId": session_id}), "close")
    check(closed["closed"] == session_id, "closed")
    tool_error(await session.call_tool("quire_get_scene", {}), "no_session", "after close")


async def main():
    transport = sys.argv[1]
    if transport == "stdio":
        params = StdioServerParameters(command=sys.argv[2], args=["mcp", "stdio"], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, message_handler=on_message, logging_callback=on_log) as session:
                await run(session, transport)
    else:
        async with streamable_http_client(sys.argv[2]) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write, message_handler=on_message, logging_callback=on_log) as session:
                await run(session, transport)
    print(f"interop {transport}: ok")


if __name__ == "__main__":
    run_checks(main, "interop")
