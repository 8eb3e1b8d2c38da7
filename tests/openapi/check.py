"""The OpenAPI document of a running quire is true to it: every documented
operation is called, and every reply is checked against the document — its
status is documented, its media type is one the operation lists, and a JSON
body validates (`jsonschema`, draft 2020-12) against the schema given for
that status. Also: each operation has a unique operationId and a tag, and
bearer security is declared exactly when a token is configured, never on
GET /healthz.

Usage:
  python check.py URL [TOKEN]

Prints "openapi: ok (N operations)" and exits 0, or raises on the first
untrue thing. Run by tests/it/openapi.rs.
"""

import base64
import re
import sys
import uuid

import httpx
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

BASE = "urn:quire-openapi"
# A 1×1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def pointer(*parts):
    return "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


class Checker:
    def __init__(self, url, token):
        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=self.url, headers=headers, timeout=30)
        self.doc = self.http.get("/api/v1/openapi.json").json()
        self.registry = Registry().with_resource(
            BASE, Resource.from_contents(self.doc, default_specification=DRAFT202012)
        )
        self.called = set()
        self.templates = [
            (method.upper(), path, re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$"))
            for path, ops in self.doc["paths"].items()
            for method in ops
        ]

    def operation(self, method, path):
        # Literal segments beat parameters (`/sessions/current` before `/sessions/{id}`).
        matches = [(m, t) for m, t, rx in self.templates if m == method and rx.match(path)]
        assert matches, f"{method} {path} is not documented"
        matches.sort(key=lambda mt: mt[1].count("{"))
        return matches[0][1]

    def call(self, method, path, expect=None, **kwargs):
        template = self.operation(method, path)
        self.called.add((method, template))
        r = self.http.request(method, path, **kwargs)
        if expect is not None:
            assert r.status_code == expect, f"{method} {path}: {r.status_code} {r.text[:300]}"
        self.check_reply(method, template, r)
        return r

    def check_reply(self, method, template, r):
        op = self.doc["paths"][template][method.lower()]
        status = str(r.status_code)
        responses = op["responses"]
        assert status in responses, f"{method} {template}: status {status} is not documented ({sorted(responses)})"
        where = ["paths", template, method.lower(), "responses", status]
        response = responses[status]
        if "$ref" in response:
            name = response["$ref"].rsplit("/", 1)[1]
            response = self.doc["components"]["responses"][name]
            where = ["components", "responses", name]
        content = response.get("content", {})
        media = r.headers.get("content-type", "").split(";")[0].strip()
        if not content:
            assert not r.content, f"{method} {template}: a body where none is documented"
            return
        assert media in content, f"{method} {template} {status}: {media} is not among {sorted(content)}"
        if media == "application/json":
            schema = {"$ref": BASE + "#/" + pointer(*where, "content", media, "schema")}
            validator = Draft202012Validator(schema, registry=self.registry)
            errors = sorted(validator.iter_errors(r.json()), key=lambda e: e.path)
            assert not errors, f"{method} {template} {status}: {errors[0].message} at {list(errors[0].path)}"

    def check_document(self, token):
        ids = []
        for path, ops in self.doc["paths"].items():
            for method, op in ops.items():
                ids.append(op.get("operationId"))
                assert op.get("operationId"), f"{method} {path}: no operationId"
                assert op.get("tags"), f"{method} {path}: no tags"
                secured = "security" in op
                if path == "/healthz" or not token:
                    assert not secured, f"{method} {path}: declares security it does not need"
                    assert "401" not in op["responses"], f"{method} {path}: 401 without a token"
                else:
                    assert op["security"] == [{"bearer": []}], f"{method} {path}: security {op.get('security')}"
                    assert "401" in op["responses"], f"{method} {path}: 401 not documented"
        assert len(ids) == len(set(ids)), f"operationIds repeat: {sorted(ids)}"
        assert "security" not in self.doc, "a document-wide security requirement"
        schemes = self.doc["components"].get("securitySchemes")
        assert (schemes is not None) == bool(token), f"securitySchemes: {schemes}"

    def run(self, token):
        self.check_document(token)
        if token:
            r = httpx.get(self.url + "/api/v1/meta")
            self.check_reply("GET", "/api/v1/meta", r)
            assert r.status_code == 401, "no token, no answer"
        for path in ["/healthz", "/api/v1/meta", "/api/v1/engines", "/api/v1/projects",
                     "/api/v1/config", "/api/v1/openapi.json", "/api/v1/operations", "/api/v1/sessions"]:
            self.call("GET", path, 200)
        self.call("GET", "/api/v1/scene.json", 409)  # nothing open yet
        self.call("GET", "/api/v1/projects/current/glossary", 409)  # nor for the glossary
        with self.http.stream("GET", "/api/v1/events") as r:
            self.called.add(("GET", "/api/v1/events"))
            self.check_reply("GET", "/api/v1/events", r)
            assert r.status_code == 200
        session = self.call("POST", "/api/v1/projects", 200, json={"name": "OpenAPI"}).json()
        sid = session["id"]
        self.call("POST", "/api/v1/projects", 422, json={"name": "  "})
        self.call("GET", f"/api/v1/sessions/{sid}", 200)
        self.call("GET", f"/api/v1/sessions/{uuid.uuid4()}", 404)
        self.call("PUT", "/api/v1/sessions/current", 200, json={"id": sid})
        for prefix in ["/api/v1", f"/api/v1/sessions/{sid}"]:
            text = self.call("POST", f"{prefix}/pages", 200, json={"name": "Text", "text": "One {0}\n\nTwo"}).json()
            # A segment's suggestions: added, refused, voted, listed by
            # votes, rejected and accepted.
            suggestions = f"{prefix}/nodes/{text['created'][1]}/suggestions"
            un = self.call("POST", suggestions, 200, json={"text": "Un {0}"}).json()
            self.call("POST", suggestions, 400, json={"text": "  "})
            self.call("POST", suggestions, 409, json={"text": "Un {0}"})
            self.call("POST", f"{prefix}/nodes/{uuid.uuid4()}/suggestions", 404, json={"text": "Un"})
            une = self.call("POST", suggestions, 200, json={"text": "Une {0}"}).json()
            assert self.call("POST", f"{suggestions}/{une['id']}/vote", 200, json={"value": 1}).json()["votes"] == 1
            self.call("POST", f"{suggestions}/{une['id']}/vote", 400, json={"value": 2})
            self.call("POST", f"{suggestions}/{uuid.uuid4()}/vote", 404, json={"value": 1})
            listed = self.call("GET", suggestions, 200).json()["suggestions"]
            assert [s["text"] for s in listed] == ["Une {0}", "Un {0}"], listed
            self.call("GET", f"{prefix}/nodes/{uuid.uuid4()}/suggestions", 404)
            self.call("POST", f"{suggestions}/{un['id']}/reject", 200)
            self.call("POST", f"{suggestions}/{une['id']}/accept", 200)
            self.call("POST", f"{suggestions}/{une['id']}/accept", 404)
            assert self.call("GET", suggestions, 200).json() == {"suggestions": []}
            added = self.call("POST", f"{prefix}/pages", 200, files={"file": ("p1.png", PNG, "image/png")}).json()
            scene = self.call("GET", f"{prefix}/scene.json", 200).json()
            page = next(p for p in scene["scene"]["pages"] if p["id"] == added["created"][0])
            blob = page["nodes"][0]["kind"]["blob"]
            self.call("GET", f"{prefix}/blobs/{blob}", 200)
            self.call("GET", f"{prefix}/blobs/{'0' * 64}", 404)
            views = self.call("GET", f"{prefix}/pages/{page['id']}/views", 200).json()
            assert views == {}, views  # nothing cleaned or rendered yet
            self.call("GET", f"{prefix}/pages/{uuid.uuid4()}/views", 404)
            op = {"type": "Batch", "ops": [{"type": "AddPage", "page": {"name": "new"}},
                                           {"type": "UpdateProject", "patch": {"name": "OpenAPI"}}]}
            self.call("POST", f"{prefix}/history/apply", 200, json=op)
            self.call("POST", f"{prefix}/history/apply", 422, json={"type": "RemovePage", "id": str(uuid.uuid4())})
            self.call("POST", f"{prefix}/history/apply", 400, content=b"{not json", headers={"content-type": "application/json"})
            self.call("POST", f"{prefix}/history/undo", 200)
            self.call("POST", f"{prefix}/history/redo", 200)
            job = self.call("POST", f"{prefix}/pipelines", 200, json={"steps": ["pseudo-translate", "qa"]}).json()
            self.call("POST", f"{prefix}/pipelines", 422, json={"steps": ["nope"]})
            self.call("DELETE", f"/api/v1/operations/{job['jobId']}", 200)
            export = "/api/v1/projects/current/export" if prefix == "/api/v1" else f"{prefix}/export"
            exported = {fmt: self.call("POST", export, 200, json={"format": fmt}).content
                        for fmt in ["archive", "json", "markdown", "xliff", "po"]}
            self.call("POST", export, 400, json={"format": "docx"})
            self.call("POST", export, 422, json={"format": "srt"})  # no subtitle page
            glossary = "/api/v1/projects/current/glossary" if prefix == "/api/v1" else f"{prefix}/glossary"
            self.call("POST", f"{prefix}/history/apply", 200,
                      json={"type": "UpdateGlossary", "set": [{"source": "One", "target": "Un"}]})
            assert self.call("GET", glossary, 200).json()["terms"][0]["target"] == "Un"
            report = self.call("POST", f"{glossary}/import", 200,
                               json={"format": "csv", "content": "source,target\nTwo,Deux\nOne,Un\n"}).json()
            assert report["added"] + report["unchanged"] == 2 and report["unchanged"] >= 1, report
            tbx = (b'<tbx xmlns="urn:iso:std:iso:30042:ed-2"><text><body><conceptEntry id="c">'
                   b'<langSec xml:lang="en"><termSec><term>Three</term></termSec></langSec>'
                   b'<langSec xml:lang="fr"><termSec><term>Trois</term></termSec></langSec>'
                   b'</conceptEntry></body></text></tbx>')
            self.call("POST", f"{glossary}/import", 200, files={"file": ("terms.tbx", tbx, "application/x-tbx")})
            self.call("POST", f"{glossary}/import", 422, json={"format": "csv", "content": "source,target\nFour\n"})
            self.call("POST", f"{glossary}/import", 400, json={"format": "xlsx", "content": ""})
            imports = "/api/v1/projects/current/import" if prefix == "/api/v1" else f"{prefix}/import"
            xliff = exported["xliff"].decode()
            report = self.call("POST", imports, 200, json={"format": "xliff", "content": xliff}).json()
            assert report["updated"] == 0 and report["unchanged"] > 0, report
            self.call("POST", imports, 200, files={"file": ("back.xlf", exported["xliff"], "application/xliff+xml")},
                      data={"force": "true"})
            self.call("POST", imports, 422, json={"format": "xliff", "content": "<xliff"})
            self.call("POST", imports, 400, json={"format": "tmx", "content": ""})
            copy = self.call("POST", "/api/v1/projects/import", 200, content=exported["archive"],
                             headers={"content-type": "application/zip"}).json()
            assert copy["projectId"] != session["projectId"], "an imported archive kept the project id"
            self.call("DELETE", f"/api/v1/sessions/{copy['id']}", 200)
            self.call("PUT", "/api/v1/sessions/current", 200, json={"id": sid})
        self.call("POST", "/api/v1/projects/import", 422, content=b"not a zip",
                  headers={"content-type": "application/zip"})
        tmx = ('<tmx version="1.4"><header srclang="en"/><body><tu><tuv xml:lang="en"><seg>One</seg></tuv>'
               '<tuv xml:lang="fr"><seg>Un</seg></tuv></tu></body></tmx>')
        memory = self.call("POST", "/api/v1/memory", 200, json={"name": "openapi.tmx", "content": tmx}).json()
        assert memory["units"] == 1, memory
        self.call("POST", "/api/v1/memory", 200, files={"file": ("openapi.tmx", tmx.encode(), "application/x-tmx+xml")})
        self.call("POST", "/api/v1/memory", 422, json={"name": "junk.tmx", "content": "<xliff/>"})
        self.call("POST", "/api/v1/memory", 400, content=b"{not json", headers={"content-type": "application/json"})
        # The desk's lookups, on a session in the path: a segment's matches
        # from that memory, and concordance.
        self.call("POST", f"/api/v1/sessions/{sid}/history/apply", 200, json={
            "type": "UpdateProject", "patch": {"sourceLanguage": "en", "targetLanguage": "fr"}})
        one = self.call("POST", f"/api/v1/sessions/{sid}/pages", 200, json={"name": "Memory", "text": "One"}).json()
        matches = self.call("GET", f"/api/v1/sessions/{sid}/nodes/{one['created'][1]}/matches", 200).json()
        assert [(m["target"], m["score"], m["origin"]) for m in matches["matches"]] == [
            ("Un", 1.0, "tmx openapi")], matches
        self.call("GET", f"/api/v1/sessions/{sid}/nodes/{uuid.uuid4()}/matches", 404)
        self.call("GET", f"/api/v1/sessions/{sid}/nodes/{page['nodes'][0]['id']}/matches", 422)  # an image
        found = self.call("GET", f"/api/v1/sessions/{sid}/concordance", 200, params={"q": "one"}).json()
        assert [m["target"] for m in found["matches"]] == ["Un"], found
        self.call("GET", f"/api/v1/sessions/{sid}/concordance", 422, params={"q": " "})
        self.call("GET", f"/api/v1/sessions/{sid}/concordance", 422, params={"q": "one", "limit": 0})
        self.call("GET", f"/api/v1/sessions/{sid}/concordance", 400, params={"q": "one", "limit": "many"})
        # Who did what in the project: newest first, filtered, bad
        # queries and unknown projects refused.
        project = session["projectId"]
        history = self.call("GET", f"/api/v1/projects/{project}/history", 200, params={"limit": 2}).json()
        assert len(history["entries"]) == 2 and history["next"], history
        self.call("GET", f"/api/v1/projects/{project}/history", 200, params={"cursor": history["next"]})
        self.call("GET", f"/api/v1/projects/{project}/history", 400, params={"limit": 0})
        self.call("GET", f"/api/v1/projects/{uuid.uuid4()}/history", 404)
        self.call("DELETE", f"/api/v1/operations/{uuid.uuid4()}", 404)
        self.call("DELETE", f"/api/v1/sessions/{sid}", 200)
        self.call("POST", "/api/v1/sessions", 404, json={"id": str(uuid.uuid4())})
        reopened = self.call("POST", "/api/v1/sessions", 200, json={"id": session["projectId"]}).json()
        self.call("DELETE", f"/api/v1/sessions/{reopened['id']}", 200)
        self.call("PUT", "/api/v1/projects/current", 200, json={"id": session["projectId"]})
        self.call("DELETE", "/api/v1/projects/current", 200)
        self.call("DELETE", "/api/v1/projects/current", 409)
        documented = {(m, p) for m, p, _ in self.templates}
        missing = documented - self.called
        assert not missing, f"documented operations never called: {sorted(missing)}"
        print(f"openapi: ok ({len(documented)} operations)")


if __name__ == "__main__":
    url = sys.argv[1]
    token = sys.argv[2] if len(sys.argv) > 2 else None
    Checker(url, token).run(token)
