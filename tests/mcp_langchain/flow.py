"""langchain-mcp-adapters in its default stdio mode, which starts a new
`quire mcp stdio` for every tool call: a `sessionId` one process returned
must be taken up by the next (`05-mcp.md`, "A session id outlives its
stdio process") until `quire_close_project` closes it.

Usage:
  python flow.py QUIRE_BINARY PROJECT_DIR

The environment (XDG dirs) names the data dir. Exits 0 when every step
of the flow passed, printing "langchain: ok"; otherwise prints the step.
"""

import asyncio
import json
import os
import sys

from langchain_core.tools import ToolException
from langchain_mcp_adapters.client import MultiServerMCPClient


def text_of(result):
    """The JSON the tool answered (its text block), however the adapter
    hands it over."""
    if isinstance(result, tuple):
        result = result[0]
    if isinstance(result, list):
        result = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in result)
    return json.loads(result)


async def main():
    binary, project = sys.argv[1], sys.argv[2]
    client = MultiServerMCPClient({
        "quire": {"command": binary, "args": ["mcp", "stdio"], "transport": "stdio", "env": dict(os.environ)},
    })
    tools = {t.name: t for t in await client.get_tools()}
    steps = 0

    async def call(name, args):
        nonlocal steps
        steps += 1
        try:
            return text_of(await tools[name].ainvoke(args))
        except Exception as e:
            raise AssertionError(f"step {steps} ({name}) failed: {type(e).__name__}: {e}") from e

    sid = (await call("quire_open_project", {"path": project, "createName": "Chain"}))["sessionId"]
    page = {"type": "AddPage", "page": {"name": "p1", "nodes": [{"kind": {"type": "text", "text": "Hello there"}}]}}
    created = (await call("quire_apply", {"op": page, "sessionId": sid}))["created"]
    assert created, "apply created nothing"
    scene = (await call("quire_get_scene", {"sessionId": sid}))["scene"]
    assert scene["pages"][0]["name"] == "p1", scene
    run = await call("quire_start_pipeline", {"steps": ["pseudo-translate"], "wait": True, "sessionId": sid})
    assert run["status"] == "completed", run
    scene = (await call("quire_get_scene", {"sessionId": sid}))["scene"]
    assert scene["pages"][0]["nodes"][0]["kind"]["translation"], scene
    exported = await call("quire_export", {"format": "markdown", "sessionId": sid})
    assert "Hello there" in json.dumps(exported), exported
    closed = await call("quire_close_project", {"sessionId": sid})
    assert closed["closed"] == sid, closed
    # Closed: the next process does not know the id any more.
    # (The adapter hands a tool error over as the answer's text, or, in
    # other versions, raises it.)
    try:
        answer = json.dumps(await tools["quire_get_scene"].ainvoke({"sessionId": sid}))
    except ToolException as e:
        answer = str(e)
    assert "unknown_session" in answer and "quire_open_project" in answer, f"a closed session: {answer}"
    print(f"langchain: ok ({steps} calls, one process each)")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as e:
        print(f"langchain check failed: {e}")
        sys.exit(1)
