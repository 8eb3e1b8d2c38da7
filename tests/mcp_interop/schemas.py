"""Every tool's input schema converts, without fallback, for the model
providers agents use: OpenAI strict function calling (`openai-agents`'
`ensure_strict_json_schema`) and Gemini function declarations
(`google-genai`'s `Schema.from_json_schema`, unsupported fields raising,
and its MCP converter `mcp_to_gemini_tools` over the whole list at once),
as a client of each era lists them.

Usage:
  python schemas.py QUIRE_BINARY      # lists the tools of `quire mcp stdio`

Prints the size of each era's tool list and "schemas: ok"; exits 1 with
every failure otherwise. Run by tests/it/mcp_ts.rs.
"""

import asyncio
import copy
import json
import os
import sys

from agents.strict_schema import ensure_strict_json_schema
from google.genai import _mcp_utils, types
from mcp import StdioServerParameters
from mcp import types as mcp_types
from mcp.client import Client


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


async def list_tools(binary, mode):
    """The tools of `quire mcp stdio` as a client of one era sees them."""
    params = StdioServerParameters(command=binary, args=["mcp", "stdio"], env=dict(os.environ))
    info = mcp_types.Implementation(name=f"schemas-{mode}", version="1.0")
    async with Client(params, mode=mode, client_info=info) as c:
        if mode == "legacy":
            assert c.session.protocol_version < "2026-07-28", c.session.protocol_version
        else:
            assert c.session.protocol_version == "2026-07-28", c.session.protocol_version
        return (await c.list_tools()).tools


def gemini_session(tools):
    """What `generate_content(tools=[session])` and the Live API do: the
    whole list in one call, so one tool it cannot read loses them all."""
    converted = _mcp_utils.mcp_to_gemini_tools(tools)
    names = [d.name for t in converted for d in t.function_declarations]
    assert names == [t.name for t in tools], f"converted {names}"


def main():
    failures = []
    for mode in ("legacy", "2026-07-28"):
        tools = asyncio.run(list_tools(sys.argv[1], mode))
        size = len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools], separators=(",", ":")).encode())
        print(f"tools/list ({mode}): {len(tools)} tools, {size} bytes")
        try:
            gemini_session(tools)
        except Exception as e:
            failures.append(f"{mode}: the whole list (gemini mcp_to_gemini_tools): {type(e).__name__}: {e}")
        for tool in tools:
            for provider, convert in (("openai-strict", openai_strict), ("gemini", gemini)):
                try:
                    convert(tool.input_schema)
                except Exception as e:  # every failure is reported, not only the first
                    failures.append(f"{mode}: {tool.name} ({provider}): {type(e).__name__}: {e}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("schemas: ok")


if __name__ == "__main__":
    main()
