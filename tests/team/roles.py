"""A team's roles over MCP, with the official Python SDK.

The read-only user's agent may list, read and view, and every tool that
changes something answers the tool error `forbidden_role` (nothing
changes); the editor's agent is refused marking a segment reviewed (the
same message as over HTTP) and applies a translation, which the scene
then records as that agent's, made for that user, and the history
resource names it so; it suggests a translation, votes for it and
accepts it, and the translation names who suggested it. A second
conversation of the same client cannot undo the first's steps.

Usage: roles.py MCP_URL READ_TOKEN EDIT_TOKEN SESSION_ID PAGE_ID NODE_ID
"""

import json
import sys

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

# Every tool that changes something (the role is checked before the
# arguments are read, so a session is all most need here).
WRITES = ["quire_apply", "quire_undo", "quire_redo", "quire_start_pipeline", "quire_export",
          "quire_import_pages", "quire_import_translations", "quire_cancel_job", "quire_close_project",
          "quire_suggestions"]


async def run(url, read_token, edit_token, session, page, node):
    headers = {"Authorization": f"Bearer {read_token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as mcp:
                await mcp.initialize()
                before = await mcp.call_tool("quire_get_scene", {"sessionId": session})
                assert not before.is_error, before
                calls = [(tool, {"sessionId": session}) for tool in WRITES]
                calls.append(("quire_open_project", {"path": "new-one", "createName": "New"}))
                for tool, args in calls:
                    result = await mcp.call_tool(tool, args)
                    text = json.dumps([c.model_dump() for c in result.content])
                    assert result.is_error and "forbidden_role" in text, (tool, text)
                    assert "needs the" in text and "rui has read" in text, (tool, text)
                after = await mcp.call_tool("quire_get_scene", {"sessionId": session})
                assert after.structured_content == before.structured_content, "a refused call changed the scene"
    headers = {"Authorization": f"Bearer {edit_token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            info = Implementation(name="team-agent", version="1.0")
            async with ClientSession(read, write, client_info=info) as mcp:
                await mcp.initialize()
                op = {"type": "UpdateNode", "page": page, "id": node,
                      "patch": {"kind": {"type": "text", "translation": "feito pelo agente"}}}
                # Marking it reviewed is a reviewer's: the same refusal
                # as over HTTP, and nothing changes.
                before = await mcp.call_tool("quire_get_scene", {"sessionId": session})
                review = {"type": "UpdateNode", "page": page, "id": node,
                          "patch": {"kind": {"type": "text", "state": "reviewed"}}}
                refused = await mcp.call_tool("quire_apply", {"sessionId": session, "op": review})
                text = json.dumps([c.model_dump() for c in refused.content])
                assert refused.is_error and "forbidden_role" in text, text
                assert "marking a segment reviewed needs the review role; ana has edit" in text, text
                after = await mcp.call_tool("quire_get_scene", {"sessionId": session})
                assert after.structured_content == before.structured_content, "a refused review changed the scene"
                result = await mcp.call_tool("quire_apply", {"sessionId": session, "op": op})
                assert not result.is_error, result
                # The history resource names the agent and its person.
                read = await mcp.read_resource(f"quire://sessions/{session}/history?agent=team-agent&limit=5")
                history = json.loads(read.contents[0].text)
                entry = history["entries"][0]
                assert entry["by"] == {"by": "agent", "user": "ana", "client": "team-agent 1.0"}, entry
                change = next(c for c in entry["changes"] if c["field"] == "translation")
                assert change["after"] == "feito pelo agente" and change["node"] == node, change
                # A suggestion, then accepted: the translation names both.
                args = {"sessionId": session, "nodeId": node}
                added = await mcp.call_tool("quire_suggestions", {**args, "action": "add", "text": "sugerido"})
                assert not added.is_error, added
                [mine] = added.structured_content["suggestions"]
                assert (mine["author"], mine["client"]) == ("ana", "team-agent 1.0"), mine
                voted = await mcp.call_tool("quire_suggestions", {**args, "action": "vote",
                                                                  "suggestionId": mine["id"], "value": 1})
                assert voted.structured_content["suggestions"][0]["voters"] == ["ana"], voted
                bad = await mcp.call_tool("quire_suggestions", {**args, "action": "vote", "suggestionId": mine["id"]})
                assert bad.is_error and "value is needed" in json.dumps(bad.model_dump()), bad
                accepted = await mcp.call_tool("quire_suggestions", {**args, "action": "accept",
                                                                     "suggestionId": mine["id"]})
                assert accepted.structured_content["suggestions"] == [], accepted
                scene = (await mcp.call_tool("quire_get_scene", {"sessionId": session})).structured_content
                kind = next(n["kind"] for p in scene["scene"]["pages"] for n in p["nodes"] if n["id"] == node)
                assert kind["translation"] == "sugerido", kind
                assert kind["origin"]["suggestedBy"] == "ana" and kind["origin"]["by"] == "agent", kind
                templates = await mcp.list_resource_templates()
                assert any(t.uri_template == "quire://sessions/{sessionId}/history"
                           for t in templates.resource_templates), templates
                # A second conversation of the same client is another agent:
                # its undo has nothing of its own, the first's takes back
                # the acceptance.
                async with streamable_http_client(url, http_client=http) as (read2, write2, *_):
                    async with ClientSession(read2, write2, client_info=info) as other:
                        await other.initialize()
                        nothing = await other.call_tool("quire_undo", {"sessionId": session})
                        assert nothing.structured_content["epoch"] is None, nothing
                        assert nothing.structured_content["message"] == "nothing of yours to undo", nothing
                undone = await mcp.call_tool("quire_undo", {"sessionId": session})
                assert undone.structured_content["epoch"] is not None, undone
    print("roles: ok")


if __name__ == "__main__":
    anyio.run(run, *sys.argv[1:7])
