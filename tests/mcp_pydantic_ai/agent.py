"""pydantic-ai's MCPToolset (FastMCP 4 client, with fastmcp-tasks, so the
client declares the tasks extension) against quire's `/mcp`: an agent,
scripted by a FunctionModel instead of a provider's model, opens a
project, adds a page, runs `quire_start_pipeline` with `wait: true` and
reads the scene. The pipeline's answer must be the finished job, not a
task (`05-mcp.md`, "Long jobs").

Usage:
  python agent.py URL      # …/mcp

Prints "pydantic-ai: ok" when every step passed; exits 1 otherwise.
"""

import asyncio
import json
import sys

import fastmcp_tasks  # noqa: F401  (the tasks extension the client declares)
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

returns = []


def returned(messages):
    """The tool returns the agent has seen, newest last."""
    seen = []
    for message in messages:
        for part in getattr(message, "parts", []):
            if isinstance(part, ToolReturnPart):
                seen.append((part.tool_name, part.content))
    return seen


def as_json(content):
    if isinstance(content, (dict, list)):
        return content
    return json.loads(content)


def script(messages, info: AgentInfo):
    seen = returned(messages)
    names = {t.name for t in info.function_tools}
    assert "quire_start_pipeline" in names, names
    if not seen:
        return ModelResponse(parts=[ToolCallPart("quire_open_project", {"path": "pydantic-ai", "createName": "Agent"})])
    name, content = seen[-1]
    data = as_json(content)
    returns.append((name, data))
    if name == "quire_open_project":
        page = {"type": "AddPage", "page": {"name": "p1", "nodes": [{"kind": {"type": "text", "text": "Hello"}}]}}
        return ModelResponse(parts=[ToolCallPart("quire_apply", {"op": page, "sessionId": data["sessionId"]})])
    sid = returns[0][1]["sessionId"]
    if name == "quire_apply":
        return ModelResponse(parts=[ToolCallPart("quire_start_pipeline", {
            "steps": ["pseudo-translate"], "wait": True, "sessionId": sid})])
    if name == "quire_start_pipeline":
        return ModelResponse(parts=[ToolCallPart("quire_get_scene", {"sessionId": sid})])
    return ModelResponse(parts=[TextPart("done")])


async def main():
    toolset = MCPToolset(sys.argv[1])
    agent = Agent(FunctionModel(script), toolsets=[toolset])
    result = await agent.run("Translate the page.")
    assert result.output == "done", result.output
    run = dict(returns)
    waited = run["quire_start_pipeline"]
    assert waited.get("status") == "completed" and "jobId" in waited, f"not the finished job: {waited}"
    scene = run["quire_get_scene"]["scene"]
    assert scene["pages"][0]["nodes"][0]["kind"]["translation"], scene
    print("pydantic-ai: ok")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as e:
        print(f"pydantic-ai check failed: {e}")
        sys.exit(1)
