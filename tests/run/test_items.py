"""The item stage's fields (`harness.run.items`) and its figures (`harness.run.tally`), held to hand-worked values:
which items a run asks and how many it left unasked, the journal fields of an item, the epoch each pulled item sets
for the response cache, and the figures of a run with epochs and probes (every item counted in the operational
figures, at the run's prices). tests/run/test_item_stage.py holds the plan of a probed run."""

from __future__ import annotations

import contextvars
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.cases.reader import Scan, scan
from harness.detectors.options import DetectorOptions
from harness.figures import compute
from harness.repeats import epochs_block, probes_block
from harness.run.cache import EPOCH
from harness.run.items import PLAIN, ItemPlan, build_item, has_items, item_fields, item_source, plan_items
from harness.run.settings import EvalSettings
from harness.run.tally import add_item_figures, run_figures
from harness.spec import parse_spec
from harness.types import CaseLabels, ItemKey, Outcome


def _case(i: int, texts: list[str], evidence: list[str] | None = None) -> dict[str, Any]:
    case: dict[str, Any] = {
        "id": f"FCB-{i:04d}",
        "category": "genuine_agreement_correct",
        "question": f"Question {i}?",
        "answers": [{"agent_id": f"agent-{k}", "text": t, "correct": True} for k, t in enumerate(texts)],
        "ground_truth": "x",
        "expected_risk": "low",
        "majority_correct": True,
        "rationale": "r",
        "source": "original",
        "tags": [],
    }
    if evidence:
        case["evidence"] = evidence
    return case


@pytest.fixture
def scanned(tmp_path: Path) -> Any:
    """Three cases: 1 has two different answers and two passages (order and evidence-order variants), 2 has two
    identical answers and no passage (no variant at all), 3 two different answers and one passage (order only)."""
    path = tmp_path / "cases.jsonl"
    cases = [_case(1, ["a", "b"], ["e1", "e2"]), _case(2, ["same", "same"]), _case(3, ["c", "d"], ["only"])]
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    result = scan(str(path), spool=True)
    assert not result.errors
    yield result
    result.close()


def _settings(**kwargs: Any) -> EvalSettings:
    return EvalSettings(cases="cases.jsonl", detector=parse_spec("builtin:agreement"), **kwargs)


# --- has_items, ItemPlan, item_fields -----------------------------------------------------------------------------


def test_has_items_only_with_two_epochs_or_a_probe() -> None:
    assert not has_items(_settings())
    assert not has_items(_settings(epochs=1))
    assert has_items(_settings(epochs=2))
    assert has_items(_settings(probes=("order",)))


def test_a_plan_is_as_long_as_its_items() -> None:
    assert len(ItemPlan([])) == 0
    assert len(ItemPlan([(None, ItemKey("a")), (None, ItemKey("a", 2))])) == 2  # type: ignore[list-item]
    assert ItemPlan([]).not_possible == {}


def test_item_fields_say_the_epoch_only_with_several_epochs() -> None:
    assert item_fields(ItemKey("a", 1), 1, None) == {}
    assert item_fields(ItemKey("a", 2), 2, None) == {"epoch": 2}
    assert item_fields(ItemKey("a", 1, "order"), 1, [1, 0]) == {"variant": "order", "permutation": [1, 0]}
    assert item_fields(ItemKey("a", 3, "names"), 3, None) == {"epoch": 3, "variant": "names"}


# --- plan_items, build_item -----------------------------------------------------------------------------------------


def test_three_epochs_plan_each_case_three_times_in_file_order(scanned: Scan) -> None:
    """3 cases x 3 epochs = 9 items, no probe: nothing counted apart."""
    plan = plan_items(_settings(epochs=3), scanned.labels, scanned)
    assert [key for _, key in plan.items] == [ItemKey(f"FCB-000{i}", e) for i in (1, 2, 3) for e in (1, 2, 3)]
    assert plan.not_possible == {} and len(plan) == 9
    assert [lab.case_id for lab, _ in plan.items][:3] == ["FCB-0001"] * 3


