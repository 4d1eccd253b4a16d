"""Probes and epochs through the real CLI with Python detectors whose behaviour is known: a detector that reads
only the first answer (its order flip rate is the share of pairs whose first answer changed the verdict, computed
here from what it was sent), one blind to order and names (every flip rate exactly 0), and one random on a known
share of calls (its self-agreement computed here from the rule it follows). The headline with --probe equals the
headline without it."""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli
from known_detectors import KNOWN, RISKS, h

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def varied_cases(path: Path, n: int) -> Path:
    """Synthetic cases made to allow every probe: each answer's text its own, and every other case two passages."""
    write_cases(path, n)
    cases = read_jsonl(path)
    for i, case in enumerate(cases):
        for k, answer in enumerate(case["answers"]):
            answer["text"] += f" (said by the {k + 1}th)"
        if i % 2:
            case["evidence"] = [*case.get("evidence", ["A passage."]), f"Another passage, {i}."]
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return path


def _eval(tmp_path: Path, cases: Path, fn: str, out: str, *args: str, env: dict | None = None) -> dict:
    proc = run_cli("eval", str(cases), "-d", f"{KNOWN}:{fn}", "--out", str(tmp_path / out), "-q",
                   "--bootstrap", "100", *args, env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads((tmp_path / out / "metrics.json").read_text())


def _headline(doc: dict) -> dict:
    return {k: v for k, v in doc["metrics"].items() if k not in ("operational", "probes", "epochs")}


def test_a_first_answer_reader_flips_exactly_where_its_first_answer_changes(tmp_path: Path) -> None:
    cases = varied_cases(tmp_path / "cases.jsonl", 40)
    seen = tmp_path / "seen.jsonl"
    probed = _eval(tmp_path, cases, "first_only", "probed", "--probe", "order,names", env={"SEEN": str(seen)})
    plain = _eval(tmp_path, cases, "first_only", "plain", env={"SEEN": str(tmp_path / "seen-plain.jsonl")})
    assert _headline(probed) == _headline(plain)  # the headline counts the requests as they are only

    # from what the detector was sent: a case's requests share a task; the one in the case's own order is the plain
    by_task: dict[str, list[dict]] = {}
    for request in read_jsonl(seen):
        by_task.setdefault(request["task"], []).append(request)
    flips = pairs = 0
    for case in read_jsonl(cases):
        own = [a["text"] for a in case["answers"]]
        sent = by_task[case["question"]]
        reordered = [r for r in sent if [a["text"] for a in r["answers"]] != own]
        assert len(sent) == 3 and len(reordered) == 1  # as it is, renamed, reordered (never in its own order)
        pairs += 1
        flips += h(reordered[0]["answers"][0]["text"]) % 3 != h(own[0]) % 3
    order = probed["metrics"]["probes"]["order"]
    assert 0 < flips < pairs  # the fixture has both kinds
    assert (order["n"], order["flips"]) == (pairs, flips)
    assert order["flip_rate"] == pytest.approx(flips / pairs)
    names = probed["metrics"]["probes"]["names"]
    assert (names["n"], names["flips"]) == (40, 0)  # renaming leaves its first answer's text as it was


def test_a_detector_blind_to_order_and_names_never_flips(tmp_path: Path) -> None:
    cases = varied_cases(tmp_path / "cases.jsonl", 24)
    doc = _eval(tmp_path, cases, "blind", "run", "--probe", "order,names,evidence-order", "--epochs", "2")
    probes = doc["metrics"]["probes"]
    assert set(probes) == {"order", "names", "evidence-order"}
    assert probes["order"]["n"] == probes["names"]["n"] == 48  # 24 cases, 2 epochs
    assert probes["evidence-order"]["n"] == 24 and probes["evidence-order"]["not_possible"] == 12
    for block in probes.values():
        assert block["flips"] == 0 and block["flip_rate"] == 0.0
        assert all(g["flips"] == 0 for g in block["per_category"].values())
    assert doc["metrics"]["epochs"]["self_agreement"]["all_agree"] == 1.0


def test_a_detector_random_on_a_known_share_of_calls_shows_that_self_agreement(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 60)
    doc = _eval(tmp_path, cases, "noisy", "run", "--epochs", "3")
    # the detector's rule, call k = 0, 1, 2 of each request (which epoch got which call does not matter here)
    agree, pairwise, counts = [], [], []
    for case in read_jsonl(cases):
        request = {"task": case["question"], "answers": [{"agent_id": a["agent_id"], "text": a["text"]}
                                                           for a in case["answers"]]}  # fmt: skip
        if case.get("evidence"):
            request["evidence"] = case["evidence"]
        key = json.dumps(request, sort_keys=True)
        verdicts = [RISKS[h(f"draw:{key}:{k}") % 3] if h(f"{key}:{k}") % 10 < 3 else RISKS[h(key) % 3]
                    for k in range(3)]  # fmt: skip
        agree.append(len(set(verdicts)) == 1)
        pairwise.append(sum(a == b for a, b in combinations(verdicts, 2)) / 3)
        counts.append(Counter(verdicts))
    journal = read_jsonl(tmp_path / "run" / "predictions.jsonl")
    assert len(journal) == 180
    a = doc["metrics"]["epochs"]["self_agreement"]
    assert 0 < sum(agree) < 60  # some cases disagree with themselves, most do not
    assert a["n_cases"] == 60 and a["all_agree"] == pytest.approx(sum(agree) / 60)
    assert a["pairwise"] == pytest.approx(sum(pairwise) / 60)
    shares = {r: sum(c[r] for c in counts) / 180 for r in RISKS}
    p_e = sum(s * s for s in shares.values())
    assert a["fleiss_kappa"] == pytest.approx((sum(pairwise) / 60 - p_e) / (1 - p_e))


ORDER_ONLY = """
import re


def assess(request):
    said = [int(re.search(r"said by the (\\d+)th", a["text"]).group(1)) for a in request["answers"]]
    if said != sorted(said):
        raise ValueError("answers out of order")
    return {"false_consensus_risk": "high"}
"""


def test_a_detector_failing_only_on_reordered_answers_passes_the_preflight(tmp_path: Path) -> None:
    """Issue 45, item 15: the preflight asked the first item of the send order, an order variant about half the
    time, and refused the run as "the detector failed on the first case". It now asks a request as it is; the
    variants' failures are the variants' errors. Four seeds: each would have sent a variant first with chance 1/2."""
    cases = varied_cases(tmp_path / "cases.jsonl", 8)
    (tmp_path / "order_only.py").write_text(ORDER_ONLY)
    for seed in range(4):
        out = tmp_path / f"run{seed}"
        proc = run_cli("eval", str(cases), "-d", f"{tmp_path / 'order_only.py'}:assess", "--probe", "order",
                       "--seed", str(seed), "--out", str(out), "-q", "--bootstrap", "0")  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        journal = read_jsonl(out / "predictions.jsonl")
        plain = [r for r in journal if "variant" not in r]
        assert len(plain) == 8 and all(r["risk"] == "high" for r in plain)
        # a permutation that keeps the order is no error; every other one is the detector's exception
        for r in (r for r in journal if r.get("variant") == "order"):
            kept = r["permutation"] == sorted(r["permutation"])
            assert (r["error"] is None) == kept and (kept or r["error"]["kind"] == "detector_exception")


def test_the_preflight_asks_a_request_as_it_is() -> None:
    from harness.run.runner import first_plain
    from harness.types import ItemKey

    order = [
        ("a", ItemKey("c1", 1, "order")),
        ("b", ItemKey("c2", 1, "names")),
        ("c", ItemKey("c2")),
        ("d", ItemKey("c1")),
    ]
    assert first_plain(order) == order[2]  # type: ignore[arg-type]
    only_variants = order[:2]
    assert first_plain(only_variants) == order[0]  # type: ignore[arg-type]
