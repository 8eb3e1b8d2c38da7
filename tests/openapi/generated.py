"""A client generated from quire's OpenAPI document works: openapi-python-client
generates it without a warning (every operation, `Op` included), and the
generated code creates a project and applies a Batch of ops to it.

Usage:
  python generated.py URL WORKDIR

Prints "generated client: ok" and exits 0; raises otherwise. Run by
tests/it/openapi.rs.
"""

import importlib
import json
import subprocess
import sys
from pathlib import Path

import httpx


def main():
    url, work = sys.argv[1], Path(sys.argv[2])
    doc = httpx.get(url + "/api/v1/openapi.json").json()
    (work / "openapi.json").write_text(json.dumps(doc))
    # No post hooks: the formatter they call is not needed to use the code.
    (work / "config.yaml").write_text("post_hooks: []\n")
    generator = Path(sys.executable).with_name("openapi-python-client")
    out = subprocess.run(
        [str(generator), "generate", "--path", str(work / "openapi.json"),
         "--output-path", str(work / "client"), "--config", str(work / "config.yaml")],
        capture_output=True, text=True, check=False,
    )
    report = out.stdout + out.stderr
    assert out.returncode == 0, report
    assert "Warning" not in report and "will not be generated" not in report, report

    sys.path.insert(0, str(work / "client"))
    client_mod = importlib.import_module("quire_http_api_client")
    create_project = importlib.import_module("quire_http_api_client.api.projects.create_project")
    apply_op = importlib.import_module("quire_http_api_client.api.history.apply_op")
    undo = importlib.import_module("quire_http_api_client.api.history.undo")
    models = importlib.import_module("quire_http_api_client.models")

    client = client_mod.Client(base_url=url)
    session = create_project.sync(client=client, body=models.CreateProject(name="Generated"))
    assert session is not None and session.name == "Generated", session
    batch = models.OpBatch(
        type_="Batch",
        label="from a generated client",
        ops=[
            models.OpAddPage(type_="AddPage", page=models.NewPage(name="one")),
            models.OpUpdateProject(type_="UpdateProject", patch=models.ProjectPatch(name="Generated!")),
        ],
    )
    applied = apply_op.sync(client=client, body=batch)
    assert isinstance(applied, models.ApplyResult), applied
    assert applied.epoch == 1 and len(applied.created) == 1, applied.to_dict()
    undone = undo.sync(client=client)
    assert undone is not None and undone.epoch == 2, undone
    print("generated client: ok")


if __name__ == "__main__":
    main()
