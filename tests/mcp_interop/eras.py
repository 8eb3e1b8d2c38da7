"""Both eras of MCP with the official Python SDK's `Client` (2.3).

Usage:
  python eras.py http URL            # default mode (probes: 2026-07-28), two
                                     # clients at once, and mode="legacy"
  python eras.py stdio QUIRE_BINARY  # mode="2026-07-28" and the default mode
                                     # over `quire mcp stdio`

Each client runs one flow: open a project, apply with its sessionId, read
the scene, see a page, export; the edit is recorded as the agent's, named
by the client. Over HTTP two stateless clients at once never see each
other's project (a call without sessionId is `session_required`), and
`subscriptions/listen` and a per-request log level are checked. Exits 0
when every check passed. Run by tests/it/mcp.rs.
"""

import base64
import json
import os
import sys

import anyio
from mcp import StdioServerParameters, types
from mcp.client import Client
from mcp.client.subscriptions import ResourceUpdated

from checks import check, run_checks
from interop import png, structured, tool_error


def client(server, mode, name, **kwargs):
    info = types.Implementation(name=name, version="1.0")
    return Client(server, mode=mode, client_info=info, **kwargs)


async def flow(c, project, name, stateless_http):
    """One client's work; returns its sessionId."""
    listed = await c.list_tools()
    tools = listed.tools
    check(len(tools) == 16, f"{name}: {len(tools)} tools")
    if c.session.protocol_version >= "2026-07-28":
        check(listed.ttl_ms == 3_600_000 and listed.cache_scope == "public", f"{name}: cache hints {listed}"[:300])
    names = [t.name for t in tools]
    check(names == [t.name for t in (await c.list_tools()).tools], f"{name}: tools/list order differs")
    opened = structured(await c.call_tool("quire_open_project", {"path": project, "createName": name}), "open")
    sid = opened["sessionId"]
    if stateless_http:
        err = tool_error(await c.call_tool("quire_get_scene", {}), "session_required", f"{name}: no sessionId")
        check("quire_open_project" in err["message"], f"{name}: {err}")
    page = {"type": "AddPage", "page": {"name": "p1", "nodes": [{"kind": {"type": "text", "text": "Hello"}}]}}
    created = structured(await c.call_tool("quire_apply", {"op": page, "sessionId": sid}), "apply")["created"]
    page_id, node_id = created[0], created[1]
    edit = {"type": "UpdateNode", "page": page_id, "id": node_id,
            "patch": {"kind": {"type": "text", "translation": "Bonjour"}}}
    structured(await c.call_tool("quire_apply", {"op": edit, "sessionId": sid}), "translate")
    scene = structured(await c.call_tool("quire_get_scene", {"sessionId": sid}), "scene")["scene"]
    kind = scene["pages"][0]["nodes"][0]["kind"]
    check(kind["translation"] == "Bonjour", f"{name}: {kind}")
    origin = kind.get("origin", {})
    check(origin.get("by") == "agent" and origin.get("client") == f"{name} 1.0", f"{name}: origin {origin}")
    data = base64.b64encode(png(60, 80)).decode()
    imported = structured(await c.call_tool("quire_import_pages", {
        "sessionId": sid, "items": [{"name": "scan.png", "mimeType": "image/png", "data": data}]}), "import")
    view = await c.call_tool("quire_view_page", {"sessionId": sid, "pageId": imported["created"][0]})
    check(any(b.type == "image" for b in view.content), f"{name}: no image in view")
    exported = structured(await c.call_tool("quire_export", {"sessionId": sid, "format": "markdown"}), "export")
    check(f"# {name}" in exported["text"] and "Bonjour" in exported["text"], f"{name}: {exported['text'][:200]}")
    return sid, page_id


async def two_at_once(url, root):
    """Two stateless clients: neither reaches the other's project."""
    async with client(url, "auto", "Alpha") as a, client(url, "auto", "Beta") as b:
        check(a.session.protocol_version == "2026-07-28", f"auto mode: {a.session.protocol_version}")
        sid_a, _ = await flow(a, f"{root}-alpha", "Alpha", True)
        sid_b, page_b = await flow(b, f"{root}-beta", "Beta", True)
        # Beta opened last; Alpha's call without sessionId is refused, not
        # applied to Beta's project.
        tool_error(await a.call_tool("quire_apply", {"op": {"type": "AddPage", "page": {"name": "stray"}}}),
                   "session_required", "Alpha without sessionId")
        pages = structured(await b.call_tool("quire_get_scene", {"sessionId": sid_b}), "beta scene")["scene"]["pages"]
        check(all(p["name"] != "stray" for p in pages), f"Alpha's edit reached Beta: {pages}")
        await listen_and_log(a, b, sid_b, page_b)


