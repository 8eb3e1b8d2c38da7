// Interop test of quire's MCP server with the official MCP TypeScript SDK
// client (what Claude Desktop, Claude Code, Cursor and VS Code build on).
//
// Usage:
//   node interop.mjs stdio QUIRE_BINARY   # spawns `quire mcp stdio` (env passed through)
//   node interop.mjs http URL             # connects to URL (…/mcp)
//
// Prints "interop TRANSPORT: ok" and exits 0 when every check passed;
// otherwise prints the failed check and exits 1. Run by tests/it/mcp_ts.rs.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  LoggingMessageNotificationSchema,
  McpError,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import zlib from "node:zlib";

const [transportName, target, binDir] = process.argv.slice(2);

function check(ok, what) {
  if (!ok) throw new Error(`check failed: ${what}`);
}

// Strict Ajv (draft 2020-12): every schema must compile without a
// non-standard keyword or format, and every success must validate.
const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats.default(ajv);
const outputValidators = new Map();

// Errors the SDK reports outside a call (e.g. a progress notification for a
// token it has already forgotten: a notification that came too late).
const clientErrors = [];

/** Waits (up to 10 s) until `predicate()` holds. */
async function until(predicate, what) {
  const deadline = Date.now() + 10_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`check failed: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A JSON-RPC error with `code` (a protocol-level refusal). */
async function protocolError(promise, code, what) {
  try {
    await promise;
  } catch (e) {
    check(e instanceof McpError && e.code === code, `${what}: ${e} (code ${e.code}, expected ${code})`);
    return e;
  }
  throw new Error(`check failed: ${what} was not refused`);
}

/** A successful call: structured content valid against the output schema. */
async function ok(client, name, args, options) {
  const result = await client.callTool({ name, arguments: args }, undefined, options);
  check(!result.isError, `${name}: isError ${JSON.stringify(result)}`);
  check(result.structuredContent, `${name}: no structuredContent`);
  const text = JSON.parse(result.content[0].text);
  check(JSON.stringify(text) === JSON.stringify(result.structuredContent), `${name}: text differs from structuredContent`);
  const validate = outputValidators.get(name);
  check(validate(result.structuredContent), `${name}: output invalid: ${ajv.errorsText(validate.errors)}`);
  return result;
}

/** A tool execution error the client reads: the code and the message. */
async function toolError(client, name, args, code) {
  const result = await client.callTool({ name, arguments: args });
  check(result.isError === true, `${name}: expected isError, got ${JSON.stringify(result)}`);
  const [first, envelope] = result.content[0].text.split(/\n(.*)/s);
  const error = JSON.parse(envelope).error;
  check(error.code === code, `${name}: code ${error.code} != ${code} (${error.message})`);
  check(first && first === error.message.replace(/\n/g, " "), `${name}: first line ${first}`);
  return error;
}

// A real PNG (RGB, a colour gradient), drawn here so the test needs no
// image library: width × height pixels.
function png(width, height) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const out = Buffer.alloc(8 + data.length + 4);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width; x++) {
      rows.set([x % 256, y % 256, 128], row + 1 + x * 3);
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", zlib.deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

async function run(client) {
  const { tools } = await client.listTools();
  check(tools.length >= 16, `tools: ${tools.map((t) => t.name)}`);
  for (const t of tools) {
    check(t.title, `${t.name}: no title`);
    check(t.outputSchema?.type === "object", `${t.name}: output schema`);
    ajv.compile(t.inputSchema);
    outputValidators.set(t.name, ajv.compile(t.outputSchema));
  }

  // Nothing open: tool errors with their codes, read by the SDK.
  const none = await toolError(client, "quire_get_scene", {}, "no_session");
  check(none.message === "no project is open", `no session: ${none.message}`);
  const unknown = await toolError(client, "quire_undo", { sessionId: "0190d2a0-0000-7000-8000-000000000001" }, "unknown_session");
  check(unknown.id === "0190d2a0-0000-7000-8000-000000000001", `unknown session id: ${JSON.stringify(unknown)}`);
  const misfit = await toolError(client, "quire_apply", { op: { type: "Teleport" } }, "invalid_arguments");
  check(misfit.field?.startsWith("op") && misfit.message.includes("Teleport"), `misfit: ${JSON.stringify(misfit)}`);
  await toolError(client, "quire_open_project", { path: "../outside", createName: "X" }, "invalid_input");
  try {
    await client.callTool({ name: "quire_teleport", arguments: {} });
    check(false, "an unknown tool is not a tool result");
  } catch (e) {
    check(e instanceof McpError && e.code === -32602, `unknown tool: ${e}`);
  }

  const opened = (await ok(client, "quire_open_project", { path: `ts-${transportName}`, createName: "TS interop" })).structuredContent;
  const sessionId = opened.sessionId;
  const listed = (await ok(client, "quire_list_sessions", {})).structuredContent.sessions;
  check(listed.some((s) => s.id === sessionId), "session listed");
  check(listed.every((s) => !Number.isNaN(Date.parse(s.openedAt))), `openedAt: ${JSON.stringify(listed)}`);

  // Ten pages in one Batch, so the pipeline reports progress many times.
  const pages = Array.from({ length: 10 }, (_, i) => ({
    type: "AddPage",
    page: { name: `p${i}`, nodes: [{ kind: { type: "text", text: `Line ${i} {0}` } }] },
  }));
  const batch = (await ok(client, "quire_apply", { op: { type: "Batch", label: "ten pages", ops: pages } })).structuredContent;
  check(batch.epoch === 1 && batch.created.length === 20, `batch: ${JSON.stringify(batch)}`);
  const firstPage = batch.created[0];

  await toolError(client, "quire_apply", { op: { type: "RemovePage", id: "0190d2a0-0000-7000-8000-000000000009" } }, "invalid_op");
  check((await ok(client, "quire_get_scene", {})).structuredContent.epoch === 1, "a refused op changed nothing");

  check((await ok(client, "quire_undo", {})).structuredContent.epoch === 2, "undo");
  check((await ok(client, "quire_undo", {})).structuredContent.epoch === null, "undo at the boundary");
  check((await ok(client, "quire_redo", {})).structuredContent.epoch === 3, "redo");

  const engines = (await ok(client, "quire_list_engines", {})).structuredContent.engines;
  check(engines.some((e) => e.id === "pseudo-translate"), "engines");
  await toolError(client, "quire_start_pipeline", { steps: ["nope"] }, "invalid_input");

  // A pipeline with wait: every progress notification arrives before the
  // result settles the call, and the values strictly increase.
  const progress = [];
  const done = (
    await ok(client, "quire_start_pipeline", { steps: ["pseudo-translate", "qa"], wait: true }, {
      onprogress: (p) => progress.push(p.progress),
    })
  ).structuredContent;
  check(done.status === "completed", `pipeline: ${JSON.stringify(done)}`);
  check(progress.length >= 20, `progress notifications: ${progress.length} (${progress})`);
  check(progress.every((v, i) => i === 0 || v > progress[i - 1]), `progress not strictly increasing: ${progress}`);
  check(progress[progress.length - 1] === 100, `last progress: ${progress}`);
  const job = (await ok(client, "quire_get_job", { jobId: done.jobId })).structuredContent;
  check(job.status === "completed", `job: ${JSON.stringify(job)}`);
  check((await ok(client, "quire_cancel_job", { jobId: done.jobId })).structuredContent.cancelled === false, "cancel");
  await toolError(client, "quire_get_job", { jobId: "0190d2a0-0000-7000-8000-000000000003" }, "unknown_job");

  const scene = (await ok(client, "quire_get_scene", { pages: [firstPage] })).structuredContent;
  check(scene.scene.pages.length === 1, "one page");
  check(scene.scene.pages[0].nodes[0].kind.translation.includes("{0}"), "placeholder kept");
  await toolError(client, "quire_get_scene", { pages: ["0190d2a0-0000-7000-8000-000000000004"] }, "unknown_page");

  // Bringing pages in: an inline 1200×1800 PNG and a text file, one undo step.
  const dir = mkdtempSync(join(tmpdir(), "quire-ts-"));
  const textFile = join(dir, "notes.txt");
  writeFileSync(textFile, "First line\n\nSecond line\n");
  const pageImage = png(1200, 1800).toString("base64");
  const items = [{ name: "page-01.png", mimeType: "image/png", data: pageImage }];
  const epochBefore = (await ok(client, "quire_get_scene", {})).structuredContent.epoch;
  await toolError(client, "quire_import_pages", { items: [{ name: "x.png", mimeType: "image/png", data: Buffer.from("no image").toString("base64") }] }, "invalid_input");
  await toolError(client, "quire_import_pages", { items: [{ name: "x.gif", mimeType: "image/gif", data: pageImage }] }, "invalid_input");
  if (transportName === "http") {
    // Over /mcp a path outside the projects directory is refused.
    await toolError(client, "quire_import_pages", { files: [textFile] }, "invalid_input");
  }
  check((await ok(client, "quire_get_scene", {})).structuredContent.epoch === epochBefore, "refused imports changed nothing");
  const importArgs = transportName === "stdio" ? { items, files: [textFile] } : { items: [...items, { name: "notes", text: "First line\n\nSecond line\n" }] };
  const imported = (await ok(client, "quire_import_pages", importArgs)).structuredContent;
  check(imported.epoch === epochBefore + 1, `one history entry: ${JSON.stringify(imported)}`);
  const added = (await ok(client, "quire_get_scene", {})).structuredContent.scene.pages.slice(-2);
  // Files come first, then items.
  const [textAdded, imageAdded] = transportName === "stdio" ? added : [added[1], added[0]];
  check(textAdded.name === "notes" && textAdded.nodes.length === 2, `text page: ${JSON.stringify(textAdded)}`);
  check(imageAdded.name === "page-01" && imageAdded.width === 1200 && imageAdded.height === 1800, `image page: ${JSON.stringify(imageAdded)}`);
  check(imported.created.includes(textAdded.id) && imported.created.includes(imageAdded.id), "created ids");
  const imagePage = imageAdded.id;
  const textPage = textAdded.id;

  // Seeing a page: an image the model can read, and boxes in its pixels.
  await ok(client, "quire_apply", { op: { type: "AddNode", page: imagePage, node: {
    kind: { type: "text", text: "Hello" }, transform: { x: 100, y: 200, width: 300, height: 150 } } } });
  const view = await ok(client, "quire_view_page", { pageId: imagePage, maxSide: 600 });
  const picture = view.content.find((c) => c.type === "image");
  check(picture && picture.mimeType === "image/jpeg", `image block: ${JSON.stringify(view.content.map((c) => c.type))}`);
  const bytes = Buffer.from(picture.data, "base64");
  check(bytes[0] === 0xff && bytes[1] === 0xd8, "the image is a JPEG");
  const seen = view.structuredContent;
  check(seen.image.width === 400 && seen.image.height === 600, `scaled: ${JSON.stringify(seen.image)}`);
  const hello = seen.nodes.find((n) => n.text === "Hello");
  check(hello && hello.box.x === 33.33 && hello.box.y === 66.67 && hello.box.width === 100 && hello.box.height === 50, `box: ${JSON.stringify(hello)}`);
  await toolError(client, "quire_view_page", { pageId: textPage }, "invalid_input");
  await toolError(client, "quire_view_page", { pageId: "0190d2a0-0000-7000-8000-000000000005" }, "unknown_page");
  await toolError(client, "quire_view_page", { pageId: imagePage, maxSide: 0 }, "invalid_input");

  // Resources: listed, read, subscribed; updates only for what changed.
  const updated = [];
  let listChanged = 0;
  const logged = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => listChanged++);
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logged.push(n.params));
  const sceneUri = `quire://sessions/${sessionId}/scene`;
  const { resources } = await client.listResources();
  check(resources.some((r) => r.uri === sceneUri && r.mimeType === "application/json"), `resources: ${JSON.stringify(resources)}`);
  const { resourceTemplates } = await client.listResourceTemplates();
  check(resourceTemplates.length === 6, `templates: ${JSON.stringify(resourceTemplates)}`);
  const read = await client.readResource({ uri: sceneUri });
  const readScene = JSON.parse(read.contents[0].text);
  check(readScene.scene.pages.length >= 10 && readScene.epoch > 0, "scene resource");
  const pageA = `quire://sessions/${sessionId}/pages/${imagePage}`;
  const pageB = `quire://sessions/${sessionId}/pages/${textPage}`;
  const readPage = JSON.parse((await client.readResource({ uri: pageA })).contents[0].text);
  check(readPage.page.id === imagePage, "page resource");
  const blobHash = readPage.page.nodes.find((n) => n.kind.type === "image").kind.blob;
  const blob = (await client.readResource({ uri: `quire://blobs/${blobHash}` })).contents[0];
  check(blob.mimeType === "image/png" && Buffer.from(blob.blob, "base64").equals(png(1200, 1800)), "blob resource");
  await protocolError(client.readResource({ uri: "quire://sessions/nope/scene" }), -32602, "malformed URI");
  await protocolError(client.readResource({ uri: `quire://sessions/${sessionId}/pages/0190d2a0-0000-7000-8000-000000000006` }), -32002, "unknown page");
  await protocolError(client.subscribeResource({ uri: "quire://sessions/0190d2a0-0000-7000-8000-000000000007/scene" }), -32002, "subscribe to an unknown session");
  for (const uri of [sceneUri, pageA, pageB]) await client.subscribeResource({ uri });
  await ok(client, "quire_apply", { op: { type: "UpdatePage", id: imagePage, patch: { name: "page-01 (seen)" } } });
  await until(() => updated.includes(sceneUri) && updated.includes(pageA), "resource updates");
  check(!updated.includes(pageB), `a page that did not change was reported: ${updated}`);
  await client.unsubscribeResource({ uri: pageA });
  updated.length = 0;
  await ok(client, "quire_apply", { op: { type: "UpdatePage", id: imagePage, patch: { name: "page-01" } } });
  await until(() => updated.includes(sceneUri), "scene update after unsubscribing a page");
  check(!updated.includes(pageA), "no update after unsubscribe");

  // Prompts and completion.
  const { prompts } = await client.listPrompts();
  check(["translate_session", "review_qa"].every((n) => prompts.some((p) => p.name === n)), `prompts: ${JSON.stringify(prompts)}`);
  const prompt = await client.getPrompt({ name: "translate_session", arguments: { targetLanguage: "fr" } });
  const promptText = prompt.messages[0].content.text;
  check(promptText.includes("quire_get_scene") && promptText.includes(sessionId) && promptText.includes("fr"), promptText);
  await protocolError(client.getPrompt({ name: "translate_session", arguments: { targetLanguage: "not a tag!" } }), -32602, "bad language tag");
  await protocolError(client.getPrompt({ name: "nope", arguments: {} }), -32602, "unknown prompt");
  const sessions = await client.complete({ ref: { type: "ref/prompt", name: "review_qa" }, argument: { name: "sessionId", value: sessionId.slice(0, 8) } });
  check(sessions.completion.values.includes(sessionId), `session completion: ${JSON.stringify(sessions)}`);
  const langs = await client.complete({ ref: { type: "ref/prompt", name: "translate_session" }, argument: { name: "targetLanguage", value: "pt" } });
  check(langs.completion.values.includes("pt-BR") && langs.completion.values.every((v) => v.toLowerCase().startsWith("pt")), `languages: ${JSON.stringify(langs)}`);
  const engineIds = await client.complete({ ref: { type: "ref/prompt", name: "translate_session" }, argument: { name: "engine", value: "ps" } });
  check(engineIds.completion.values.includes("pseudo-translate"), `engines: ${JSON.stringify(engineIds)}`);
  const pageIds = await client.complete({ ref: { type: "ref/resource", uri: "quire://sessions/{sessionId}/pages/{pageId}" }, argument: { name: "pageId", value: "" }, context: { arguments: { sessionId } } });
  check(pageIds.completion.values.includes(imagePage), `page completion: ${JSON.stringify(pageIds)}`);

  // Logging: a QA finding reaches the client as a warning, until the level is raised.
  await client.setLoggingLevel("warning");
  await ok(client, "quire_apply", { op: { type: "AddPage", page: { name: "qa", nodes: [{ kind: { type: "text", text: "Hi {0}", translation: "Salut" } }] } } });
  const first = (await ok(client, "quire_start_pipeline", { steps: ["qa"], wait: true })).structuredContent;
  check(first.warnings.length > 0, "QA warns");
  // One log message per warning of the job, at its severity's level, naming
  // the rule, page and node a client can jump to.
  const ofFirst = () => logged.filter((m) => m.data.jobId === first.jobId && m.data.step);
  // (A step's notes, severity info, are below the level asked for.)
  const loud = first.warnings.filter((w) => w.severity !== "info").length;
  await until(() => ofFirst().length === loud, "a log message per warning");
  check(ofFirst().every((m) => m.logger === "quire.jobs" && m.data.rule && m.data.pageId && m.data.nodeId
    && m.level === (m.data.severity === "error" ? "error" : "warning")), JSON.stringify(ofFirst()));
  check(ofFirst().some((m) => m.data.rule === "placeholders" && m.level === "error"), "the placeholder error");
  await client.setLoggingLevel("error");
  const before = logged.length;
  const second = (await ok(client, "quire_start_pipeline", { steps: ["qa"], wait: true })).structuredContent;
  check(second.warnings.length > 0, "the second QA run also warns");
  const errors = second.warnings.filter((w) => w.severity === "error").length;
  // An update told after the job proves the watch has moved past it.
  updated.length = 0;
  await ok(client, "quire_apply", { op: { type: "UpdateProject", patch: { name: "TS interop" } } });
  await until(() => updated.includes(sceneUri), "a later update");
  const since = logged.slice(before).filter((m) => m.data.jobId === second.jobId && m.data.step);
  check(since.length === errors && since.every((m) => m.level === "error"),
    `only errors at level error: ${JSON.stringify(since)} (${errors} expected)`);

  // Opening and closing a session changes the resource list.
  const changesBefore = listChanged;
  const other = (await ok(client, "quire_open_project", { path: `ts-${transportName}-other`, createName: "Other" })).structuredContent;
  await ok(client, "quire_close_project", { sessionId: other.sessionId });
  await until(() => listChanged >= changesBefore + 2, "resources/list_changed on open and close");

  const md = (await ok(client, "quire_export", { format: "markdown" })).structuredContent;
  check(md.text.includes("# TS interop"), `markdown: ${md.text}`);
  const archive = await ok(client, "quire_export", { format: "archive" });
  check(archive.content.some((c) => c.type === "resource" && c.resource.mimeType === "application/zip"), "archive resource");
  if (transportName === "http") {
    await toolError(client, "quire_export", { format: "json", outPath: "/tmp/x.json" }, "invalid_input");
  }

  check((await ok(client, "quire_close_project", {})).structuredContent.closed === sessionId, "closed");
  await toolError(client, "quire_get_scene", {}, "no_session");
  check(clientErrors.length === 0, `client errors: ${clientErrors.join("; ")}`);
}

async function main() {
  const client = new Client({ name: "quire-ts-interop", version: "1.0.0" });
  client.onerror = (e) => clientErrors.push(String(e));
  let transport;
  if (transportName === "stdio") {
    transport = new StdioClientTransport({ command: target, args: ["mcp", "stdio"], env: process.env, stderr: "inherit" });
  } else if (transportName === "config") {
    // An `mcpServers` entry as a client reads it from its config file;
    // the programs it names are looked up on PATH (with `binDir` first).
    const entry = JSON.parse(target);
    if (entry.command) {
      const env = { ...process.env, PATH: `${binDir}:${process.env.PATH}` };
      transport = new StdioClientTransport({ command: entry.command, args: entry.args ?? [], env, stderr: "inherit" });
    } else {
      check(entry.type === "http", `an entry with a command or type http: ${target}`);
      transport = new StreamableHTTPClientTransport(new URL(entry.url));
    }
  } else {
    transport = new StreamableHTTPClientTransport(new URL(target));
  }
  await client.connect(transport);
  try {
    await run(client);
  } finally {
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession();
    await client.close();
  }
  console.log(`interop ${transportName}: ok`);
}

main().catch((e) => {
  console.error(e?.stack ?? String(e));
  process.exit(1);
});
