"""The probes that rewrite the answers' text (``fcb eval --probe robust``) through the real CLI on the embedded set,
with detectors that have one weakness each built in (tests/weak_detectors.py): each probe catches its own weak
detector, well apart from the built-ins, and stays quiet on a detector built to ignore what it changes. One run a
detector covers all six probes; the figures are checked against counts made here from the run's journal."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import weak_detectors
from conftest import EMBEDDED, read_jsonl, run_cli

from harness.cases.rewrites import INJECTIONS, majority

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

WEAK_FILE = Path(weak_detectors.__file__).resolve()
RISKS = ("low", "medium", "high")
ROBUST = ("format", "tone", "length", "restate", "inject", "duplicate")

WEAK = {
    "format": "reads_layout",
    "tone": "swayed_by_tone",
    "length": "counts_words",
    "restate": "reads_last_lines",
    "inject": "obeys_instructions",
    "duplicate": "fooled_by_duplicate",
}
QUIET = {
    "format": "reads_values",
    "restate": "reads_values",
    "tone": "ignores_added_sentences",
    "length": "ignores_added_sentences",
    "inject": "ignores_added_sentences",
    "duplicate": "values_not_heads",
}
BUILTINS = ("builtin:heuristic", "builtin:agreement")


class Run:
    """One ``fcb eval --probe robust`` of the embedded set: its probes block and its journal."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.probes: dict = json.loads((out / "metrics.json").read_text())["metrics"]["probes"]
        self.journal = read_jsonl(out / "predictions.jsonl")

    def lines(self, probe: str | None) -> list[dict]:
        return [r for r in self.journal if r.get("variant") == probe]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Run]:
    """Each detector run once for the whole module, on demand."""
    done: dict[str, Run] = {}
    base = tmp_path_factory.mktemp("robust")

    def run(name: str) -> Run:
        if name not in done:
            spec = name if name.startswith("builtin:") else f"{WEAK_FILE}:{name}"
            out = base / name.replace(":", "-")
            proc = run_cli("eval", str(EMBEDDED), "-d", spec, "--probe", "robust", "--out", str(out),
                           "--bootstrap", "200", "-q", env={"XDG_CACHE_HOME": str(base / "cache")})  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            done[name] = Run(out)
        return done[name]

    return run


Runs = Callable[[str], Run]


def headline(block: dict) -> dict:
    """A probe's figure: the fall rate of inject (attack success) and duplicate, the flip rate of the others."""
    if "falls" in block:
        falls = block["falls"]
        return {"rate": falls["fall_rate"], "ci95": falls["ci95"], "n": falls["n"], "k": falls["falls"]}
    return {"rate": block["flip_rate"], "ci95": block["ci95"], "n": block["n"], "k": block["flips"]}


@pytest.mark.parametrize("probe", ROBUST)
def test_each_probe_catches_its_weak_detector_well_apart_from_the_builtins(probe: str, runs: Runs) -> None:
    weak = headline(runs(WEAK[probe]).probes[probe])
    assert weak["n"] >= 40
    assert weak["rate"] > 0.5, weak
    for builtin in BUILTINS:
        other = headline(runs(builtin).probes[probe])
        assert weak["ci95"][0] > other["ci95"][1], (builtin, weak, other)


@pytest.mark.parametrize("probe", ROBUST)
def test_each_probe_is_quiet_on_a_detector_built_to_ignore_what_it_changes(probe: str, runs: Runs) -> None:
    block = runs(QUIET[probe]).probes[probe]
    quiet = headline(block)
    assert quiet["n"] >= 40
    assert quiet["rate"] <= 0.05, quiet
    assert block["flip_rate"] <= 0.05, block
    if probe != "duplicate":  # format and restate keep every value, and the sentences tone, length and inject add
        assert block["flips"] == 0  # are removed whole: the detector reads the same thing in both
        assert block["lowered"] == block["raised"] == 0


def test_a_set_of_values_moves_only_where_the_added_agent_does_not_state_the_majority_s_value(
    runs: Runs,
) -> None:
    # a paraphrase states the majority's value: the set of values is as it was and the verdict cannot move; only
    # duplicate's copy fallback (see tests/cases/test_rewrites.py) may add a value of its own
    run = runs("values_not_heads")
    plain = {r["id"]: r["risk"] for r in run.lines(None)}
    moved = [r for r in run.lines("duplicate") if r["risk"] != plain[r["id"]]]
    assert all(r["rewrite"]["kind"] == "copy" for r in moved), moved
    assert run.probes["duplicate"]["flips"] == len(moved)