def test_one_epoch_and_the_order_probe(scanned: Scan) -> None:
    """Order is possible for cases 1 and 3 (two different answers), not for 2: 3 + 2 = 5 items, 1 counted apart."""
    plan = plan_items(_settings(probes=("order",)), scanned.labels, scanned)
    assert [key for _, key in plan.items] == [
        ItemKey("FCB-0001"), ItemKey("FCB-0001", 1, "order"), ItemKey("FCB-0002"),
        ItemKey("FCB-0003"), ItemKey("FCB-0003", 1, "order"),
    ]  # fmt: skip
    assert plan.not_possible == {"order": 1}


def test_inject_is_planned_only_on_cases_labelled_high_or_medium(scanned: Scan) -> None:
    """All three cases are labelled low: no inject item, each counted apart; relabelled high, medium and low (the
    harness reads the label to plan; the variant itself is built from the request alone), 1 and 2 get one."""
    plan = plan_items(_settings(probes=("inject",)), scanned.labels, scanned)
    assert [key.variant for _, key in plan.items] == [None, None, None] and plan.not_possible == {"inject": 3}
    relabelled = [
        replace(lab, expected_risk=r) for lab, r in zip(scanned.labels, ("high", "medium", "low"), strict=True)
    ]
    plan = plan_items(_settings(probes=("inject", "tone")), relabelled, scanned)
    assert [(key.case_id[-1], key.variant) for _, key in plan.items] == [
        ("1", None), ("1", "tone"), ("1", "inject"), ("2", None), ("2", "tone"), ("2", "inject"), ("3", None),
        ("3", "tone")]  # fmt: skip
    assert plan.not_possible == {"inject": 1, "tone": 0}


def test_a_rewriting_variant_s_item_fields_carry_its_rewrite(scanned: Scan) -> None:
    case = scanned.case(scanned.labels[0].line)
    request, fields = build_item(_settings(probes=("tone",), probe_seed=4), case, ItemKey("FCB-0001", 1, "tone"))
    assert fields["variant"] == "tone" and "permutation" not in fields and "epoch" not in fields
    tone = fields["rewrite"]["kind"]
    assert tone in ("confident", "hedging") and fields["rewrite"]["answers"] == [0, 1]
    opening = request["answers"][0]["text"].removesuffix("\n\na")
    assert request["answers"][1]["text"] == f"{opening}\n\nb"  # one phrase for both answers


def test_a_probe_whose_draw_decides_whether_a_variant_fits_is_planned_epoch_by_epoch(tmp_path: Path) -> None:
    """tone draws one opening a case per epoch; an answer 29 characters short of the 16,000 limit takes only the
    shortest confident opening (27 characters and a blank line): some epochs have a tone variant, others none, and
    every planned item builds."""
    from harness.cases.rewrites import CONFIDENT, MAX_TEXT, style_of

    case_id = next(f"FCB-{i:04d}" for i in range(1, 100) if style_of(0, "tone", f"FCB-{i:04d}") == "confident")
    shortest = min(CONFIDENT, key=len)
    assert len(shortest) == 27 and sorted(map(len, CONFIDENT))[1] > 27
    case = {**_case(1, ["x" * (MAX_TEXT - 29), "z" * (MAX_TEXT - 29)]), "id": case_id}  # both at the edge
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(case) + "\n")
    result = scan(str(path), spool=True)
    try:
        assert not result.errors and len(result.labels) == 1
        plan = plan_items(_settings(probes=("tone",), epochs=12), result.labels, result)
        epochs = [key.epoch for _, key in plan.items if key.variant == "tone"]
        assert 0 < len(epochs) < 12 and plan.not_possible == {"tone": 0}  # 1 in 4 draws: 12 epochs hold both kinds
        for _, key in plan.items:
            request, _ = build_item(_settings(probes=("tone",), epochs=12), result.case(result.labels[0].line), key)
            if key.variant == "tone":
                assert request["answers"][0]["text"].startswith(shortest)
    finally:
        result.close()


def test_a_variant_that_does_not_exist_is_an_internal_error(scanned: Scan) -> None:
    case = scanned.case(scanned.labels[1].line)
    with pytest.raises(AssertionError) as err:
        build_item(_settings(probes=("order",)), case, ItemKey("FCB-0002", 1, "order"))
    assert str(err.value) == f"{ItemKey('FCB-0002', 1, 'order')}: no variant"


