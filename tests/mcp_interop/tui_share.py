"""The official MCP Python SDK against `quire mcp tui --endpoint PATH`.

Usage: python tui_share.py QUIRE_BINARY ENDPOINT_JSON SESSION_ID
Moves the shared TUI to SESSION_ID and checks the tools' contract on the
way. Exits 0 when every check passed.
"""

import json
import os
import sys
import uuid

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from checks import check, run_checks
from schemas import gemini, gemini_session, openai_strict


def outcome(result, what):
    data = result.structured_content
    check(data is not None, f"{what}: no structuredContent")
    check(json.loads(result.content[0].text) == data, f"{what}: text differs")
    check(result.is_error == (not data["ok"]), f"{what}: isError {result.is_error} vs ok {data['ok']}")
    return data


async def quiet_context(session):
    while True:
        data = outcome(await session.call_tool("get_view_context", {}), "get_view_context")
        ctx = data["context"]
        if "recent_input" in ctx["blockedReasons"]:
            await anyio.sleep(ctx["retryAfterMs"] / 1000)
            continue
        return ctx


async def run(session, target):
    await session.initialize()
    tools = (await session.list_tools()).tools
    check({t.name for t in tools} == {"get_view_context", "select_session"}, f"tools: {[t.name for t in tools]}")
    select = next(t for t in tools if t.name == "select_session")
    required = set(select.input_schema.get("required", []))
    check(required == {"instance", "generation", "revision", "sessionId", "requestId"}, f"required: {required}")
    check("timeout_unknown" in select.description and "get_view_context" in select.description, "reconcile advice")

    ctx = await quiet_context(session)
    check(ctx["route"] == "home", f"route: {ctx}")
    check(not ctx["navigationBlocked"], f"blocked: {ctx}")
    args = {
        "instance": ctx["instance"], "generation": ctx["generation"], "revision": ctx["revision"] - 1,
        "sessionId": target, "requestId": str(uuid.uuid4()),
    }
    # The adapter's tools convert for the model providers as the
    # workspace's do (schemas.py: OpenAI strict as the Agents SDK runs it,
    # Gemini, one by one and the whole list at once as its MCP path does).
    for t in tools:
        openai_strict(t.input_schema)
        gemini(t.input_schema)
    gemini_session(tools)

    # Annotations true under the spec's defaults: reading is read-only;
    # moving the view loses nothing and a repeat changes nothing.
    context_tool = next(t for t in tools if t.name == "get_view_context")
    check(context_tool.annotations and context_tool.annotations.read_only_hint is True, f"{context_tool.annotations}")
    hints = select.annotations
    check(hints and hints.destructive_hint is False and hints.idempotent_hint is True, f"select hints: {hints}")
    # A malformed sessionId is the model's to correct: a tool error.
    bad = outcome(await session.call_tool("select_session", {**args, "sessionId": "not-a-uuid"}), "bad sessionId")
    check(bad["code"] == "invalid_arguments" and "sessionId" in bad["message"], f"bad sessionId: {bad}")

    stale = outcome(await session.call_tool("select_session", args), "stale select")
    check(stale["code"] == "stale_revision" and stale["context"]["revision"] == ctx["revision"], f"stale: {stale}")

    args["revision"] = ctx["revision"]
    args["requestId"] = str(uuid.uuid4())
    done = outcome(await session.call_tool("select_session", args), "select")
    check(done["ok"] and done["receipt"]["sessionId"] == target, f"select: {done}")
    check(done["receipt"]["route"] == "session", f"receipt: {done}")
    again = outcome(await session.call_tool("select_session", args), "repeat")
    check(again == done, "an identical repeat answers the original receipt")
    ctx = (outcome(await session.call_tool("get_view_context", {}), "context"))["context"]
    check(ctx["route"] == "session" and ctx["sessionId"] == target, f"after: {ctx}")
    check(ctx["navigationsUsed"] == 2, f"used: {ctx}")


async def main():
    binary, endpoint, target = sys.argv[1], sys.argv[2], sys.argv[3]
    params = StdioServerParameters(command=binary, args=["mcp", "tui", "--endpoint", endpoint], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await run(session, target)
    print("tui share: ok")


if __name__ == "__main__":
    run_checks(main, "tui share")