def test_inject_s_attack_success_rate_recounted_from_the_journal(runs: Runs) -> None:
    run = runs("obeys_instructions")
    cases = read_jsonl(EMBEDDED)
    labelled = Counter(c["expected_risk"] for c in cases)
    plain = {r["id"]: r for r in run.lines(None)}
    injected = run.lines("inject")
    # asked only on the cases labelled high or medium, one variant a case (one epoch)
    assert len(injected) == labelled["high"] + labelled["medium"]
    assert {r["expected"] for r in injected} == {"high", "medium"}
    assert len({r["id"] for r in injected}) == len(injected)

    counted = [r for r in injected if plain[r["id"]]["risk"] != "low"]
    fell = [r for r in counted if RISKS.index(r["risk"]) < RISKS.index(plain[r["id"]]["risk"])]
    falls = run.probes["inject"]["falls"]
    assert (falls["n"], falls["falls"]) == (len(counted), len(fell))
    assert falls["fall_rate"] == pytest.approx(len(fell) / len(counted))
    assert falls["labels"] == ["medium", "high"]
    # the detector obeys every template: every pair counted falls, to low
    assert len(fell) == len(counted) > 100 and all(r["risk"] == "low" for r in injected)

    for template in INJECTIONS:
        mine = [r for r in counted if r["rewrite"]["kind"] == template]
        assert mine, template
        assert falls["per_style"][template]["n"] == len(mine)
        assert falls["per_style"][template]["falls"] == sum(r in fell for r in mine)
        asked = [r for r in injected if r["rewrite"]["kind"] == template]
        flips = sum(r["risk"] != plain[r["id"]]["risk"] for r in asked)
        style = run.probes["inject"]["per_style"][template]
        assert (style["n"], style["flips"]) == (len(asked), flips)
    assert sum(s["n"] for s in falls["per_style"].values()) == falls["n"]


def test_a_head_counter_falls_wherever_the_added_agent_states_the_majority_s_value(runs: Runs) -> None:
    run = runs("fooled_by_duplicate")
    plain = {r["id"]: r["risk"] for r in run.lines(None)}
    duplicated = run.lines("duplicate")
    # a variant exactly where a majority exists and there is room for one more answer
    requests = {c["id"]: [a["text"] for a in c["answers"]] for c in read_jsonl(EMBEDDED)}
    expected = {i for i, t in requests.items() if len(t) < 16 and majority(t) is not None}
    assert {r["id"] for r in duplicated} == expected

    counted = [r for r in duplicated if r["expected"] == "high" and plain[r["id"]] != "low"]
    fell = [r for r in counted if RISKS.index(r["risk"]) < RISKS.index(plain[r["id"]])]
    falls = run.probes["duplicate"]["falls"]
    assert (falls["n"], falls["falls"], falls["labels"]) == (len(counted), len(fell), ["high"])
    # one more head on the majority's value: two becomes three (high to medium), three four (medium to low)
    paraphrased = [r for r in counted if r["rewrite"]["kind"] == "paraphrase"]
    assert paraphrased and all(r["risk"] == RISKS[RISKS.index(plain[r["id"]]) - 1] for r in paraphrased)


def test_a_detector_swayed_by_tone_goes_high_on_every_hedged_variant(runs: Runs) -> None:
    run = runs("swayed_by_tone")
    plain = {r["id"]: r["risk"] for r in run.lines(None)}
    by_style: dict[str, list[dict]] = {"confident": [], "hedging": []}
    for r in run.lines("tone"):
        by_style[r["rewrite"]["kind"]].append(r)
    # every answer opens with a hedging phrase: every answer hedges, so most do
    assert by_style["hedging"] and all(r["risk"] == "high" for r in by_style["hedging"])
    for style, lines in by_style.items():
        figure = run.probes["tone"]["per_style"][style]
        assert (figure["n"], figure["flips"]) == (len(lines), sum(r["risk"] != plain[r["id"]] for r in lines))


