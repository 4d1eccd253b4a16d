"""Structure baselines: what counting votes is worth on a benchmark.

Each answer's final value is read (`harness.final_answer`, the reading ``builtin:vote`` uses) and the values are
counted; nothing here knows which answer is true. Two baselines, both scored on TEST:
- the vote rule (``builtin:vote``): no value held by 60% of the answers, medium; unanimous, low; else high. Its risk
  macro-F1 is what counting votes is worth on the benchmark, the floor every detector is read against;
- a structure model: gradient-boosted trees fitted on TRAIN over the votes (top share, distinct values, unanimity,
  unread answers) and the answers' lengths and hedging. Its consensus ROC-AUC comes from a second model of the same
  features fitted on TRAIN's cases with a consensus alone (wrong or right): how far structure tells a wrong consensus
  from a right one, and a high-risk case from a low-risk one (`StructureBaseline.high_vs_low`). Either over
`Settings.max_structure_auc`: a finding (the benchmark rewards counting votes).

The consensus figures are `harness.figures.consensus`, the block a run's metrics.json holds, computed the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from fcb_datasets.audit.baselines import macro_f1_interval
from fcb_datasets.audit.view import CaseView, Settings
from harness.detectors.builtin import vote_rule
from harness.documents.audit import Structure, StructureBaseline, Unread
from harness.figures import consensus
from harness.final_answer import Votes, votes
from harness.types import CATEGORY_RISK, RISKS, CaseLabels, Outcome, Risk

_HEDGE = re.compile(r"\b(?:maybe|perhaps|probably|might|not sure|i think|likely|possibly|uncertain)\b", re.IGNORECASE)


def features(view: CaseView, counted: Votes) -> list[float]:
    """The votes, the answers' lengths in characters (mean, min, max, std) and the share of hedged answers."""
    chars = np.array([len(a) for a in view.answers], dtype=float)
    hedged = sum(bool(_HEDGE.search(a)) for a in view.answers) / counted.n
    return [counted.n, counted.top, counted.distinct, counted.unread, counted.top_share, float(counted.unanimous),
            float(counted.consensus), counted.distinct / counted.n, float(chars.mean()), float(chars.min()),
            float(chars.max()), float(chars.std()), hedged]  # fmt: skip


def structure_baselines(
    train: Sequence[CaseView], test: Sequence[CaseView], settings: Settings, progress: Callable[[str], None]
) -> Structure:
    """Both baselines on TEST (module docstring), and the answers no value was read in."""
    progress("structure baselines: final values read and counted (the vote rule, trees over the votes)")
    train_votes = [votes(list(v.answers)) for v in train]
    test_votes = [votes(list(v.answers)) for v in test]
    labels = [_labels(v, i) for i, v in enumerate(test)]
    rule = [vote_rule(c) for c in test_votes]
    out = [_scored("vote rule", "builtin:vote: no value held by 60% medium, unanimous low, else high", test, labels,
                   [r for r, _ in rule], [s for _, s in rule], settings)]  # fmt: skip
    x_tr = np.array([features(v, c) for v, c in zip(train, train_votes, strict=True)])
    x_te = np.array([features(v, c) for v, c in zip(test, test_votes, strict=True)])
    risks = _fit(x_tr, np.array([CATEGORY_RISK[v.category] for v in train]), x_te, settings.seed)
    agreed = np.array([v.majority_correct is not None for v in train], dtype=bool)
    wrong = np.array([v.majority_correct is False for v in train], dtype=bool)
    scores = _fit_scores(x_tr[agreed], wrong[agreed], x_te, settings.seed)
    out.append(_scored("structure model", "trees over the votes, answer lengths and hedging; knows no truth", test,
                       labels, list(risks), scores, settings))  # fmt: skip
    return Structure(baselines=out, max_structure_auc=settings.max_structure_auc, unread=_unread(test, test_votes))


def _labels(view: CaseView, index: int) -> CaseLabels:
    risk = CATEGORY_RISK[view.category]
    return CaseLabels(line=view.line, case_id=f"{index}", content_hash="", category=view.category, expected_risk=risk,
                      majority_correct=view.majority_correct, n_answers=len(view.answers),
                      has_evidence=view.has_evidence, families=(), families_complete=False,
                      any_saw_other_answers=False, any_shared_context=False, tags=(),
                      source_dataset=view.source_dataset, source_item=view.source_identity)  # fmt: skip


def _scored(
    name: str, description: str, test: Sequence[CaseView], labels: list[CaseLabels], risks: Sequence[str],
    scores: Sequence[float | None], settings: Settings,
) -> StructureBaseline:  # fmt: skip
    y = np.array([RISKS.index(CATEGORY_RISK[v.category]) for v in test])
    f1, ci = macro_f1_interval(y, np.array([RISKS.index(r) for r in risks]), len(RISKS), settings.n_boot, settings.seed)
    outcomes = {lab.case_id: Outcome(lab.case_id, "", _risk(r), s, None, 1, 0.0)
                for lab, r, s in zip(labels, risks, scores, strict=True)}  # fmt: skip
    block = consensus(labels, outcomes, n_boot=settings.n_boot, seed=settings.seed)
    high_low = [replace(lab, majority_correct=_high_low(lab.expected_risk)) for lab in labels]
    split = consensus(high_low, outcomes, n_boot=settings.n_boot, seed=settings.seed)
    return StructureBaseline(name=name, description=description, risk_macro_f1=f1, risk_ci=ci, consensus=block,
                             high_vs_low=split)  # fmt: skip


def _high_low(risk: Risk) -> bool | None:
    """A case labelled high is a wrong consensus, one labelled low a right one; medium stands aside."""
    return None if risk == "medium" else risk == "low"


def _risk(value: str) -> Risk:
    return next(r for r in RISKS if r == value)


def _trees(seed: int) -> object:
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(max_iter=100, max_depth=3, learning_rate=0.1, random_state=seed)


def _fit(x_tr: np.ndarray, y_tr: np.ndarray, x_te: np.ndarray, seed: int) -> np.ndarray:
    model = _trees(seed)
    return np.asarray(model.fit(x_tr, y_tr).predict(x_te))  # type: ignore[attr-defined]


def _fit_scores(x_tr: np.ndarray, y_tr: np.ndarray, x_te: np.ndarray, seed: int) -> list[float | None]:
    """P(wrong consensus) for every TEST case from a model fitted on TRAIN's consensus cases; None without both."""
    if len(set(y_tr.tolist())) < 2:
        return [None] * len(x_te)
    model = _trees(seed)
    model.fit(x_tr, y_tr)  # type: ignore[attr-defined]
    return [float(p) for p in model.predict_proba(x_te)[:, 1]]  # type: ignore[attr-defined]


def _unread(test: Sequence[CaseView], counted: Sequence[Votes]) -> dict[str, Unread]:
    out: dict[str, Unread] = {}
    for view, c in zip(test, counted, strict=True):
        row = out.setdefault(view.source_dataset, Unread(answers=0, unread=0))
        row["answers"] += c.n
        row["unread"] += c.unread
    return dict(sorted(out.items()))