async def listen_and_log(a, b, sid_b, page_b):
    """`subscriptions/listen` tells of a change; a per-request log level
    brings the job's warnings on the call's stream."""
    uri = f"quire://sessions/{sid_b}/scene"
    async with a.listen(resource_subscriptions=[uri]) as sub:
        check(uri in (sub.honored.resource_subscriptions or []), f"listen honoured: {sub.honored}")
        rename = {"type": "UpdatePage", "id": page_b, "patch": {"name": "renamed"}}
        structured(await b.call_tool("quire_apply", {"op": rename, "sessionId": sid_b}), "rename")
        with anyio.fail_after(10):
            async for event in sub:
                if isinstance(event, ResourceUpdated) and str(event.uri) == uri:
                    break
    # Legacy-only subscribe says what to use instead.
    try:
        await b.session.subscribe_resource(uri)
        raise AssertionError("resources/subscribe answered in 2026-07-28")
    except Exception as e:  # MCPError
        check("subscriptions/listen" in str(e), f"subscribe: {e}")


async def logs(url, root):
    logged = []

    async def on_log(params):
        logged.append(params)

    async with client(url, "auto", "Logger", log_level="warning", logging_callback=on_log) as c:
        sid = structured(await c.call_tool("quire_open_project", {"path": f"{root}-logs", "createName": "L"}), "open")["sessionId"]
        page = {"type": "AddPage", "page": {"name": "p", "nodes": [{"kind": {"type": "text", "text": "Untranslated"}}]}}
        structured(await c.call_tool("quire_apply", {"op": page, "sessionId": sid}), "apply")
        qa = structured(await c.call_tool("quire_start_pipeline", {"steps": ["qa"], "wait": True, "sessionId": sid}), "qa")
        check(qa["warnings"], f"qa found nothing: {qa}")
        mine = [m.data for m in logged if isinstance(m.data, dict) and m.data.get("jobId") == qa["jobId"]]
        found = [m for m in mine if m.get("step")]
        loud = [w for w in qa["warnings"] if w["severity"] != "info"]
        check(len(found) == len(loud) and all(m["severity"] == "warning" for m in found),
              f"log messages {mine} for warnings {qa['warnings']}")
        check(any(m.get("status") == "completedWithErrors" for m in mine), f"no end message: {mine}")
        check(all(m.level == "warning" for m in logged), f"levels: {logged}")
    quiet = []

    async def on_quiet(params):
        quiet.append(params)

    async with client(url, "auto", "Quiet", log_level="error", logging_callback=on_quiet) as c:
        structured(await c.call_tool("quire_start_pipeline", {"steps": ["qa"], "wait": True, "sessionId": sid}), "qa")
        check(not quiet, f"warnings reached a client that asked for errors only: {quiet}")


async def approvals(url, root):
    """An engine that needs approval (the test's config has `gated`): a
    client that can ask its person does, and runs it on a yes; a no, or a
    client that cannot ask, is refused."""
    asked = []

    def person(answer):
        async def answer_it(context, params):
            asked.append(params.message)
            return types.ElicitResult(action="accept" if answer else "decline",
                                      content={"approve": True} if answer else None)
        return answer_it

    async with client(url, "auto", "Asker", elicitation_callback=person(True)) as c:
        sid = structured(await c.call_tool("quire_open_project", {"path": f"{root}-gated", "createName": "G"}), "open")["sessionId"]
        page = {"type": "AddPage", "page": {"name": "p", "nodes": [{"kind": {"type": "text", "text": "Hi"}}]}}
        structured(await c.call_tool("quire_apply", {"op": page, "sessionId": sid}), "apply")
        done = structured(await c.call_tool("quire_start_pipeline", {"steps": ["gated"], "wait": True, "sessionId": sid}), "gated")
        check(done["status"] == "completed", f"approved run: {done}")
        check(len(asked) == 1 and "gated" in asked[0] and "`true`" in asked[0], f"asked: {asked}")
    async with client(url, "auto", "Decliner", elicitation_callback=person(False)) as c:
        refused = await c.call_tool("quire_start_pipeline", {"steps": ["gated"], "sessionId": sid})
        tool_error(refused, "approval_required", "declined")
        check(len(asked) == 2, f"asked: {asked}")
    async with client(url, "auto", "Mute") as c:
        refused = await c.call_tool("quire_start_pipeline", {"steps": ["gated"], "sessionId": sid})
        tool_error(refused, "approval_required", "no one to ask")
        check(len(asked) == 2, f"asked without elicitation: {asked}")


async def main():
    transport, target = sys.argv[1], sys.argv[2]
    root = f"eras-{transport}-{os.getpid()}"
    if transport == "http":
        await two_at_once(target, root)
        await logs(target, root)
        await approvals(target, root)
        async with client(target, "legacy", "Legacy") as c:
            check(c.session.protocol_version < "2026-07-28", f"legacy: {c.session.protocol_version}")
            await flow(c, f"{root}-legacy", "Legacy", False)
    else:
        params = StdioServerParameters(command=target, args=["mcp", "stdio"], env=dict(os.environ))
        async with client(params, "2026-07-28", "Pinned") as c:
            await flow(c, f"{root}-pinned", "Pinned", False)
        async with client(params, "auto", "Probing") as c:
            check(c.session.protocol_version == "2026-07-28", f"auto over stdio: {c.session.protocol_version}")
            await flow(c, f"{root}-probing", "Probing", False)
    print(f"eras {transport}: ok")


if __name__ == "__main__":
    run_checks(main, "eras")
