"""Exact rules (a word, prefix or count that singles out a category) and count leakage, over both files."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np
from scipy import sparse

from fcb_datasets.audit.view import TOKEN_PATTERN, CaseView
from harness.documents.audit import CountLeakage, Rule, RuleKind, Rules, RuleTarget, TopNgram

RULE_PRECISION = 0.95
RULE_RECALL = 0.30
RULE_MIN_CASES = 5  # a "rule" seen on fewer cases than this is a coincidence, not a habit of the builder
RULES_LISTED = 20  # per category (or pair); the total is always given
WORD = re.compile(r"\w+")


def _prefixes(text: str) -> list[str]:
    words = WORD.findall(text.lower())
    return [" ".join(words[:n]) for n in range(1, min(6, len(words)) + 1)]


def _answer_matrix(items: Sequence[CaseView]) -> sparse.csr_matrix:
    """Cases x answers indicator, to turn per-answer features into per-case presence."""
    rows = np.repeat(np.arange(len(items)), [len(it.answers) for it in items])
    return sparse.csr_matrix((np.ones(len(rows)), (rows, np.arange(len(rows)))), shape=(len(items), len(rows)))


def rule_features(items: Sequence[CaseView], min_df: int) -> list[tuple[RuleKind, sparse.csc_matrix, list[str]]]:
    """Binary case x feature matrices: question and answer n-grams (1-4), question and answer prefixes (1-6 words),
    and answer-count conditions."""
    from sklearn.feature_extraction.text import CountVectorizer

    questions = [it.question for it in items]
    answers = [a for it in items for a in it.answers]
    to_case = _answer_matrix(items)
    blocks: list[tuple[RuleKind, sparse.csc_matrix, list[str]]] = []
    kinds: tuple[tuple[RuleKind, list[str], bool, CountVectorizer], ...] = (
        (
            "question n-gram",
            questions,
            False,
            CountVectorizer(binary=True, ngram_range=(1, 4), min_df=min_df, token_pattern=TOKEN_PATTERN),
        ),
        (
            "answer n-gram",
            answers,
            True,
            CountVectorizer(binary=True, ngram_range=(1, 4), min_df=min_df, token_pattern=TOKEN_PATTERN),
        ),
        ("question prefix", questions, False, CountVectorizer(binary=True, analyzer=_prefixes, min_df=min_df)),
        ("answer prefix", answers, True, CountVectorizer(binary=True, analyzer=_prefixes, min_df=min_df)),
    )
    for kind, docs, per_answer, vec in kinds:
        try:
            x = vec.fit_transform(docs)
        except ValueError:  # no feature reaches min_df
            continue
        if per_answer:
            x = to_case @ x
        x = (x > 0).astype(np.int32)
        blocks.append((kind, sparse.csc_matrix(x), list(vec.get_feature_names_out())))
    blocks.append(_count_block(items))
    return blocks


def _count_block(items: Sequence[CaseView]) -> tuple[RuleKind, sparse.csc_matrix, list[str]]:
    n = np.array([len(it.answers) for it in items])
    values = sorted(set(n.tolist()))
    cols, names = [], []
    for v in values:
        for op, mask in (("=", n == v), ("<=", n <= v), (">=", n >= v)):
            if mask.all():
                continue
            cols.append(mask)
            names.append(f"answers {op} {v}")
    x = np.array(cols, dtype=np.int32).T if cols else np.zeros((len(items), 0), dtype=np.int32)
    return "answer count", sparse.csc_matrix(x), names


def exact_rules(items: Sequence[CaseView], cats: list[str], top_ngrams: dict[str, list[TopNgram]]) -> Rules:
    """Features that alone pick out one category (or a pair of categories, for habits shared by two) with
    precision >= 0.95 and recall >= 0.30, over the given cases (TRAIN and TEST together); ``top_ngrams`` (the
    surface model's heaviest n-grams per category) is reported beside them."""
    index = {c: i for i, c in enumerate(cats)}
    y = np.array([index[it.category] for it in items])
    sizes = np.bincount(y, minlength=len(cats))
    present = [c for c in range(len(cats)) if sizes[c] >= RULE_MIN_CASES]
    if not present:
        return _rules([], {}, top_ngrams)
    min_df = max(RULE_MIN_CASES, math.ceil(RULE_RECALL * min(sizes[c] for c in present)))
    onehot = sparse.csr_matrix((np.ones(len(y)), (y, np.arange(len(y)))), shape=(len(cats), len(y)))
    found: dict[tuple[int, ...], list[tuple[int, str, int, str, Rule]]] = defaultdict(list)
    for kind_order, (kind, x, names) in enumerate(rule_features(items, min_df)):
        if x.shape[1] == 0:
            continue
        in_cat = np.asarray((onehot @ x).todense())  # categories x features
        total = np.asarray(x.sum(axis=0)).ravel()
        single = np.zeros(x.shape[1], dtype=bool)
        for c in present:
            hits = np.flatnonzero(
                (in_cat[c] >= RULE_PRECISION * total) & (in_cat[c] >= RULE_RECALL * sizes[c]) & (total > 0)
            )
            single[hits] = True
            for j in hits.tolist():  # Python ints: _rule takes a column index
                found[(c,)].append(_rule(kind, kind_order, names[j], x, j, [cats[c]], in_cat[c, j], total[j], sizes[c]))
        for a_pos, a in enumerate(present):
            for b in present[a_pos + 1 :]:
                both = in_cat[a] + in_cat[b]
                hits = np.flatnonzero(
                    ~single
                    & (both >= RULE_PRECISION * total)
                    & (total > 0)
                    & (in_cat[a] >= RULE_RECALL * sizes[a])
                    & (in_cat[b] >= RULE_RECALL * sizes[b])
                )
                for j in hits.tolist():
                    found[(a, b)].append(
                        _rule(
                            kind, kind_order, names[j], x, j, [cats[a], cats[b]], both[j], total[j], sizes[a] + sizes[b]
                        )
                    )
    listed, by_target = _collapse(found)
    return _rules(listed, by_target, top_ngrams)


def _rules(listed: list[Rule], by_target: dict[str, RuleTarget], top_ngrams: dict[str, list[TopNgram]]) -> Rules:
    return Rules(
        rules=listed,
        total=sum(v["distinct_rules"] for v in by_target.values()),
        by_target=by_target,
        min_cases=RULE_MIN_CASES,
        top_ngrams=top_ngrams,
        thresholds={"precision": RULE_PRECISION, "recall": RULE_RECALL, "listed_per_target": RULES_LISTED},
    )


def _rule(
    kind: RuleKind,
    order: int,
    text: str,
    x: sparse.csc_matrix,
    j: int,
    target: list[str],
    hit: int,
    total: int,
    size: int,
) -> tuple[int, str, int, str, Rule]:
    cases = hashlib.sha1(x.indices[x.indptr[j] : x.indptr[j + 1]].tobytes()).hexdigest()
    rule = Rule(
        kind=kind,
        text=text,
        longest_equivalent=text,
        equivalent_features=1,
        target=target,
        in_target=int(hit),
        with_feature=int(total),
        target_size=int(size),
        precision=round(float(hit / total), 4),
        recall=round(float(hit / size), 4),
    )
    return len(text.split()), cases, order, text, rule


def _collapse(
    found: dict[tuple[int, ...], list[tuple[int, str, int, str, Rule]]],
) -> tuple[list[Rule], dict[str, RuleTarget]]:
    """One rule per (target, set of cases): the shortest feature, naming the longest one with the same cases."""
    listed: list[Rule] = []
    by_target: dict[str, RuleTarget] = {}
    for target in sorted(found, key=lambda t: (len(t), t)):
        groups: dict[str, list[tuple[int, str, int, str, Rule]]] = defaultdict(list)
        for entry in found[target]:
            groups[entry[1]].append(entry)
        rules = []
        for entries in groups.values():
            # count conditions last (an n-gram says more about the wording), then the shortest feature
            entries.sort(key=lambda e: (e[4]["kind"] == "answer count", e[0], e[2], e[3]))
            rule = entries[0][4]
            longest = max((e for e in entries if e[4]["kind"] != "answer count"), key=lambda e: e[0], default=None)
            rule["longest_equivalent"] = longest[3] if longest else rule["text"]
            rule["equivalent_features"] = len(entries)
            rules.append(rule)
        rules.sort(key=lambda r: (-r["recall"], -r["precision"], len(r["text"].split()), r["text"]))
        name = " + ".join(rules[0]["target"])
        by_target[name] = {"distinct_rules": len(rules), "features": len(found[target])}
        listed.extend(rules[:RULES_LISTED])
    return listed, by_target


def count_leakage(items: Sequence[CaseView], cats: list[str], count_only_macro_f1: float) -> CountLeakage:
    """Answers per case by category and by source data set (TRAIN and TEST together), beside the macro-F1 of the
    surface model that reads the answer count alone."""
    by_cat: dict[str, Counter[int]] = {c: Counter() for c in cats}
    by_src: dict[str, Counter[int]] = defaultdict(Counter)
    for it in items:
        by_cat[it.category][len(it.answers)] += 1
        by_src[it.source_dataset][len(it.answers)] += 1

    def as_dict(counts: Counter[int]) -> dict[str, int]:
        return {str(k): v for k, v in sorted(counts.items())}

    return CountLeakage(
        by_category={c: as_dict(v) for c, v in by_cat.items() if v},
        by_source={s: as_dict(v) for s, v in sorted(by_src.items())},
        count_only_macro_f1=count_only_macro_f1,
    )
