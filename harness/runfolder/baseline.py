"""A baseline file (``results/baselines/NAME.json``, ``fcb baseline save``): a run's metrics document and one letter
per case, encoded and decoded here alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from harness.cases.labels import UNKNOWN_ORIGIN
from harness.documents import BaselineCases, BaselineDocument
from harness.errors import RunLoadError
from harness.runfolder.checked import read_document
from harness.vocabulary import ORIGINS, Risk

BASELINE_VERSION: Literal[1] = 1
RISK_LETTERS = {"low": "l", "medium": "m", "high": "h"}
ERROR_LETTER = "e"
ORIGIN_LETTERS: dict[str, str] = {**{o: o[0] for o in ORIGINS}, UNKNOWN_ORIGIN: "u"}  # n, a, c and u


@dataclass(frozen=True, slots=True)
class BaselineCase:
    """One case of a baseline: its labels and the risk the run predicted (None: an error)."""

    id: str
    category: str
    expected: Risk
    predicted: Risk | None
    origin: str  # one of harness.cases.labels.ORIGINS, or UNKNOWN_ORIGIN
    cluster: str | None = None  # the run's cluster key (its journal's ``cluster``); None: the case alone


def encode_cases(cases: list[BaselineCase]) -> BaselineCases:
    """The ``cases`` block of a baseline file; ``origins`` only when some case carries an origin tag."""
    block: BaselineCases = {
        "ids": [c.id for c in cases],
        "categories": [c.category for c in cases],
        "expected": "".join(RISK_LETTERS[c.expected] for c in cases),
        "predicted": "".join(RISK_LETTERS[c.predicted] if c.predicted else ERROR_LETTER for c in cases),
    }
    if any(c.origin != UNKNOWN_ORIGIN for c in cases):
        block["origins"] = "".join(ORIGIN_LETTERS[c.origin] for c in cases)
    if any(c.cluster is not None for c in cases):  # one number a cluster, in order of first appearance
        number: dict[tuple[str, str], int] = {}
        block["clusters"] = [number.setdefault(("", c.cluster) if c.cluster else (c.id, ""), len(number))
                             for c in cases]  # fmt: skip
    return block


def decode_cases(doc: BaselineDocument) -> list[BaselineCase]:
    """A checked baseline document's cases, one per id, in file order."""
    risk_of = {v: cast(Risk, k) for k, v in RISK_LETTERS.items()}
    origin_of = {v: k for k, v in ORIGIN_LETTERS.items()}
    cases = doc["cases"]
    origins = cases.get("origins") or "u" * len(cases["ids"])
    clusters = [f"#{c}" for c in cases["clusters"]] if "clusters" in cases else [None] * len(cases["ids"])
    rows = zip(cases["ids"], cases["categories"], cases["expected"], cases["predicted"], origins, clusters, strict=True)
    return [BaselineCase(i, cat, risk_of[e], risk_of.get(p), origin_of[o], k) for i, cat, e, p, o, k in rows]


def read_baseline(path: str | Path) -> BaselineDocument:
    """A baseline file, checked against its definition, its per-case strings as long as its list of ids."""
    path = Path(path)
    doc: BaselineDocument = read_document(path, "baseline")
    cases = doc["cases"]
    lengths = {"categories": len(cases["categories"]), "expected": len(cases["expected"]),
               "predicted": len(cases["predicted"]),
               "origins": len(cases.get("origins", cases["expected"])),
               "clusters": len(cases.get("clusters", cases["ids"]))}  # fmt: skip
    for key, n in lengths.items():
        if n != len(cases["ids"]):
            raise RunLoadError(f"{path}: cases.{key}: {n} entries for {len(cases['ids'])} ids")
    return doc
