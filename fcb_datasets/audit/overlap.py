"""What TRAIN and TEST share (source items, questions, answers) and what each file is made of."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy import sparse

from fcb_datasets.audit.view import TOKEN_PATTERN, CaseView, normalise
from harness.documents.audit import (
    CaseOrigin,
    CasePair,
    CaseRef,
    Composition,
    CompositionRow,
    Overlap,
    Pairs,
    PairSet,
)
from harness.types import CATEGORIES

NEAR_DUPLICATE = 0.8
ANSWER_REUSE = 0.5
LISTED = 20  # overlap pairs listed per kind; counts are always complete


def overlap(train: Sequence[CaseView], test: Sequence[CaseView]) -> Overlap:
    """Shared source items, identical and near-duplicate questions and reused answers, across and within files."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    items = [*train, *test]
    n_tr = len(train)
    vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=TOKEN_PATTERN)
    x = vec.fit_transform([it.question for it in items])
    sims = (x @ x.T).tocoo()
    norm_q = [normalise(it.question) for it in items]
    near: dict[str, list[tuple[int, int, float]]] = defaultdict(list)
    for i, j, s in zip(sims.row, sims.col, sims.data, strict=True):
        if i < j and s >= NEAR_DUPLICATE - 1e-9 and norm_q[i] != norm_q[j]:
            near[_where(i, j, n_tr, items)].append((int(i), int(j), float(s)))
    shared = sorted({it.source_identity for it in train} & {it.source_identity for it in test})
    return Overlap(
        shared_source_items={
            "count": len(shared),
            "test_cases": sum(it.source_identity in set(shared) for it in test),
            "listed": shared[:LISTED],
        },
        identical_questions=_identical(items, norm_q, n_tr),
        near_duplicate_questions=_pairs_summary(near, items, "cosine"),
        answer_reuse=_answer_reuse(items, n_tr),
        thresholds={"near_duplicate_cosine": NEAR_DUPLICATE, "answer_reuse_share": ANSWER_REUSE},
    )


def _where(i: int, j: int, n_tr: int, items: Sequence[CaseView]) -> str:
    """Which of the pair kinds (i, j) is: across the files, or within one, same or different source item."""
    if (i < n_tr) != (j < n_tr):
        return "across_files"
    same = items[i].source_identity == items[j].source_identity
    return f"within_{items[i].file}_{'same' if same else 'different'}_source"


def _pairs_summary(
    pairs: dict[str, list[tuple[int, int, float]]],
    items: Sequence[CaseView],
    measure: Literal["similarity", "cosine", "shared_share"],
) -> PairSet:
    def summary(kind: str) -> Pairs:
        found = sorted(pairs.get(kind, []), key=lambda p: (-p[2], p[0], p[1]))
        listed = []
        for i, j, s in found[:LISTED]:
            pair = CasePair(a=_ref(items[i]), b=_ref(items[j]))
            pair[measure] = round(s, 4)
            listed.append(pair)
        return Pairs(pairs=len(found), cases=len({k for p in found for k in p[:2]}), listed=listed)

    return PairSet(
        across_files=summary("across_files"),
        within_train_different_source=summary("within_train_different_source"),
        within_test_different_source=summary("within_test_different_source"),
        within_train_same_source=summary("within_train_same_source"),
        within_test_same_source=summary("within_test_same_source"),
    )


def _ref(it: CaseView) -> CaseRef:
    text = " ".join(it.question.split())
    return CaseRef(
        file=it.file,
        line=it.line,
        id=it.case_id,
        source_item=it.source_identity,
        question=text[:100] + ("..." if len(text) > 100 else ""),
    )


def _identical(items: Sequence[CaseView], norm_q: list[str], n_tr: int) -> PairSet:
    by_text: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(norm_q):
        by_text[q].append(i)
    pairs: dict[str, list[tuple[int, int, float]]] = defaultdict(list)
    for members in by_text.values():
        for a_pos, i in enumerate(members):
            for j in members[a_pos + 1 :]:
                pairs[_where(i, j, n_tr, items)].append((i, j, 1.0))
    return _pairs_summary(pairs, items, "similarity")


def _answer_reuse(items: Sequence[CaseView], n_tr: int) -> PairSet:
    """Pairs of cases where one holds half or more of the other's (distinct, normalised) answers."""
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, it in enumerate(items):
        for a in {normalise(t) for t in it.answers}:
            rows.append(i)
            cols.append(vocab.setdefault(a, len(vocab)))
    m = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(items), len(vocab)))
    size = np.asarray(m.sum(axis=1)).ravel()
    shared = sparse.triu(m @ m.T, k=1).tocoo()
    pairs: dict[str, list[tuple[int, int, float]]] = defaultdict(list)
    for row, col, k in zip(shared.row.tolist(), shared.col.tolist(), shared.data, strict=True):
        share = k / min(size[row], size[col])
        if share >= ANSWER_REUSE:
            pairs[_where(row, col, n_tr, items)].append((row, col, float(share)))
    return _pairs_summary(pairs, items, "shared_share")


def composition(train: Sequence[CaseView], test: Sequence[CaseView]) -> Composition:
    """Counts by category x source x origin per file, evidence share and answers per case."""
    table: dict[tuple[str, str, CaseOrigin], Counter[str]] = defaultdict(Counter)
    for it in [*train, *test]:
        table[(it.category, it.source_dataset, it.origin)][it.file] += 1
    order = {c: i for i, c in enumerate(CATEGORIES)}
    rows = [
        CompositionRow(category=c, source=s, origin=o, train=n["train"], test=n["test"])
        for (c, s, o), n in sorted(table.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0]))
    ]

    def share(items: Sequence[CaseView]) -> float:
        return round(sum(it.has_evidence for it in items) / len(items), 4) if items else 0.0

    def counts(items: Sequence[CaseView]) -> dict[str, int]:
        return {str(k): n for k, n in sorted(Counter(len(it.answers) for it in items).items())}

    return Composition(
        rows=rows,
        evidence_share={"train": share(train), "test": share(test)},
        answers_per_case={"train": counts(train), "test": counts(test)},
        origins=sorted({it.origin for it in [*train, *test]}),
    )