def test_a_plain_build_is_the_request_with_no_fields(scanned: Scan) -> None:
    case = scanned.case(scanned.labels[0].line)
    request, fields = build_item(_settings(), case, ItemKey("FCB-0001"))
    assert fields is PLAIN and request["task"] == "Question 1?"
    request, _ = build_item(_settings(anonymize_agents=True), case, ItemKey("FCB-0001"))
    assert [a["agent_id"] for a in request["answers"]] != ["agent-0", "agent-1"]


# --- item_source ----------------------------------------------------------------------------------------------------


def _pull(settings: EvalSettings, scanned: Scan, todo: list[tuple[CaseLabels, ItemKey]]) -> list[tuple[Any, ...]]:
    """Pull every item in a fresh context, noting the epoch the cache would see after each pull."""

    def go() -> list[tuple[Any, ...]]:
        return [(lab.case_id, key, req["task"], dict(fields), EPOCH.get())
                for lab, key, req, fields in item_source(settings, scanned, todo)]  # fmt: skip

    return contextvars.copy_context().run(go)


def test_a_plain_source_yields_each_request_and_leaves_the_epoch_at_one(scanned: Scan) -> None:
    labs = scanned.labels
    todo = [(labs[2], ItemKey("FCB-0003")), (labs[0], ItemKey("FCB-0001"))]
    got = _pull(_settings(), scanned, todo)
    assert got == [
        ("FCB-0003", ItemKey("FCB-0003"), "Question 3?", {}, 1),
        ("FCB-0001", ItemKey("FCB-0001"), "Question 1?", {}, 1),
    ]


def test_an_items_source_sets_each_items_epoch_as_it_is_pulled(scanned: Scan) -> None:
    """Epoch 3, then 2 with the order probe, then 1: the cache sees 3, 2, 1; the fields say the same."""
    labs = scanned.labels
    todo = [
        (labs[0], ItemKey("FCB-0001", 3)),
        (labs[2], ItemKey("FCB-0003", 2, "order")),
        (labs[1], ItemKey("FCB-0002", 1)),
    ]
    got = _pull(_settings(epochs=3, probes=("order",)), scanned, todo)
    assert [(g[0], g[3], g[4]) for g in got] == [
        ("FCB-0001", {"epoch": 3}, 3),
        ("FCB-0003", {"epoch": 2, "variant": "order", "permutation": [1, 0]}, 2),
        ("FCB-0002", {"epoch": 1}, 1),
    ]


# --- add_item_figures -----------------------------------------------------------------------------------------------


def _lab(case_id: str, expected: str = "high") -> CaseLabels:
    return CaseLabels(
        line=1,
        case_id=case_id,
        content_hash=f"h-{case_id}",
        category="echo_cascade" if expected == "high" else "genuine_agreement_correct",
        expected_risk=expected,  # type: ignore[arg-type]
        majority_correct=expected != "high",
        n_answers=3,
        has_evidence=False,
        families=(),
        families_complete=False,
        any_saw_other_answers=False,
        any_shared_context=False,
        tags=(),
        source_dataset="original",
        source_item=case_id,
    )


def _out(case_id: str, risk: str | None, epoch: int = 1, variant: str | None = None, **kw: Any) -> Outcome:
    fields: dict[str, Any] = {"content_hash": f"h-{case_id}", "score": None, "attempts": 1, "latency_s": 1.0}
    fields |= kw
    error = None if risk is not None else "timeout"
    return Outcome(case_id=case_id, risk=risk, error_kind=error, epoch=epoch, variant=variant, **fields)  # type: ignore[arg-type]


LABELS = [_lab("a", "high"), _lab("b", "low")]


