"""The tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`)
on `quire_start_pipeline`, spoken over `/mcp` as the specification frames
it (the Python SDK 2.3 has no tasks client yet, so the requests are
written here; the protocol metadata and headers are the SDK's own
constants).

Usage:
  python tasks.py URL      # …/mcp

A client that declares the extension gets a task, which `tasks/get`
follows to the result a `wait: true` call gives; one that does not gets
the job id at once, as before; `wait: true` is the finished result either
way. Exits 0 when every check passed.
"""

import itertools
import json
import sys
import time

import httpx

from checks import check

VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
ids = itertools.count(1)


def meta(tasks):
    capabilities = {"extensions": {TASKS: {}}} if tasks else {}
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-check", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


def rpc(http, url, method, params, tasks=False, name=None):
    """One stateless request; the JSON-RPC response (from JSON or SSE)."""
    params = {**params, "_meta": meta(tasks)}
    body = {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}
    headers = {
        "Accept": "application/json, text/event-stream",
        "Mcp-Protocol-Version": VERSION,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    r = http.post(url, json=body, headers=headers)
    check(r.status_code == 200, f"{method}: HTTP {r.status_code} {r.text[:300]}")
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        frames = [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        return next(f for f in frames if f.get("id") == body["id"])
    return r.json()


def tool(http, url, name, args, tasks=False):
    reply = rpc(http, url, "tools/call", {"name": name, "arguments": args}, tasks, name)
    check("result" in reply, f"{name}: {reply}")
    return reply["result"]


def main():
    url = sys.argv[1]
    with httpx.Client(timeout=30) as http:
        discovered = rpc(http, url, "server/discover", {})["result"]
        check(TASKS in discovered["capabilities"].get("extensions", {}), f"no tasks extension: {discovered}")
        sid = tool(http, url, "quire_open_project", {"path": "tasks", "createName": "Tasks"})["structuredContent"]["sessionId"]
        page = {"type": "AddPage", "page": {"name": "p", "nodes": [{"kind": {"type": "text", "text": "Hello"}}]}}
        tool(http, url, "quire_apply", {"sessionId": sid, "op": page})

        # Without the extension: the job id at once, as before.
        plain = tool(http, url, "quire_start_pipeline", {"sessionId": sid, "steps": ["qa"]})
        check("jobId" in plain["structuredContent"], f"plain: {plain}")

        created = tool(http, url, "quire_start_pipeline", {"sessionId": sid, "steps": ["pseudo-translate", "qa"]}, tasks=True)
        check(created.get("resultType") == "task" and created.get("taskId"), f"not a task: {created}")
        check(created["status"] == "working" and created["pollIntervalMs"] > 0, f"created: {created}")
        deadline = time.monotonic() + 30
        while True:
            got = rpc(http, url, "tasks/get", {"taskId": created["taskId"]}, True, created["taskId"])
            check("result" in got, f"tasks/get: {got}")
            task = got["result"]
            if task["status"] != "working":
                break
            check(time.monotonic() < deadline, f"still working: {task}")
            time.sleep(task.get("pollIntervalMs", 100) / 1000)
        check(task["status"] == "completed", f"task: {task}")
        outcome = task["result"]["structuredContent"]
        check(outcome["jobId"] == created["taskId"] and outcome["status"] == "completed", f"outcome: {outcome}")
        # (A step's notes, severity info, such as a project without a
        # source language, are no warnings.)
        check([w for w in outcome["warnings"] if w["severity"] != "info"] == [], f"warnings: {outcome}")
        scene = tool(http, url, "quire_get_scene", {"sessionId": sid})["structuredContent"]["scene"]
        check(scene["pages"][0]["nodes"][0]["kind"]["translation"], f"not translated: {scene}")

        # `wait: true` is the finished result, also for a client that
        # declared the extension.
        waited = tool(http, url, "quire_start_pipeline", {"sessionId": sid, "steps": ["qa"], "wait": True}, tasks=True)
        check(waited.get("resultType") != "task" and "taskId" not in waited, f"a task for wait: {waited}")
        check(waited["structuredContent"]["status"] == "completed", f"waited: {waited}")

        cancelled = rpc(http, url, "tasks/cancel", {"taskId": created["taskId"]}, True, created["taskId"])
        check("result" in cancelled, f"cancel an ended task: {cancelled}")
        nobody = "0190d2a0-0000-7000-8000-000000000001"
        unknown = rpc(http, url, "tasks/get", {"taskId": nobody}, True, nobody)
        check(unknown.get("error", {}).get("code") == -32602, f"unknown task: {unknown}")
        handshake_era(http, url)
    print("tasks: ok")


def handshake_era(http, url):
    """A 2025-11-25 client that declared the extension in `initialize` but
    never asks for a task gets what it asked for: the job id, or with
    `wait: true` the finished result (MCP Inspector, pydantic-ai)."""
    headers = {"Accept": "application/json, text/event-stream"}

    def post(body, session=None):
        h = dict(headers, **({"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"} if session else {}))
        r = http.post(url, json=body, headers=h)
        check(r.status_code in (200, 202), f"{body.get('method')}: HTTP {r.status_code} {r.text[:300]}")
        if r.headers.get("content-type", "").startswith("text/event-stream"):
            frames = [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:") and line[5:].strip()]
            return r, next((f for f in frames if f.get("id") == body.get("id")), None)
        return r, (r.json() if r.content else None)

    r, _ = post({"jsonrpc": "2.0", "id": next(ids), "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"extensions": {TASKS: {}}},
        "clientInfo": {"name": "tasks-legacy", "version": "1"}}})
    session = r.headers["mcp-session-id"]
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)

    def call(name, args):
        _, reply = post({"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
                         "params": {"name": name, "arguments": args}}, session)
        check(reply and "result" in reply, f"{name}: {reply}")
        return reply["result"]

    sid = call("quire_open_project", {"path": "tasks-legacy", "createName": "Legacy"})["structuredContent"]["sessionId"]
    started = call("quire_start_pipeline", {"sessionId": sid, "steps": ["qa"]})
    check("taskId" not in started and "jobId" in started["structuredContent"], f"legacy, no wait: {started}")
    waited = call("quire_start_pipeline", {"sessionId": sid, "steps": ["qa"], "wait": True})
    check(waited["structuredContent"].get("status") == "completed", f"legacy, wait: {waited}")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"tasks check failed: {e}", file=sys.stderr)
        sys.exit(1)
