"""`/metrics`, read by the Prometheus client's own OpenMetrics parser, and
its counters checked against the requests this script made.

Usage: metrics.py BASE_URL TOKEN
"""

import sys
import threading
import time

import httpx
from prometheus_client.openmetrics.parser import text_string_to_metric_families


def samples(http):
    r = http.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/openmetrics-text"), r.headers
    out = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(found, name, **labels):
    return found.get((name, tuple(sorted(labels.items()))), 0)


def wait_for(condition, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def main(url, token):
    url = url.rstrip("/")
    assert httpx.get(f"{url}/metrics").status_code == 401, "metrics answered without a token"
    http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    session = http.post("/api/v1/projects", json={"name": "Metrics"}).json()["id"]
    prefix = f"/api/v1/sessions/{session}"
    text = "\n\n".join(f"Line {i}." for i in range(4))
    for i in range(3):
        assert http.post(f"{prefix}/pages", json={"name": f"p{i}", "text": text}).status_code == 200
    for _ in range(5):
        assert http.get("/api/v1/sessions").status_code == 200
    assert http.get("/api/v1/sessions/not-an-id").status_code == 404

    # An event-stream client, connected while the scrape runs.
    connected = threading.Event()
    stop = threading.Event()

    def follow():
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
            with c.stream("GET", "/api/v1/events") as stream:
                connected.set()
                for _ in stream.iter_lines():
                    if stop.is_set():
                        return

    threading.Thread(target=follow, daemon=True).start()
    assert connected.wait(30)
    job = http.post(f"{prefix}/pipelines", json={"steps": ["pseudo-translate"]}).json()["jobId"]
    wait_for(lambda: any(j["id"] == job and j["status"] == "completed"
                         for j in http.get("/api/v1/operations").json()), "the job finished")
    # The event follower counts the job as it hears of it.
    wait_for(lambda: value(samples(http), "quire_jobs_total",
                           engine="pseudo-translate", status="completed") == 1, "the job counted")
    found = samples(http)
    assert value(found, "quire_http_requests_total", method="GET",
                 route="/api/v1/sessions", status="200") == 5, found
    assert value(found, "quire_http_requests_total", method="POST",
                 route="/api/v1/sessions/{sessionId}/pages", status="200") == 3, found
    assert value(found, "quire_http_requests_total", method="GET",
                 route="/api/v1/sessions/{sessionId}", status="404") == 1, found
    assert value(found, "quire_http_requests_total", method="GET",
                 route="/api/v1/sessions/not-an-id", status="404") == 0, "a path's id became a label"
    assert value(found, "quire_sessions_open") == 1, found
    assert value(found, "quire_sse_clients") == 1, found
    # Three imports and the job's three pages.
    assert value(found, "quire_scene_changes_total") == 6, found
    assert value(found, "quire_engine_pages_total", engine="pseudo-translate") == 3, found
    assert value(found, "quire_history_bytes") > 0, found
    assert value(found, "quire_http_request_duration_seconds_count") >= 10, found
    stop.set()
    print("metrics: ok")


if __name__ == "__main__":
    main(*sys.argv[1:3])
