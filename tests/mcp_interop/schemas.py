"""Every tool's input schema converts, without fallback, for the model
providers agents use: OpenAI strict function calling (`openai-agents`'
`ensure_strict_json_schema`) and Gemini function declarations
(`google-genai`'s `Schema.from_json_schema`, unsupported fields raising).

Usage:
  python schemas.py QUIRE_BINARY      # lists the tools of `quire mcp stdio`

Prints the size of the tools/list reply and "schemas: ok"; exits 1 with
every failure otherwise. Run by tests/it/mcp_ts.rs.
"""

import asyncio
import copy
import json
import os
import sys

from agents.strict_schema import ensure_strict_json_schema
from google.genai import types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def openai_strict(schema):
    # As agents/mcp/util.py converts MCP tools: an open object or a bare
    # `$ref` it has not validated is refused, not guessed at.
    strict = ensure_strict_json_schema(copy.deepcopy(schema), _reject_open_objects=True)
    # The conversion must not have needed to guess: every object closed,
    # every property required.
    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "object" or "properties" in node:
                assert node.get("additionalProperties") is False, f"open object {node}"
                assert set(node.get("required", [])) == set(node.get("properties", {})), f"optional property in {node}"
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(strict)


def gemini(schema):
    types.Schema.from_json_schema(
        json_schema=types.JSONSchema.model_validate(copy.deepcopy(schema)),
        api_option="GEMINI_API",
        raise_error_on_unsupported_field=True,
    )
    # What Gemini is handed directly (parameters_json_schema) must be a
    # valid FunctionDeclaration too.
    types.FunctionDeclaration(name="t", description="d", parameters_json_schema=copy.deepcopy(schema))


async def list_tools(binary):
    params = StdioServerParameters(command=binary, args=["mcp", "stdio"], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            return listed.model_dump(mode="json", by_alias=True, exclude_none=True)


def main():
    listed = asyncio.run(list_tools(sys.argv[1]))
    size = len(json.dumps(listed, separators=(",", ":")).encode())
    print(f"tools/list: {len(listed['tools'])} tools, {size} bytes")
    failures = []
    for tool in listed["tools"]:
        for provider, convert in (("openai-strict", openai_strict), ("gemini", gemini)):
            try:
                convert(tool["inputSchema"])
            except Exception as e:  # every failure is reported, not only the first
                failures.append(f"{tool['name']} ({provider}): {type(e).__name__}: {e}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("schemas: ok")


if __name__ == "__main__":
    main()
