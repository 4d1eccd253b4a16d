"""The epochs and probes figures in the reports (report.md, report.html): rows and notes built from a metrics
document's ``epochs`` and ``probes`` blocks (`harness.repeats`), and, for the case explorer, each case's verdicts
over the epochs and the variants whose verdict differs from the request's (read from the journal's items)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.documents import FlipRate, JournalRecord, Metrics
from harness.repeats import EPOCH_FIGURES, INDEPENDENT, INFORMATIVE
from harness.tables import figure, interval, percent
from harness.types import ItemKey

EPOCH_HEADER = ["epoch", "cases", *EPOCH_FIGURES]
AGREEMENT_HEADER = ["cases", "all epochs agree", "95% CI", "pairwise agreement", "Fleiss' kappa"]
PROBE_HEADER = ["probe", "cases", "pairs", "flips", "flip rate", "95% CI", "saw others' answers", "independent",
                "mean score change", "epochs disagree", "no variant"]  # fmt: skip


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


def probe_rows(m: Metrics) -> list[list[str]]:
    """One row a probe; empty without probes."""
    rows = []
    for name, p in (m.get("probes") or {}).items():
        split = p["order_informative"]
        rate = [percent(p["flip_rate"]), interval(p["ci95"], percent)]
        rows.append([name, str(p["n_cases"]), str(p["n"]), str(p["flips"]), *rate,
                     _rate(split[INFORMATIVE]), _rate(split[INDEPENDENT]), figure(p["mean_score_change"]),
                     percent(p["epoch_disagreement"]) if p["epoch_disagreement"] is not None else "",
                     str(p["not_possible"])])  # fmt: skip
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
    """(header, one row a category) of every probe's flip rate."""
    probes = m.get("probes") or {}
    categories = sorted({c for p in probes.values() for c in p["per_category"]})
    rows = [[c, *(_rate(p["per_category"][c]) if c in p["per_category"] else "" for p in probes.values())]
            for c in categories]  # fmt: skip
    return ["category", *probes], rows


PROBES_NOTE = (
    "Besides each request as it is, each probe asked a variant of it: order, its answers in another order; names, "
    "its agent ids renamed; evidence-order, its passages in another order. A flip is a pair (the request and its "
    "variant, in one epoch) whose verdicts differ; pairs with an error are left out. The headline counts the "
    "requests as they are only. 'epochs disagree' is the share of pairs of epochs of the unchanged request that "
    "differ: the detector's own noise, beside which a flip rate measures sensitivity. Intervals resample cases."
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