def _items() -> dict[ItemKey, Outcome]:
    """a: epoch 1 high (3 attempts), epoch 2 low; b: epoch 1 low, epoch 2 an error (2 attempts); and a stale line
    for a (epoch 3, an old content hash) that is not in scope. Tokens: a/1 has 1,000,000 prompt and 500,000
    completion tokens."""
    return {
        ItemKey("a", 1): _out("a", "high", 1, attempts=3, prompt_tokens=1_000_000, completion_tokens=500_000),
        ItemKey("a", 2): _out("a", "low", 2),
        ItemKey("b", 1): _out("b", "low", 1),
        ItemKey("b", 2): _out("b", None, 2, attempts=2),
        ItemKey("a", 3): _out("a", "high", 3, content_hash="old", attempts=5),
    }


def test_a_plain_run_gets_no_item_figures() -> None:
    metrics: dict[str, Any] = {"operational": "as it was"}
    add_item_figures(metrics, LABELS, _items(), epochs=1, reducer="mode", probes=(), not_possible={}, wall_s=2.0,  # type: ignore[arg-type]
                     n_boot=0, seed=0)  # fmt: skip
    assert metrics == {"operational": "as it was"}


def test_epochs_count_every_item_in_scope_in_the_operational_figures() -> None:
    """In scope: 4 items (the stale a/3 is left out). Retries: (3-1) + 0 + 0 + (2-1) = 3; errors 1 (timeout);
    wall 2.0 s -> 4 / 2.0 = 2.0 items a second; cost at $2 and $4 a million: 1.0 * 2 + 0.5 * 4 = $4.0."""
    metrics: dict[str, Any] = {}
    add_item_figures(metrics, LABELS, _items(), epochs=2, reducer="first", probes=(), not_possible={}, wall_s=2.0,  # type: ignore[arg-type]
                     prices=(2.0, 4.0), n_boot=7, seed=3)  # fmt: skip
    op = metrics["operational"]
    assert (op["cases"], op["retries"], op["errors"], op["wall_s"], op["cases_per_s"]) == (4, 3, 1, 2.0, 2.0)
    assert op["tokens"]["cost_usd"] == pytest.approx(4.0)
    assert op["tokens"]["prompt"] == 1_000_000 and op["tokens"]["completion"] == 500_000
    assert "probes" not in metrics
    block = metrics["epochs"]
    assert block["n"] == 2 and block["reducer"] == "first" and len(block["per_epoch"]) == 2
    expected = epochs_block(LABELS, _items(), n_epochs=2, reducer="first", n_boot=7, seed=3)
    assert json.dumps(block, sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_one_epoch_with_a_probe_gets_the_probe_block_and_no_epochs_block() -> None:
    """Items: a and b as they are, a's order variant; b allowed none (not_possible 1). Operational: 3 items,
    wall 0.5 s -> 6.0 a second."""
    items = {
        ItemKey("a"): _out("a", "high"),
        ItemKey("a", 1, "order"): _out("a", "low", 1, "order"),
        ItemKey("b"): _out("b", "low"),
    }
    metrics: dict[str, Any] = {}
    add_item_figures(metrics, LABELS, items, epochs=1, reducer="mode", probes=("order",), not_possible={"order": 1},  # type: ignore[arg-type]
                     wall_s=0.5, n_boot=5, seed=2)  # fmt: skip
    assert "epochs" not in metrics
    assert metrics["operational"]["cases"] == 3 and metrics["operational"]["cases_per_s"] == 6.0
    assert metrics["operational"]["tokens"] is None
    expected = probes_block(LABELS, items, ("order",), n_epochs=1, not_possible={"order": 1}, n_boot=5, seed=2)
    assert json.dumps(metrics["probes"], sort_keys=True) == json.dumps(expected, sort_keys=True)
    # the probe's figures of this run, by hand: a flipped high -> low under reordering, 1 flip of 1 pair
    order = metrics["probes"]["order"]
    assert order["not_possible"] == 1


def test_epochs_with_a_probe_get_both_blocks_with_their_epoch_count() -> None:
    items = {**_items(), ItemKey("a", 1, "order"): _out("a", "low", 1, "order")}
    metrics: dict[str, Any] = {}
    add_item_figures(metrics, LABELS, items, epochs=2, reducer="mode", probes=("order",), not_possible={},  # type: ignore[arg-type]
                     wall_s=1.0, n_boot=0, seed=0)  # fmt: skip
    assert metrics["epochs"]["n"] == 2 and set(metrics["probes"]) == {"order"}
    expected = probes_block(LABELS, items, ("order",), n_epochs=2, not_possible={}, n_boot=0, seed=0)
    assert json.dumps(metrics["probes"], sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert metrics["operational"]["cases"] == 5


# --- run_figures ----------------------------------------------------------------------------------------------------


def _priced(**kwargs: Any) -> EvalSettings:
    options = DetectorOptions(price_prompt_per_mtok=2.0, price_completion_per_mtok=4.0)
    return _settings(options=options, n_boot=9, seed=4, ece_bins=3, **kwargs)


def test_a_plain_runs_figures_count_the_cases_not_run_and_unasked(scanned: Scan) -> None:
    """Labels a (high), b (low), c (high); answers: a high (score 0.9, 1,000,000 prompt tokens), b high (0.6); c
    not asked. n_not_run 1, unasked 1; cost 1.0 * $2 = $2.0; the rest as `compute` makes it with the settings'
    bootstrap, seed and bins."""
    labels = [_lab("a"), _lab("b", "low"), _lab("c")]
    items = {
        ItemKey("a"): _out("a", "high", score=0.9, prompt_tokens=1_000_000),
        ItemKey("b"): _out("b", "high", score=0.6),
    }
    plan = ItemPlan([(lab, ItemKey(lab.case_id)) for lab in labels])
    metrics, reduced, unasked = run_figures(_priced(), labels, items, plan, 3.0)
    assert unasked == 1 and metrics["n_not_run"] == 1
    assert list(reduced) == ["a", "b"] and reduced["a"] is items[ItemKey("a")]
    op = metrics["operational"]
    assert op["cases"] == 2 and op["wall_s"] == 3.0 and op["tokens"]["cost_usd"] == pytest.approx(2.0)
    assert "epochs" not in metrics or metrics["epochs"] is None
    expected = compute(labels, reduced, wall_s=3.0, n_boot=9, seed=4, prices=(2.0, 4.0), ece_bins=3)
    assert json.dumps(metrics, sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_an_epochs_runs_figures_reduce_by_the_settings_reducer() -> None:
    """Three epochs. a (expected high): high, low, low; b (expected low): low, low, an error. With ``first`` a is
    high (right); with mode low wins 2 to 1 (wrong). Planned 3 x 2 = 6 items + one never answered (b, 4) ->
    unasked 1. Operational: 6 items, wall 3.0 s -> 2.0 a second; cost 1.0 * $2 + 0.5 * $4 = $4.0."""
    items = {
        ItemKey("a", 1): _out("a", "high", 1, prompt_tokens=1_000_000, completion_tokens=500_000),
        ItemKey("a", 2): _out("a", "low", 2),
        ItemKey("a", 3): _out("a", "low", 3),
        ItemKey("b", 1): _out("b", "low", 1),
        ItemKey("b", 2): _out("b", "low", 2),
        ItemKey("b", 3): _out("b", None, 3),
    }
    plan = ItemPlan(
        [(lab, ItemKey(lab.case_id, e)) for lab in LABELS for e in (1, 2, 3)] + [(LABELS[1], ItemKey("b", 4))]
    )
    metrics, reduced, unasked = run_figures(_priced(epochs=3, epoch_reducer="first"), LABELS, items, plan, 3.0)
    assert unasked == 1
    assert reduced["a"].risk == "high" and reduced["b"].risk == "low"
    assert metrics["accuracy"] == 1.0
    assert metrics["epochs"]["reducer"] == "first" and metrics["epochs"]["n"] == 3
    op = metrics["operational"]
    assert (op["cases"], op["cases_per_s"]) == (6, 2.0) and op["tokens"]["cost_usd"] == pytest.approx(4.0)
    metrics, moded, _ = run_figures(_priced(epochs=3, epoch_reducer="mode"), LABELS, items, plan, 3.0)
    assert moded["a"].risk == "low" and moded["b"].risk == "low"
    assert metrics["accuracy"] == 0.5  # a wrong, b right: 1 of 2


# --- the variant an item is sent, and the seeds of the figures ---------------------------------------------------


def test_an_items_variant_is_seeded_by_the_probe_seed_the_case_and_the_epoch(tmp_path: Path) -> None:
    """Five different answers: 120 orders. The permutation sent is the one `derive` makes for (seed, case id,
    epoch) exactly; another seed, case id or epoch gives another (checked here: they differ for these values)."""
    from harness.cases.request import build_request
    from harness.cases.variants import derive

    case = _case(7, ["v", "w", "x", "y", "z"])
    settings = _settings(epochs=3, probes=("order",), probe_seed=11)
    request = build_request(case, anonymize_agents=False)

    def perm(seed: int, case_id: str, epoch: int) -> list[int]:
        got = derive(request, "order", seed, case_id, epoch)
        assert got is not None
        return got[1]

    _, fields = build_item(settings, case, ItemKey("FCB-0007", 2, "order"))
    assert fields["permutation"] == perm(11, "FCB-0007", 2)
    others = [perm(0, "FCB-0007", 2), perm(11, "FCB-0008", 2), perm(11, "FCB-0007", 1)]
    assert all(o != fields["permutation"] for o in others)
    _, fields3 = build_item(settings, case, ItemKey("FCB-0007", 3, "order"))
    assert fields3["permutation"] == perm(11, "FCB-0007", 3)


def test_a_plain_source_sends_anonymized_agents_when_asked(scanned: Scan) -> None:
    labs = scanned.labels
    todo = [(labs[0], ItemKey("FCB-0001"))]

    def ids(settings: EvalSettings) -> list[str]:
        ((_, _, request, _),) = list(item_source(settings, scanned, todo))
        return [a["agent_id"] for a in request["answers"]]

    assert ids(_settings()) == ["agent-0", "agent-1"]
    anonymized = ids(_settings(anonymize_agents=True))
    assert "agent-0" not in anonymized and len(anonymized) == 2


def _many() -> tuple[list[CaseLabels], dict[ItemKey, Outcome]]:
    """31 cases, two epochs and an order variant each: cases 0-9 agree with themselves (high, high), the others
    flip (high, low); the variants flip on the even cases. Enough cases (steps of 1/31) for a bootstrap interval
    of 50 draws to depend on its seed."""
    labels = [_lab(f"c{i}", "high" if i % 2 else "low") for i in range(31)]
    items: dict[ItemKey, Outcome] = {}
    for i, lab in enumerate(labels):
        items[ItemKey(lab.case_id, 1)] = _out(lab.case_id, "high", 1, score=0.8)
        items[ItemKey(lab.case_id, 2)] = _out(lab.case_id, "high" if i < 10 else "low", 2, score=0.3)
        items[ItemKey(lab.case_id, 1, "order")] = _out(lab.case_id, "low" if i % 2 == 0 else "high", 1, "order")
    return labels, items


def test_the_blocks_bootstrap_with_the_runs_seed() -> None:
    """The epochs and probes blocks equal those made with the run's seed (5), and differ from seed 6's: the
    intervals depend on the seed, so a block made with another (or none) shows."""
    labels, items = _many()
    metrics: dict[str, Any] = {}
    add_item_figures(metrics, labels, items, epochs=2, reducer="mode", probes=("order",), not_possible={"order": 0},
                     wall_s=1.0, n_boot=50, seed=5)  # fmt: skip
    ours = epochs_block(labels, items, n_epochs=2, reducer="mode", n_boot=50, seed=5)
    other = epochs_block(labels, items, n_epochs=2, reducer="mode", n_boot=50, seed=6)
    assert json.dumps(ours, sort_keys=True) != json.dumps(other, sort_keys=True)
    assert json.dumps(metrics["epochs"], sort_keys=True) == json.dumps(ours, sort_keys=True)
    probes = probes_block(labels, items, ("order",), n_epochs=2, not_possible={"order": 0}, n_boot=50, seed=5)
    other_p = probes_block(labels, items, ("order",), n_epochs=2, not_possible={"order": 0}, n_boot=50, seed=6)
    assert json.dumps(probes, sort_keys=True) != json.dumps(other_p, sort_keys=True)
    assert json.dumps(metrics["probes"], sort_keys=True) == json.dumps(probes, sort_keys=True)


def test_run_figures_pass_the_settings_probes_plan_and_seed_to_the_item_figures() -> None:
    """A run with 2 epochs and the order probe, seed 5, 50 resamples; the plan counted 3 cases with no order
    variant: the probes block says 3, and both blocks are those of seed 5."""
    labels, items = _many()
    settings = _settings(epochs=2, probes=("order",), n_boot=50, seed=5)
    plan = ItemPlan([(lab, key) for key in items for lab in labels if lab.case_id == key.case_id], {"order": 3})
    metrics, _, unasked = run_figures(settings, labels, items, plan, 1.0)
    assert unasked == 0
    assert metrics["probes"]["order"]["not_possible"] == 3
    ours = epochs_block(labels, items, n_epochs=2, reducer="mode", n_boot=50, seed=5)
    assert json.dumps(metrics["epochs"], sort_keys=True) == json.dumps(ours, sort_keys=True)
    probes = probes_block(labels, items, ("order",), n_epochs=2, not_possible={"order": 3}, n_boot=50, seed=5)
    assert json.dumps(metrics["probes"], sort_keys=True) == json.dumps(probes, sort_keys=True)


def test_the_per_style_figures_follow_the_run_s_probe_seed() -> None:
    """31 cases, the tone and inject variants of _many's order items: each case's tone and template come from the
    probe seed and the case id (`style_of`); the per-style figures are counted over those cases, here by hand."""
    from harness.cases.rewrites import style_of

    labels, items = _many()
    moved = {k._replace(variant=p): replace(o, variant=p) for k, o in items.items() if k.variant for p in ("tone",)}
    moved |= {k._replace(variant="inject"): replace(o, variant="inject") for k, o in items.items() if k.variant}
    both = {k: o for k, o in items.items() if not k.variant} | moved
    for seed in (0, 7):
        settings = _settings(epochs=2, probes=("tone", "inject"), n_boot=0, probe_seed=seed)
        plan = ItemPlan([(lab, key) for key in both for lab in labels if lab.case_id == key.case_id], {})
        metrics, _, _ = run_figures(settings, labels, both, plan, 1.0)
        for probe in ("tone", "inject"):
            per_style = metrics["probes"][probe]["per_style"]
            for style, block in per_style.items():
                cases = [i for i, lab in enumerate(labels) if style_of(seed, probe, lab.case_id) == style]
                # one pair a case (epoch 1), a flip on the even cases (order variant low, plain high)
                assert (block["n"], block["flips"]) == (len(cases), sum(1 for i in cases if i % 2 == 0)), (seed, style)
        tone = metrics["probes"]["tone"]["per_style"]
        assert sum(b["n"] for b in tone.values()) == 31 and all(b["n"] for b in tone.values())
    # the two seeds split the cases differently (a test that the seed reaches style_of at all)
    assert [style_of(0, "tone", f"c{i}") for i in range(31)] != [style_of(7, "tone", f"c{i}") for i in range(31)]


def test_the_probe_seed_defaults_to_the_cli_s_default_of_zero() -> None:
    labels, items = _many()
    tone = {k._replace(variant="tone"): replace(o, variant="tone") for k, o in items.items() if k.variant}
    plain = {k: o for k, o in items.items() if not k.variant}
    given: dict[str, Any] = {}
    default: dict[str, Any] = {}
    common: dict[str, Any] = dict(epochs=2, reducer="mode", probes=("tone",), not_possible={}, wall_s=1.0, n_boot=0,
                                  seed=0)  # fmt: skip
    add_item_figures(given, labels, plain | tone, probe_seed=0, **common)
    add_item_figures(default, labels, plain | tone, **common)
    assert default["probes"]["tone"]["per_style"] == given["probes"]["tone"]["per_style"]
    other: dict[str, Any] = {}
    add_item_figures(other, labels, plain | tone, probe_seed=1, **common)
    assert other["probes"]["tone"]["per_style"] != given["probes"]["tone"]["per_style"]
