"""The subtitle rules of `qa`, against an independent count.

An episode's cues are written with pysubs2: clean cues, and one of each
fault a style guide names (a long line, three lines, a reading speed too
high, a cue too short and one too long, a gap too small, an overlap).
The English file becomes a project over HTTP, the Portuguese cues its
translations, and `qa` runs. pysubs2 counts the same cues the Netflix
way (tags left out, line breaks not read, spaces and punctuation counted)
and the test checks that quire flags exactly the cues and rules that
count says, no more (no false positives on clean cues) and no fewer.

Usage: checks.py BASE_URL
"""

import json
import sys
import time

import httpx
import pysubs2

LIMITS = {"line": 42, "lines": 2, "cps": 17.0, "min": 833, "max": 7000, "gap": 83}

# (start ms, end ms, English, Portuguese)
CUES = [
    (1000, 3000, "Where are you going?", "Aonde você vai?"),
    (3500, 6000, "Home. It's late.", "Para casa.\nJá é tarde."),
    # 86 characters on one line, in 3.36 s: too long and too fast.
    (6200, 9560, "I told you a hundred times.",
     "Eu já te disse cem vezes que não quero ver você aqui de novo depois da meia-noite, ok?"),
    (10000, 13000, "One.\nTwo.\nThree.", "Um.\nDois.\nTrês."),
    (13500, 13900, "Hey!", "Ei!"),
    (14000, 24000, "...", "..."),
    # 40 ms after the previous cue ends.
    (24040, 26000, "Wait.", "Espera."),
    # Starts before the previous one ends.
    (25500, 28000, "What?", "O quê?"),
    (30000, 33000, "<i>Goodbye, my friend.</i>", "<i>Adeus, meu amigo.</i>"),
    (33500, 35500, "Fine.", "{\\an8}Tudo bem, {\\i1}querida{\\i0}."),
    # 28 characters in 2 s: 14 a second, fine for adults, fast for children.
    (36000, 38000, "Come here, please.", "Venha aqui agora, por favor."),
]


def expected(target, cps):
    """(cue number, rule) for every fault pysubs2's count finds, at `cps`
    characters a second."""
    faults = set()
    events = sorted(enumerate(target, start=1), key=lambda e: (e[1].start, e[0]))
    for number, event in enumerate(target, start=1):
        text = event.plaintext
        lines = text.split("\n")
        if any(len(line) > LIMITS["line"] for line in lines):
            faults.add((number, "line-length"))
        if len(lines) > LIMITS["lines"]:
            faults.add((number, "lines"))
        chars = len(text.replace("\n", ""))
        if event.duration > 0 and chars / (event.duration / 1000) > cps:
            faults.add((number, "reading-speed"))
        if event.duration < LIMITS["min"] or event.duration > LIMITS["max"]:
            faults.add((number, "duration"))
    for (_, before), (number, event) in zip(events, events[1:]):
        if event.start < before.end:
            faults.add((number, "overlap"))
        elif event.start - before.end < LIMITS["gap"]:
            faults.add((number, "gap"))
    return faults


def main(url):
    http = httpx.Client(base_url=url.rstrip("/"), timeout=30)

    def call(method, path, expect=200, **kwargs):
        r = http.request(method, path, **kwargs)
        assert r.status_code == expect, f"{method} {path}: {r.status_code} {r.text[:400]}"
        return r

    source, target = pysubs2.SSAFile(), pysubs2.SSAFile()
    for start, end, english, portuguese in CUES:
        source.append(pysubs2.SSAEvent(start=start, end=end, text=english.replace("\n", "\\N")))
        target.append(pysubs2.SSAEvent(start=start, end=end, text=portuguese.replace("\n", "\\N")))
    # What a subtitler's file holds, as pysubs2 writes SubRip.
    srt = source.to_string("srt")
    target_srt = pysubs2.SSAFile.from_string(target.to_string("srt"))
    want = expected(target_srt, LIMITS["cps"])
    assert {rule for _, rule in want} == {"line-length", "lines", "reading-speed", "duration", "gap", "overlap"}, want

    session = call("POST", "/api/v1/projects",
                   json={"name": "Episode", "sourceLanguage": "en", "targetLanguage": "pt-BR"}).json()["id"]
    prefix = f"/api/v1/sessions/{session}"
    page_id = call("POST", f"{prefix}/pages", files={"file": ("episode.srt", srt.encode())}).json()["created"][0]
    nodes = call("GET", f"{prefix}/scene.json").json()["scene"]["pages"][0]["nodes"]
    assert len(nodes) == len(CUES), nodes
    # The translations as pysubs2's SubRip carries them ({\i1} written as
    # <i>, as a subtitle editor would).
    srt_texts = [c.split("\n", 2)[2] for c in target.to_string("srt").strip().split("\n\n")]
    ops = [{"type": "UpdateNode", "page": page_id, "id": n["id"],
            "patch": {"kind": {"type": "text", "translation": t}}} for n, t in zip(nodes, srt_texts)]
    call("POST", f"{prefix}/history/apply", json={"type": "Batch", "ops": ops})

    def qa():
        job = call("POST", f"{prefix}/pipelines", json={"steps": ["qa"]}).json()["jobId"]
        deadline = time.monotonic() + 60
        while True:
            j = next(j for j in call("GET", "/api/v1/operations").json() if j["id"] == job)
            if j["status"] in ("completed", "completedWithErrors", "failed"):
                return j
            assert time.monotonic() < deadline, j
            time.sleep(0.05)

    number = {n["id"]: i for i, n in enumerate(nodes, start=1)}
    subtitle_rules = {"line-length", "lines", "reading-speed", "duration", "gap", "overlap"}

    def flagged(job):
        return {(number[w["nodeId"]], w["rule"]) for w in job["warnings"] if w["rule"] in subtitle_rules}

    j = qa()
    got = flagged(j)
    assert got == want, f"quire flagged {sorted(got - want)} that pysubs2's count does not, " \
                        f"and missed {sorted(want - got)}"
    # A profile quire does not know is refused, and changes nothing.
    before = call("GET", f"{prefix}/scene.json").json()
    refused = call("POST", f"{prefix}/history/apply", expect=400,
                   json={"type": "UpdateProject", "patch": {"subtitleProfile": "cartoon"}}).json()
    assert "netflix-children" in json.dumps(refused), refused
    assert call("GET", f"{prefix}/scene.json").json() == before
    # The project's own profile: a children's programme reads at 13 a second.
    call("POST", f"{prefix}/history/apply",
         json={"type": "UpdateProject", "patch": {"subtitleProfile": "netflix-children"}})
    children = expected(target_srt, 13.0)
    assert children - want == {(len(CUES), "reading-speed")}, children - want
    got = flagged(qa())
    assert got == children, f"children's profile: quire flagged {sorted(got - children)} " \
                            f"that pysubs2's count does not, and missed {sorted(children - got)}"
    # Each message names its cue, as a reviewer would.
    for w in j["warnings"]:
        if w["rule"] in subtitle_rules:
            assert f"cue {number[w['nodeId']]}" in w["message"], w
    long_line = next(w for w in j["warnings"] if w["rule"] == "line-length")
    assert "86 characters, over 42" in long_line["message"], long_line
    print("subtitle checks: ok")


if __name__ == "__main__":
    main(sys.argv[1])
