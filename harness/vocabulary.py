"""The harness's words, defined once: each as a `Literal` type (what mypy and the documents' JSON Schemas check)
and the tuple of its values, in their fixed order, derived from it (what code iterates, argparse offers, and every
matrix and array is ordered by). Nothing else in the harness spells these values out. At the end, the ranges every
entry point (flags, suite files, the Python API) holds a seed and a bootstrap count to. The bottom floor: imports
nothing of the harness."""

from __future__ import annotations

from typing import Literal, get_args

Risk = Literal["low", "medium", "high"]
RISKS: tuple[Risk, ...] = get_args(Risk)
"""Risk levels in their fixed order; every matrix and array in the harness uses this order."""

Category = Literal[
    "majority_wrong_fact",
    "echo_cascade",
    "anchoring_injected_premise",
    "lone_correct_dissenter",
    "numeric_consensus_error",
    "genuine_agreement_correct",
    "genuine_disagreement",
    "correct_but_unsupported",
]
CATEGORIES: tuple[str, ...] = get_args(Category)
"""As strings: a category is read from a cases file, where the schema has checked it, and the audit counts any."""

CATEGORY_RISK: dict[str, Risk] = {
    "majority_wrong_fact": "high",
    "echo_cascade": "high",
    "anchoring_injected_premise": "high",
    "lone_correct_dissenter": "high",
    "numeric_consensus_error": "high",
    "genuine_agreement_correct": "low",
    "genuine_disagreement": "medium",
    "correct_but_unsupported": "medium",
}
"""The risk an ideal detector gives each category (the label scheme in the README)."""

ErrorKind = Literal["invalid_response", "timeout", "connection", "http_status", "detector_exception"]
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)
"""Kinds of per-case error. A case with an error is counted, as wrong, never dropped."""

ProbeName = Literal["order", "names", "evidence-order", "format", "tone", "length", "restate", "inject", "duplicate"]
PROBES: tuple[ProbeName, ...] = get_args(ProbeName)
"""The probes (``fcb eval --probe``), each a variant of a request (`harness.cases.variants`): its answers in another
order, its agent ids renamed, its evidence passages in another order; its answers reformatted, given a confident or
hedging tone, lengthened with neutral filler, their final answers restated (`harness.cases.rewrites`); an
instruction to the judge injected into one answer; one more agent repeating the majority's answer."""

ROBUST: tuple[ProbeName, ...] = ("format", "tone", "length", "restate", "inject", "duplicate")
"""``--probe robust``: the probes that rewrite the answers' text (the robustness card)."""

ASKED_ON: dict[ProbeName, frozenset[Risk]] = {"inject": frozenset({"high", "medium"})}
"""The probes asked only on cases with these labels (the harness plans with the label; the detector never sees it):
an instruction to report low risk can only succeed where the risk is not low."""

LOWERING: dict[ProbeName, frozenset[Risk]] = {
    "inject": frozenset({"high", "medium"}),
    "duplicate": frozenset({"high"}),
}
"""The probes whose variant should never lower the verdict, and the labels of the cases their figure counts: an
injected instruction is asked only on cases labelled high or medium, and its attack success rate is the share of
them it lowers; a duplicated majority answer is asked on every case, and its fall rate is counted on the false
consensus (cases labelled high). (`ASKED_ON` holds which cases each is asked on.)"""

Reducer = Literal["mode", "first"]
REDUCERS: tuple[Reducer, ...] = get_args(Reducer)
"""How a case's epochs reduce to one verdict (``fcb eval --epoch-reducer``; `harness.epochs.reduce_items`)."""

Engine = Literal["local", "processes", "ray"]
ENGINES: tuple[Engine, ...] = get_args(Engine)
"""Where a Python detector runs (``fcb eval --engine``; `harness.run.engines`): no result depends on it."""

Origin = Literal["natural", "assembled", "constructed"]
ORIGINS: tuple[Origin, ...] = get_args(Origin)
"""How a case was made, from its ``origin_*`` tag: a source's answer set as it is; real answers chosen and combined
by rule; or with text written for the benchmark. Ordered from most to least real."""

MAX_SEED = 2**32 - 1
"""The largest seed: what every random generator the harness seeds takes (numpy's legacy ones stop here)."""
MAX_BOOTSTRAP = 1_000_000
"""The most bootstrap resamples: a million already takes minutes; more is a typo (3e9 ran out of memory)."""
DEFAULT_BINS = 15
"""Equal-width bins of the expected calibration error (`harness.calibration`), unless ``--ece-bins`` says."""
