"""A headless quire whose `ocr` runs on model backends: a page read
through the API, then `/metrics` read by the Prometheus client's own
OpenMetrics parser, each backend's counters checked (spec 17, rule 12).

Usage: backend_metrics.py BASE_URL TOKEN PAGE.png
"""

import sys
import time

import httpx
from prometheus_client.openmetrics.parser import text_string_to_metric_families


def samples(http):
    r = http.get("/metrics")
    assert r.status_code == 200, r.text
    out = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(found, name, **labels):
    return found.get((name, tuple(sorted(labels.items()))))


def main(url, token, page):
    http = httpx.Client(base_url=url.rstrip("/"),
                        headers={"Authorization": f"Bearer {token}"}, timeout=120)
    session = http.post("/api/v1/projects", json={"name": "Backends"}).json()["id"]
    prefix = f"/api/v1/sessions/{session}"
    with open(page, "rb") as f:
        r = http.post(f"{prefix}/pages", files={"file": ("page.png", f.read(), "image/png")})
    assert r.status_code == 200, r.text
    job = http.post(f"{prefix}/pipelines", json={"steps": ["detect", "ocr"]}).json()["jobId"]
    deadline = time.monotonic() + 300
    while True:
        jobs = {j["id"]: j for j in http.get("/api/v1/operations").json()}
        status = jobs.get(job, {}).get("status")
        if status not in (None, "queued", "running"):
            break
        assert time.monotonic() < deadline, "the job did not finish"
        time.sleep(0.1)
    assert status == "completed", jobs[job]
    found = samples(http)
    for backend in ("det", "rec"):
        ok = value(found, "quire_backend_requests_total", backend=backend, status="200")
        assert ok and ok > 0, (backend, found)
        count = value(found, "quire_backend_request_seconds_count", backend=backend)
        assert count == ok, (backend, count, ok)
        inf = value(found, "quire_backend_request_seconds_bucket", backend=backend, le="+Inf")
        assert inf == count, (backend, inf, count)
        assert value(found, "quire_backend_request_seconds_sum", backend=backend) > 0
        assert value(found, "quire_backend_retries_total", backend=backend) == 0
        assert value(found, "quire_backend_in_flight", backend=backend) == 0
        assert value(found, "quire_backend_ready", backend=backend) == 1
    # Asked at start, not ready: counted as such, never sent a request.
    assert value(found, "quire_backend_ready", backend="down") == 0, found
    assert value(found, "quire_backend_requests_total", backend="down", status="200") is None
    print("backend metrics: ok")


if __name__ == "__main__":
    main(*sys.argv[1:])
