"""fcb compare of runs with epochs and probes, the leaderboard's and history's repeat columns, through the real CLI
on real runs of a detector random on a share of its calls (tests/data/detectors/noisy.py) on the embedded set.
Every expected figure is computed here from the runs' journals."""

from __future__ import annotations

import csv
import io
import json
import shutil
import statistics
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, read_jsonl, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

DETECTOR = f"{ROOT / 'tests' / 'data' / 'detectors' / 'noisy.py'}:assess"
RISKS = ("low", "medium", "high")


def evaluate(out: Path, *, seed: int, share: float, epochs: int, extra: tuple[str, ...] = ()) -> Path:
    env = {"FCB_NOISY_SEED": str(seed), "FCB_NOISY_SHARE": str(share)}
    proc = run_cli("eval", "-d", DETECTOR, "--name", "noisy", "--epochs", str(epochs), "--concurrency", "1", "-q",
                   "--bootstrap", "50", "--no-cache", "--out", str(out), *extra, env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("gate")
    return {
        "same1": evaluate(tmp / "same1", seed=1, share=0.3, epochs=3, extra=("--probe", "order")),
        "same2": evaluate(tmp / "same2", seed=2, share=0.3, epochs=3),
        "random": evaluate(tmp / "random", seed=3, share=1.0, epochs=3),
        "plain": evaluate(tmp / "plain", seed=4, share=0.3, epochs=1),
    }


def compare(*args: str) -> tuple[int, dict]:
    proc = run_cli("compare", *args, "--format", "json", "--bootstrap", "500")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def items(run: Path) -> list[dict]:
    return read_jsonl(run / "predictions.jsonl")


def plain_items(run: Path) -> list[dict]:
    return [r for r in items(run) if "variant" not in r]


def test_identical_code_passes_and_the_figures_are_every_epoch_verdict(runs: dict[str, Path]) -> None:
    code, cmp = compare(str(runs["same1"]), str(runs["same2"]))
    assert code == 0 and cmp["regression"] is False
    gate = cmp["gate"]
    assert gate["method"] == "hierarchical" and gate["multiple_testing"] == "holm" and gate["noise_separated"]
    assert gate["epochs"] == {"base": 3, "new": 3} and gate["figures"] == "epoch verdicts"
    assert "error_rate" not in gate["family"] and "accuracy" in gate["family"]  # neither run errs
    for side, run in (("base", runs["same1"]), ("new", runs["same2"])):
        rows = plain_items(run)
        assert len(rows) == 3 * 240
        right = sum(r["risk"] == r["expected"] for r in rows)  # accuracy over every (case, epoch) verdict
        assert cmp["metrics"]["accuracy"][side] == pytest.approx(right / len(rows))
        low = [r for r in rows if r["expected"] == "low"]
        assert cmp["metrics"]["false_alarm_rate"][side] == pytest.approx(
            sum(r["risk"] == "high" for r in low) / len(low)
        )
    for m in cmp["metrics"].values():
        assert m["p_holm"] is None or m["p_holm"] >= m["p"]
    text = run_cli("compare", str(runs["same1"]), str(runs["same2"]), "--bootstrap", "200").stdout
    assert "Holm" in text and "p (Holm)" in text and "epochs drawn with replacement" in text


def test_a_real_change_fails_the_gate(runs: dict[str, Path]) -> None:
    code, cmp = compare(str(runs["same1"]), str(runs["random"]))
    assert code == 1 and cmp["regression"]
    accuracy = cmp["metrics"]["accuracy"]
    assert accuracy["regression"] and accuracy["p_holm"] < 0.05 and accuracy["delta"] < -0.1
    md = run_cli("compare", str(runs["same1"]), str(runs["random"]), "--format", "md", "--bootstrap", "200")
    assert md.returncode == 1 and md.stdout.startswith("## :x:") and "Holm" in md.stdout


def test_one_epoch_keeps_todays_test_and_says_it_cannot_tell_noise(runs: dict[str, Path]) -> None:
    code, cmp = compare(str(runs["plain"]), str(runs["same1"]))
    gate = cmp["gate"]
    assert gate["method"] == "paired" and gate["multiple_testing"] == "none" and not gate["noise_separated"]
    assert gate["epochs"] == {"base": 1, "new": 3}
    assert all(m["p_holm"] is None for m in cmp["metrics"].values())
    # today's test on one verdict a case: the new run's headline is its reduced (mode) verdicts'
    assert cmp["metrics"]["accuracy"]["new"] == pytest.approx(
        json.loads((runs["same1"] / "metrics.json").read_text())["metrics"]["accuracy"]
    )
    assert code == (1 if any(m["regression"] for m in cmp["metrics"].values()) else 0)
    for fmt in ("text", "md"):
        out = run_cli("compare", str(runs["plain"]), str(runs["same1"]), "--format", fmt, "--bootstrap", "100")
        assert "cannot tell the detector's own noise from a change" in out.stdout


def _reduced_scores(run: Path) -> dict[str, tuple[str, float]]:
    """Per case: expected risk and the mean of its epochs' scores (the mode reducer's score)."""
    scores: dict[str, list[float]] = defaultdict(list)
    expected = {}
    for r in plain_items(run):
        scores[r["id"]].append(r["score"])
        expected[r["id"]] = r["expected"]
    return {i: (expected[i], sum(s) / len(s)) for i, s in scores.items()}


def _ece_by_loop(pairs: list[tuple[str, float]], bins: int = 15) -> float:
    """ECE over equal-width bins, bin k holding k/bins < s <= (k+1)/bins (the first also 0), written as a loop."""
    total = 0.0
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        inside = [(e, s) for e, s in pairs if (lo < s <= hi) or (k == 0 and s == 0)]
        if inside:
            observed = sum(e == "high" for e, _ in inside) / len(inside)
            mean = sum(s for _, s in inside) / len(inside)
            total += len(inside) / len(pairs) * abs(observed - mean)
    return total


def test_the_ece_delta_follows_from_the_journals(runs: dict[str, Path]) -> None:
    _, cmp = compare(str(runs["same1"]), str(runs["random"]))
    ece = cmp["ece"]
    base, new = (
        _ece_by_loop(list(_reduced_scores(runs["same1"]).values())),
        _ece_by_loop(list(_reduced_scores(runs["random"]).values())),
    )
    assert ece["bins"] == 15 and ece["n"] == 240
    assert ece["base"] == pytest.approx(base) and ece["new"] == pytest.approx(new)
    assert ece["delta"] == pytest.approx(new - base) and ece["ci"][0] <= ece["delta"] <= ece["ci"][1]
    text = run_cli("compare", str(runs["same1"]), str(runs["random"]), "--bootstrap", "100").stdout
    assert "ECE of risk_score (15 bins, 240 cases)" in text and "not gated" in text


def test_probe_compare_pairs_plain_and_variant_verdicts_by_case_and_epoch(runs: dict[str, Path]) -> None:
    code, cmp = compare(str(runs["same1"]), "--probe", "order")
    rows = items(runs["same1"])
    plain = {(r["id"], r["epoch"]): r for r in rows if "variant" not in r}
    variants = {(r["id"], r["epoch"]): r for r in rows if r.get("variant") == "order"}
    pairs = [(plain[k], v) for k, v in variants.items()]
    assert cmp["settings"]["probe"] == "order" and cmp["gate"]["method"] == "probe-pairs"
    acc = cmp["metrics"]["accuracy"]
    assert acc["base"] == pytest.approx(np.mean([p["risk"] == p["expected"] for p, _ in pairs]))
    assert acc["new"] == pytest.approx(np.mean([v["risk"] == v["expected"] for _, v in pairs]))
    lost = {(p["id"], p["epoch"]) for p, v in pairs if p["risk"] == p["expected"] != v["risk"]}
    assert {(f["id"], f["epoch"]) for f in cmp["flipped"]["right_to_wrong"]} == lost and lost
    assert cmp["new"]["detector"] == "noisy (order variants)"
    assert code == (1 if cmp["regression"] else 0)


def test_bad_input_exits_2_naming_the_file_and_field(runs: dict[str, Path], tmp_path: Path) -> None:
    edited = shutil.copytree(runs["same1"], tmp_path / "edited")
    doc = json.loads((edited / "metrics.json").read_text())
    doc["metrics"]["epochs"]["self_agreement"]["all_agree"] = 0.99
    (edited / "metrics.json").write_text(json.dumps(doc))
    proc = run_cli("compare", str(edited), str(runs["same2"]))
    assert proc.returncode == 2
    assert f"{edited / 'metrics.json'}: metrics.epochs.self_agreement.all_agree: 0.99, but its journal" in proc.stderr
    proc = run_cli("compare", str(runs["same2"]), "--probe", "order")
    assert proc.returncode == 2 and f"{runs['same2']}: --probe order: the run asked no order variants" in proc.stderr
    proc = run_cli("compare", str(runs["same1"]), str(runs["same2"]), "--probe", "order")  # two runs: both must have it
    assert proc.returncode == 2 and f"{runs['same2']}: --probe order: the run asked no order variants" in proc.stderr
    proc = run_cli("compare", str(runs["same1"]), "--probe", "order", "--format", "html")
    assert proc.returncode == 2 and "--format html is not available" in proc.stderr
    assert run_cli("compare", str(runs["same1"])).returncode == 2
    assert run_cli("compare", str(runs["same1"]), str(runs["same2"]), "--alpha", "1.5").returncode == 2


def _all_agree(run: Path) -> float:
    by_case: dict[str, set[str]] = defaultdict(set)
    for r in plain_items(run):
        by_case[r["id"]].add(r["risk"])
    return sum(len(v) == 1 for v in by_case.values()) / len(by_case)


def _macro_f1_sd(run: Path) -> float:
    from sklearn.metrics import f1_score

    per_epoch = []
    for e in (1, 2, 3):
        rows = [r for r in plain_items(run) if r["epoch"] == e]
        truth, pred = [r["expected"] for r in rows], [r["risk"] for r in rows]
        per_epoch.append(f1_score(truth, pred, labels=sorted(set(truth) | set(pred)), average="macro"))
    return statistics.stdev(per_epoch)


def test_leaderboard_shows_repeat_columns_and_the_spread_over_runs(runs: dict[str, Path]) -> None:
    proc = run_cli("leaderboard", str(runs["same1"]), str(runs["same2"]), "--format", "json", "--bootstrap", "100")
    row = json.loads(proc.stdout)[0]["rows"][0]
    v = row["values"]
    assert len(row["runs"]) == 2
    assert v["self_agreement"] == pytest.approx(
        statistics.median([_all_agree(runs["same1"]), _all_agree(runs["same2"])])
    )
    assert v["epoch_sd"] == pytest.approx(statistics.median([_macro_f1_sd(runs["same1"]), _macro_f1_sd(runs["same2"])]))
    flips = [(p["risk"], v_["risk"]) for p in plain_items(runs["same1"]) for v_ in items(runs["same1"])
             if v_.get("variant") == "order" and (v_["id"], v_["epoch"]) == (p["id"], p["epoch"])]  # fmt: skip
    assert v["order_flip_rate"] == pytest.approx(sum(a != b for a, b in flips) / len(flips))
    assert v["names_flip_rate"] is None
    f1s = [json.loads((runs[k] / "metrics.json").read_text())["metrics"]["macro_f1"] for k in ("same1", "same2")]
    assert (v["runs_min"], v["runs_max"]) == pytest.approx((min(f1s), max(f1s)))
    md = run_cli("leaderboard", str(runs["same1"]), str(runs["same2"]), "--bootstrap", "100").stdout
    assert "epochs all agree" in md and "order flip rate" in md and "macro_f1 over runs (min-max)" in md
    assert "names flip rate" not in md  # no run asked names variants
    csv_text = run_cli("leaderboard", str(runs["same1"]), str(runs["same2"]), "--format", "csv", "--bootstrap", "100")
    (cells,) = list(csv.DictReader(io.StringIO(csv_text.stdout)))
    assert float(cells["self_agreement"]) == pytest.approx(v["self_agreement"]) and cells["names_flip_rate"] == ""
    alone = run_cli("leaderboard", str(runs["plain"]), "--bootstrap", "100").stdout
    for column in ("epochs all agree", "order flip rate", "sd over epochs", "over runs"):
        assert column not in alone


def test_history_shows_the_repeat_figures_when_a_run_has_them(runs: dict[str, Path], tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    for name in ("same1", "plain"):
        (results / name).symlink_to(runs[name])
    out = run_cli("history", str(results)).stdout
    assert "self_agreement" in out and "order_flip_rate" in out and "names_flip_rate" not in out
    picked = run_cli("history", str(results), "--metric", "self_agreement").stdout
    assert f"{_all_agree(runs['same1']):.6g}"[:6] in picked
