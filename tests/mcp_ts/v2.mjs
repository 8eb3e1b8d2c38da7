// quire's MCP server with the official TypeScript client v2
// (@modelcontextprotocol/client), pinned to protocol 2026-07-28: no
// initialize, per-request metadata, every call naming its session.
//
// Usage:
//   node v2.mjs stdio QUIRE_BINARY   # spawns `quire mcp stdio` (env passed through)
//   node v2.mjs http URL             # connects to URL (…/mcp)
//
// Prints "v2 TRANSPORT: ok" and exits 0 when every check passed; otherwise
// prints the failed check and exits 1. Run by tests/it/mcp_ts.rs.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [transportName, target] = process.argv.slice(2);

function check(ok, what) {
  if (!ok) throw new Error(`check failed: ${what}`);
}

function structured(result, what) {
  check(!result.isError, `${what}: isError ${JSON.stringify(result)}`);
  check(result.structuredContent, `${what}: no structuredContent`);
  return result.structuredContent;
}

function toolError(result, code, what) {
  check(result.isError, `${what}: not an error ${JSON.stringify(result)}`);
  const envelope = JSON.parse(result.content[0].text.split("\n")[1]);
  check(envelope.error.code === code, `${what}: ${JSON.stringify(envelope)}`);
  return envelope.error;
}

const transport =
  transportName === "stdio"
    ? new StdioClientTransport({ command: target, args: ["mcp", "stdio"], env: process.env, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target));
const client = new Client(
  { name: "quire-ts-v2", version: "2.4.0" },
  { versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
await client.connect(transport);

const tools = (await client.listTools()).tools;
check(tools.length === 16, `${tools.length} tools`);
for (const t of tools) {
  check(t.annotations, `${t.name}: no annotations`);
}
const close = tools.find((t) => t.name === "quire_close_project");
check(close.annotations.destructiveHint === false && close.annotations.idempotentHint === true, `close: ${JSON.stringify(close.annotations)}`);
const read = tools.find((t) => t.name === "quire_get_scene");
check(read.annotations.readOnlyHint === true, `get_scene: ${JSON.stringify(read.annotations)}`);

const call = (name, args) => client.callTool({ name, arguments: args });
const opened = structured(
  await call("quire_open_project", { path: `ts-v2-${transportName}-${process.pid}`, createName: "V2" }),
  "open",
);
const sessionId = opened.sessionId;
if (transportName === "http") {
  const err = toolError(await call("quire_get_scene", {}), "session_required", "no sessionId over http");
  check(err.message.includes("quire_open_project"), err.message);
}
const page = { type: "AddPage", page: { name: "p1", nodes: [{ kind: { type: "text", text: "Hello" } }] } };
const [pageId, nodeId] = structured(await call("quire_apply", { op: page, sessionId }), "apply").created;
const edit = { type: "UpdateNode", page: pageId, id: nodeId, patch: { kind: { type: "text", translation: "Bonjour" } } };
structured(await call("quire_apply", { op: edit, sessionId }), "translate");
const scene = structured(await call("quire_get_scene", { sessionId }), "scene").scene;
const kind = scene.pages[0].nodes[0].kind;
check(kind.translation === "Bonjour", JSON.stringify(kind));
check(kind.origin?.by === "agent" && kind.origin?.client === "quire-ts-v2 2.4.0", `origin ${JSON.stringify(kind.origin)}`);
const misfit = toolError(
  await call("quire_apply", { op: { type: "AddPage", page: { name: "x", width: "wide" } }, sessionId }),
  "invalid_arguments",
  "misfit",
);
check(misfit.field === "op.page.width", JSON.stringify(misfit));
const exported = structured(await call("quire_export", { sessionId, format: "markdown" }), "export");
check(exported.text.includes("Bonjour"), exported.text);
structured(await call("quire_close_project", { sessionId }), "close");
await client.close();
console.log(`v2 ${transportName}: ok`);
