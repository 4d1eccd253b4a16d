"""The epochs and probes figures in the reports (report.md, report.html): rows and notes built from a metrics
document's ``epochs`` and ``probes`` blocks (`harness.repeats`), and, for the case explorer, each case's verdicts
over the epochs and the variants whose verdict differs from the request's (read from the journal's items)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from harness.documents import FallRate, FlipRate, JournalRecord, Metrics, Probe
from harness.repeats import EPOCH_FIGURES, INDEPENDENT, INFORMATIVE
from harness.tables import figure, interval, percent
from harness.types import ItemKey

EPOCH_HEADER = ["epoch", "cases", *EPOCH_FIGURES]
AGREEMENT_HEADER = ["cases", "all epochs agree", "95% CI", "pairwise agreement", "Fleiss' kappa"]
PROBE_HEADER = ["probe", "the verdict should", "figure", "rate", "95% CI", "lowered", "raised", "high to low",
                "low to high", "cases", "no variant", "epochs disagree"]  # fmt: skip
STYLE_HEADER = ["probe", "style", "figure", "rate", "95% CI"]
FIGURE = {"inject": "attack success rate", "duplicate": "fall rate on high"}
"""The figure of a probe whose variant should never lower the verdict (`harness.vocabulary.LOWERING`); every other
probe's is its flip rate."""


def _rate(block: FlipRate) -> str:
    return f"{percent(block['flip_rate'])} ({block['flips']}/{block['n']})"


def epoch_rows(m: Metrics) -> list[list[str]]:
    """Each epoch's headline figures, then their mean and sd; empty without epochs."""
    ep = m.get("epochs")
    if not ep:
        return []
    rows = [[str(e["epoch"]), str(e["n_cases"]), *(figure(e[name]) for name in EPOCH_FIGURES)] for e in ep["per_epoch"]]  # type: ignore[literal-required]
    rows.append(["mean", "", *(figure(ep["spread"][name]["mean"]) for name in EPOCH_FIGURES)])
    rows.append(["sd", "", *(figure(ep["spread"][name]["sd"]) for name in EPOCH_FIGURES)])
    return rows


def agreement_rows(m: Metrics) -> list[list[str]]:
    ep = m.get("epochs")
    if not ep:
        return []
    a = ep["self_agreement"]
    return [[str(a["n_cases"]), percent(a["all_agree"]), interval(a["all_agree_ci95"], percent), percent(a["pairwise"]),
             figure(a["fleiss_kappa"])]]  # fmt: skip


def epochs_note(m: Metrics) -> str:
    ep = m.get("epochs")
    if not ep:
        return ""
    rule = ("the most frequent verdict of the answered epochs, a tie going to the earliest epoch's"
            if ep["reducer"] == "mode" else "epoch 1's verdict as it is")  # fmt: skip
    return (f"Every case was asked {ep['n']} times. The headline counts one verdict a case: {rule} (--epoch-reducer "
            f"{ep['reducer']}); its risk_score is the mean of the epochs' scores. An error counts as a verdict of its "
            "own in the agreement figures.")  # fmt: skip


def _headline(p: Probe) -> FlipRate:
    """A probe's figure as a flip rate: the flip rate, or the fall rate of a probe that should never lower."""
    falls = p.get("falls")
    if falls is None:
        return p
    return {"n": falls["n"], "flips": falls["falls"], "flip_rate": falls["fall_rate"], "ci95": falls["ci95"]}


def _headline_of(block: FlipRate | FallRate) -> FlipRate:
    if "falls" in block:
        fall = cast(FallRate, block)
        return {"n": fall["n"], "flips": fall["falls"], "flip_rate": fall["fall_rate"], "ci95": fall["ci95"]}
    return block


def probe_rows(m: Metrics) -> list[list[str]]:
    """The robustness card: one row a probe, its figure (`FIGURE`) and the verdicts' moves; empty without probes."""
    rows = []
    for name, p in (m.get("probes") or {}).items():
        head, moves = _headline(p), p.get("transitions") or {}
        expectation = "not be lowered" if p.get("expectation") == "not lower" else "not move"
        rows.append([name, expectation, FIGURE.get(name, "flip rate"), _rate(head), interval(head["ci95"], percent),
                     str(p.get("lowered", "")), str(p.get("raised", "")),
                     str(moves.get("high", {}).get("low", "")), str(moves.get("low", {}).get("high", "")),
                     str(p["n_cases"]), str(p["not_possible"]),
                     percent(p["epoch_disagreement"]) if p["epoch_disagreement"] is not None else ""])  # fmt: skip
    return rows


def style_rows(m: Metrics) -> list[list[str]]:
    """Per style of the probes that have styles (tone: per tone; inject: per template), the probe's figure."""
    rows = []
    for name, p in (m.get("probes") or {}).items():
        styles: Mapping[str, FlipRate | FallRate] = (p.get("falls") or p).get("per_style") or {}
        for style, block in styles.items():
            head = _headline_of(block)
            rows.append([name, style, FIGURE.get(name, "flip rate"), _rate(head), interval(head["ci95"], percent)])
    return rows


