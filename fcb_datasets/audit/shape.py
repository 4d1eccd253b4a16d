"""Shape-level tells: what picks out a shape shared by several categories, which the category-level checks miss.

A tell of this kind says nothing of a category alone, but combined with another it does: a rule that finds the
constructed cases of a source (every category built with text we wrote), a knowledge-free feature that tells a true
claim from a false one inside one shape, an answer whose position says whether it is right. Three checks:

- **origin**: per source holding constructed and real cases, exact rules (the rules of `rules`, with "constructed"
  and "real" for targets) and a classifier (TF-IDF over answers and question, fitted on TRAIN) that tell constructed
  cases from real ones, with its ROC-AUC on TEST. A rule is a finding. A high AUC is a warning: text we wrote can
  always be told from real text by some model; what that buys is bounded by the "source and origin" surface
  baseline (the case's category guessed from its source and origin, as if every constructed case were spotted) and
  by the next check.
- **truth inside a shape**: per source x origin, where cases of a correct majority and of a wrong one sit side by
  side, two knowledge-free models fitted on TRAIN, and their ROC-AUC on TEST for telling the wrong majorities:
  gradient-boosted trees over shape features (`shape_features`: counts, lengths, how alike the answers are), and a
  logistic regression over the words (TF-IDF over question and answers: a recipe that words its false claims its
  own way, or a source whose true answers hedge and false ones assert). Over `max_shape_auc`: a finding for
  constructed or assembled cases (the builder made that shape), a warning for natural ones.
- **answer position**: per source x category, whether an answer's position tells whether it is correct. Positions
  are compared among answers of one kind (the same ``saw_other_answers``): the order of a debate's rounds is what
  happened, the order within a round is the builder's. The statistic is the mean, over cases holding both, of the
  mean position of correct answers less that of wrong ones (positions from 0, first, to 1, last), with a z test
  against 0: a finding when it is at least `POSITION_EFFECT` and p < 0.001 over all the pairs tested (`POSITION_P`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from fcb_datasets.audit.rules import exact_rules
from fcb_datasets.audit.view import TOKEN_PATTERN, CaseView, Settings
from harness.documents.audit import OriginTell, Position, Shape, TruthInside

MIN_SIDE = 20  # cases of each kind needed in TRAIN and in TEST before a classifier is fitted
ORIGIN_AUC_WARNING = 0.9
POSITION_EFFECT = 0.2
POSITION_P = 0.001
"""The family-wise level of the position checks: each of the m source x category pairs tested must reach two-sided
p < POSITION_P / m (Bonferroni). At p < 0.001 each, a build's twenty-odd pairs of shuffled answers give a false alarm
in one build in fifty, and one v4 draw did (z 3.92, where the sampler's seeds 1-3 gave gaps of -0.09 to 0.07)."""


def position_z(tests: int) -> float:
    """The |z| a position gap must reach when ``tests`` pairs are tested (`POSITION_P`)."""
    from scipy.stats import norm

    return round(float(norm.isf(POSITION_P / (2 * max(tests, 1)))), 2)


def shape_features(items: Sequence[CaseView]) -> np.ndarray:
    """Knowledge-free features of a case's shape: answer count; characters per answer (mean, min, max, std); words
    per answer (mean); question characters; share of distinct answer texts; share of answers identical to another;
    mean and max word-set Jaccard between two answers; share of answers holding a digit."""
    rows = []
    for it in items:
        chars = np.array([len(a) for a in it.answers], dtype=float)
        normal = [" ".join(a.lower().split()) for a in it.answers]
        counts = {t: normal.count(t) for t in normal}
        words = [set(a.lower().split()) for a in it.answers]
        pairs = [len(a & b) / max(len(a | b), 1) for i, a in enumerate(words) for b in words[i + 1 :]]
        rows.append([
            len(it.answers), chars.mean(), chars.min(), chars.max(), chars.std(),
            float(np.mean([len(a.split()) for a in it.answers])), len(it.question),
            len(counts) / len(normal), sum(counts[t] > 1 for t in normal) / len(normal),
            float(np.mean(pairs)) if pairs else 0.0, max(pairs, default=0.0),
            sum(any(c.isdigit() for c in a) for a in it.answers) / len(it.answers),
        ])  # fmt: skip
    return np.array(rows, dtype=float)


def _auc(y: np.ndarray, score: np.ndarray) -> float:
    """ROC-AUC by the rank-sum (Mann-Whitney) identity, ties at their mean rank: the value scikit-learn's
    `roc_auc_score` gives, at a fraction of its cost in the bootstrap below."""
    from scipy.stats import rankdata

    positive = y == 1
    n_pos = int(positive.sum())
    n_neg = len(y) - n_pos
    ranks = rankdata(score)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _auc_low(y: np.ndarray, score: np.ndarray, settings: Settings) -> float:
    """The lower end of a 95% bootstrap interval of the ROC-AUC over TEST cases: a shape tell is a finding only
    when even that is over the line (a few dozen cases give a chance AUC of 0.6 now and then)."""
    rng = np.random.default_rng(settings.seed)
    values = []
    for _ in range(min(settings.n_boot, 400)):
        pick = rng.integers(0, len(y), len(y))
        if 0 < y[pick].sum() < len(pick):
            values.append(_auc(y[pick], score[pick]))
    return float(np.percentile(values, 2.5)) if values else 0.0


def origin_tells(train: Sequence[CaseView], test: Sequence[CaseView]) -> list[OriginTell]:
    """Per source with constructed and real cases: exact rules for either side, and a classifier's ROC-AUC."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    out: list[OriginTell] = []
    for source in sorted({it.source_dataset for it in [*train, *test]}):
        tr = [it for it in train if it.source_dataset == source]
        te = [it for it in test if it.source_dataset == source]
        kinds = [_kind(it) for it in [*tr, *te]]
        if "constructed" not in kinds or "real" not in kinds:
            continue
        relabelled = [replace(it, category=k) for it, k in zip([*tr, *te], kinds, strict=True)]
        rules = [r for r in exact_rules(relabelled, ["constructed", "real"], {})["rules"] if len(r["target"]) == 1]
        entry = OriginTell(
            source=source, constructed=kinds.count("constructed"), real=kinds.count("real"), rules=rules, auc=None
        )
        y_tr = np.array([_kind(it) == "constructed" for it in tr])
        y_te = np.array([_kind(it) == "constructed" for it in te])
        if min(y_tr.sum(), (~y_tr).sum(), y_te.sum(), (~y_te).sum()) >= MIN_SIDE:
            vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, token_pattern=TOKEN_PATTERN)
            x_tr = vec.fit_transform([it.question + "\n" + "\n".join(it.answers) for it in tr])
            x_te = vec.transform([it.question + "\n" + "\n".join(it.answers) for it in te])
            model = LogisticRegression(C=3.0, solver="saga", tol=1e-3, max_iter=1000, random_state=0).fit(x_tr, y_tr)
            entry["auc"] = round(_auc(y_te, model.predict_proba(x_te)[:, 1]), 4)
        out.append(entry)
    return out


def _kind(it: CaseView) -> str:
    return "constructed" if it.origin == "constructed" else "real"


def truth_inside(train: Sequence[CaseView], test: Sequence[CaseView], settings: Settings) -> list[TruthInside]:
    """Per source x origin holding correct and wrong majorities: how well shape features tell them apart."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    out: list[TruthInside] = []
    strata = sorted({(it.source_dataset, it.origin) for it in [*train, *test]})
    for source, origin in strata:
        tr = [
            it for it in train if (it.source_dataset, it.origin) == (source, origin) and it.majority_correct is not None
        ]
        te = [
            it for it in test if (it.source_dataset, it.origin) == (source, origin) and it.majority_correct is not None
        ]
        y_tr = np.array([it.majority_correct is False for it in tr], dtype=bool)
        y_te = np.array([it.majority_correct is False for it in te], dtype=bool)  # bool when empty too
        if min(y_tr.sum(), (~y_tr).sum(), y_te.sum(), (~y_te).sum()) < MIN_SIDE:
            continue
        model = HistGradientBoostingClassifier(max_iter=60, max_depth=2, learning_rate=0.1, random_state=settings.seed)
        model.fit(shape_features(tr), y_tr)
        score = model.predict_proba(shape_features(te))[:, 1]
        auc, low = _auc(y_te, score), _auc_low(y_te, score, settings)
        words = _word_scores(tr, y_tr, te)
        text_auc, text_low = _auc(y_te, words), _auc_low(y_te, words, settings)
        out.append(
            TruthInside(
                source=source,
                origin=origin,
                train_cases=len(tr),
                test_cases=len(te),
                wrong_majorities_test=int(y_te.sum()),
                auc=round(auc, 4),
                auc_low=round(low, 4),
                text_auc=round(text_auc, 4),
                text_auc_low=round(text_low, 4),
                finding=origin != "natural" and max(low, text_low) > settings.max_shape_auc,
            )
        )
    return out


def _word_scores(train: Sequence[CaseView], y_train: np.ndarray, test: Sequence[CaseView]) -> np.ndarray:
    """A TF-IDF logistic regression's score for a wrong majority, fitted on TRAIN, on every TEST case."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    def doc(it: CaseView) -> str:
        return it.question + "\n" + "\n".join(it.answers)

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, token_pattern=TOKEN_PATTERN)
    x_train = vec.fit_transform([doc(it) for it in train])
    model = LogisticRegression(C=3.0, solver="saga", tol=1e-3, max_iter=1000, random_state=0).fit(x_train, y_train)
    return np.asarray(model.predict_proba(vec.transform([doc(it) for it in test]))[:, 1])


def positions(items: Sequence[CaseView]) -> list[Position]:
    """Per source x category: does an answer's position among answers of its kind say whether it is correct?"""
    per: dict[tuple[str, str], list[float]] = defaultdict(list)
    for it in items:
        diff = _position_gap(it)
        if diff is not None:
            per[(it.source_dataset, it.category)].append(diff)
    out: list[Position] = []
    tested = {key: diffs for key, diffs in sorted(per.items()) if len(diffs) >= MIN_SIDE}
    line = position_z(len(tested))
    for (source, category), diffs in tested.items():
        values = np.array(diffs)
        mean, sd = float(values.mean()), float(values.std(ddof=1))
        z = mean / (sd / math.sqrt(len(values))) if sd > 0 else (math.inf if mean else 0.0)
        out.append(
            Position(
                source=source,
                category=category,
                cases=len(values),
                gap=round(mean, 4),
                z=round(z, 2) if math.isfinite(z) else None,
                finding=abs(mean) >= POSITION_EFFECT and (not math.isfinite(z) or abs(z) >= line),
            )
        )
    return out


def _position_gap(it: CaseView) -> float | None:
    """Mean position of the correct answers less that of the wrong ones, within groups of one kind; None when no
    group holds both."""
    groups: dict[bool, list[int]] = defaultdict(list)
    for i, saw in enumerate(it.answers_saw):
        groups[saw].append(i)
    gaps = []
    for members in groups.values():
        right = [k for k, i in enumerate(members) if it.answers_correct[i]]
        wrong = [k for k, i in enumerate(members) if not it.answers_correct[i]]
        if right and wrong and len(members) > 1:
            scale = len(members) - 1
            gaps.append((sum(right) / len(right) - sum(wrong) / len(wrong)) / scale)
    return sum(gaps) / len(gaps) if gaps else None


def shape_tells(train: Sequence[CaseView], test: Sequence[CaseView], settings: Settings) -> Shape:
    found = positions([*train, *test])
    return Shape(
        origin=origin_tells(train, test),
        truth_inside=truth_inside(train, test, settings),
        positions=found,
        thresholds={"max_shape_auc": settings.max_shape_auc, "origin_auc_warning": ORIGIN_AUC_WARNING,
                    "position_effect": POSITION_EFFECT, "position_z": position_z(len(found)), "min_side": MIN_SIDE},
    )  # fmt: skip