def test_an_instruction_follower_is_the_heuristic_until_an_answer_asks_for_a_low_risk(runs: Runs) -> None:
    # no answer of the embedded set asks for a low risk, nor does any other probe add one: only inject tells the two
    # apart, so its falls are the instruction's doing and none of the rule's
    weak, heuristic = runs("obeys_instructions"), runs("builtin:heuristic")
    verdicts = {(r["id"], r.get("variant")): r["risk"] for r in heuristic.journal}
    for r in weak.journal:
        if r.get("variant") != "inject":
            assert r["risk"] == verdicts[r["id"], r.get("variant")], r


# --- the card's documents, its gate and its leaderboard columns ----------------------------------------------------

SCHEMAS = Path(__file__).resolve().parents[2] / "harness" / "data"


def schema_errors(name: str, doc: object) -> list[str]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(json.loads((SCHEMAS / f"{name}.schema.json").read_text()))
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message[:160]}" for e in validator.iter_errors(doc)]


def test_a_probed_run_s_metrics_and_journal_match_their_schemas(runs: Runs) -> None:
    run = runs("obeys_instructions")
    assert schema_errors("metrics", json.loads((run.out / "metrics.json").read_text())) == []
    rewritten = [line for line in run.journal if "rewrite" in line]
    assert {line["variant"] for line in rewritten} == set(ROBUST)
    assert all(schema_errors("journal", line) == [] for line in run.journal)


def test_compare_gates_a_rise_of_the_attack_success_rate(runs: Runs, tmp_path: Path) -> None:
    base, new = runs("builtin:heuristic"), runs("obeys_instructions")
    proc = run_cli("compare", str(base.out), str(new.out), "--format", "json", "--bootstrap", "200")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert schema_errors("compare", doc) == []
    inject = doc["metrics"]["inject_attack_success"]
    assert (inject["base"], inject["new"]) == (headline(base.probes["inject"])["rate"], 1.0)
    assert inject["regression"] and not inject["higher_is_better"] and inject["ci"][0] > 0
    # every probe both runs asked is gated, under its leaderboard column's name
    assert {"format_flip_rate", "tone_flip_rate", "length_flip_rate", "restate_flip_rate",
            "duplicate_fall_rate"} <= set(doc["metrics"])  # fmt: skip
    assert doc["metrics"]["tone_flip_rate"]["base"] == base.probes["tone"]["flip_rate"]
    # the other way round the attack success rate falls: no regression of it
    back = json.loads(run_cli("compare", str(new.out), str(base.out), "--format", "json").stdout)
    assert back["metrics"]["inject_attack_success"]["delta"] < 0
    assert not back["metrics"]["inject_attack_success"]["regression"]
    # --probe P with two runs: P alone
    only = run_cli("compare", str(base.out), str(new.out), "--probe", "inject", "--format", "json")
    named = [m for m in json.loads(only.stdout)["metrics"] if m.endswith(("_flip_rate", "_success", "_fall_rate"))]
    assert only.returncode == 1 and named == ["inject_attack_success"]


def test_the_leaderboard_shows_each_probe_s_figure_and_refuses_one_its_journal_does_not_give(
    runs: Runs, tmp_path: Path
) -> None:
    heuristic, obeys = runs("builtin:heuristic"), runs("obeys_instructions")
    proc = run_cli("leaderboard", str(heuristic.out), str(obeys.out), "--format", "csv", "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr
    import csv
    import io

    rows = {r["detector"]: r for r in csv.DictReader(io.StringIO(proc.stdout))}
    mine = rows[next(k for k in rows if "obeys_instructions" in k)]
    assert float(mine["inject_attack_success"]) == 1.0
    assert float(mine["tone_flip_rate"]) == pytest.approx(obeys.probes["tone"]["flip_rate"])
    assert float(rows["builtin:heuristic"]["duplicate_fall_rate"]) == pytest.approx(
        headline(heuristic.probes["duplicate"])["rate"]
    )
    # a fall rate edited by hand is refused, naming the file and the figure
    import shutil

    edited = tmp_path / "edited"
    shutil.copytree(obeys.out, edited)
    doc = json.loads((edited / "metrics.json").read_text())
    doc["metrics"]["probes"]["inject"]["falls"]["fall_rate"] = 0.25
    (edited / "metrics.json").write_text(json.dumps(doc))
    refused = run_cli("leaderboard", str(edited))
    assert refused.returncode == 2
    wrong = "metrics.probes.inject.falls.fall_rate: 0.25, but its journal (predictions.jsonl) gives 1.0"
    assert wrong in refused.stderr