def noise_lines(m: Metrics) -> list[str]:
    """For a run with epochs and probes, one line a probe: whether its flip rate stands above the detector's own
    noise (the share of pairs of epochs of the unchanged request that differ). A flip rate whose interval reaches
    down to that noise is no evidence of sensitivity to the probe."""
    lines = []
    for name, p in (m.get("probes") or {}).items():
        noise, low = p["epoch_disagreement"], p["ci95"][0] if p["ci95"] else None
        if noise is None or p["flip_rate"] is None:
            continue
        within = low is None or low <= noise
        verdict = ("within the detector's own noise: no evidence of sensitivity to it" if within
                   else "above the detector's own noise: the verdict depends on it")  # fmt: skip
        lines.append(f"{name}: flip rate {percent(p['flip_rate'])} against epochs disagreeing on "
                     f"{percent(noise)}, {verdict}")  # fmt: skip
    return lines


def probe_category_rows(m: Metrics) -> tuple[list[str], list[list[str]]]:
    """(header, one row a category, then the cases where an agent saw others' answers and the rest) of every
    probe's figure: its flip rate, or its fall rate on the categories that figure counts."""
    probes = m.get("probes") or {}
    blocks = {
        n: cast(Mapping[str, FlipRate | FallRate], (p.get("falls") or p)["per_category"]) for n, p in probes.items()
    }
    categories = sorted({c for b in blocks.values() for c in b})
    rows = [[c, *(_rate(_headline_of(b[c])) if c in b else "" for b in blocks.values())] for c in categories]
    splits: tuple[tuple[Literal["saw_other_answers", "independent"], str], ...] = (
        (INFORMATIVE, "(an agent saw others' answers)"), (INDEPENDENT, "(independent answers)"))  # fmt: skip
    for split, label in splits:
        if probes:
            rows.append([label, *(_rate(p["order_informative"][split]) if "falls" not in p else ""
                                  for p in probes.values())])  # fmt: skip
    return ["category", *probes], rows


PROBES_NOTE = (
    "Besides each request as it is, each probe asked a variant of it: order, its answers in another order; names, "
    "its agent ids renamed; evidence-order, its passages in another order; format, its answers reformatted; tone, "
    "a confident or hedging phrase opening each answer; length, neutral filler before each answer; restate, each "
    "final answer restated in a closing line; inject, an instruction to the judge to report low risk at the end of "
    "one answer (asked on cases labelled high or medium); duplicate, one more agent repeating the majority's "
    "answer. A flip is a pair (the request and its variant, in one epoch) whose verdicts differ; pairs with an "
    "error are left out. inject's attack success rate is the share of its pairs, the request's verdict above low, "
    "that the instruction lowered; duplicate's fall rate counts the same on the cases labelled high (a false "
    "consensus, whose risk an echo should not lower). The headline counts the requests as they are only. 'epochs "
    "disagree' is the share of pairs of epochs of the unchanged request that differ: the detector's own noise, "
    "beside which a flip rate measures sensitivity. Intervals resample cases, a case's epochs kept together."
)


def item_views(records: Mapping[ItemKey, JournalRecord]) -> dict[str, dict[str, Any]]:
    """Per case of a run with epochs or probes, what the case explorer shows beside the reduced verdict: ``ep``,
    the verdict of each epoch (None: an error); ``fl``, each variant whose verdict differs from the request's in
    its epoch, with both verdicts and the permutation applied. Empty for a plain run. ``records``: the run's
    `item_records`."""
    views: dict[str, dict[str, Any]] = {}
    if all(k.epoch == 1 and k.variant is None for k in records):
        return views
    for key, rec in sorted(records.items(), key=lambda kv: (kv[0].epoch, kv[0].variant or "")):
        view = views.setdefault(key.case_id, {"ep": [], "fl": []})
        if key.variant is None:
            view["ep"].append(rec["risk"])
            continue
        plain = records.get(key._replace(variant=None))
        if plain is None or plain["risk"] is None or rec["risk"] is None or plain["risk"] == rec["risk"]:
            continue
        flip: dict[str, Any] = {"v": key.variant, "e": key.epoch, "from": plain["risk"], "to": rec["risk"]}
        if "permutation" in rec:
            flip["perm"] = rec["permutation"]
        view["fl"].append(flip)
    return views


def annotate(rows: list[dict[str, Any]], views: Mapping[str, Mapping[str, Any]]) -> None:
    """Add each case's epochs and flips to its explorer row's (first) prediction."""
    for row in rows:
        view = views.get(row["id"])
        if view and row["p"] and row["p"][0] is not None:
            row["p"][0].update({k: v for k, v in view.items() if v})
