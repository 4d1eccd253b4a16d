"""``fcb audit-dataset``: does a benchmark measure detection, or can its own wording, sizes and sources be learned?

Pure computations over two lists of cases (TRAIN, TEST). Surface baselines are fitted on TRAIN only, their settings
chosen by grouped cross-validation on TRAIN (groups = source item, so one question never sits on both sides of a
fold), and scored once on TEST. Exact rules, count leakage and composition look at both files together; overlap
compares them. The result is a plain-JSON document (`AuditDocument`), described by ``harness/data/audit.schema.json``.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
from scipy import sparse

from harness.types import CATEGORIES, CATEGORY_RISK, RISKS

AUDIT_VERSION = 1
ORIGINS = ("origin_natural", "origin_assembled", "origin_constructed")
RULE_PRECISION = 0.95
RULE_RECALL = 0.30
RULE_MIN_CASES = 5  # a "rule" seen on fewer cases than this is a coincidence, not a habit of the builder
RULES_LISTED = 20  # per category (or pair); the total is always given
NEAR_DUPLICATE = 0.8
ANSWER_REUSE = 0.5
CATEGORY_F1_WARNING = 0.9
LISTED = 20  # overlap pairs listed per kind; counts are always complete
WORD = re.compile(r"\w+")
TOKEN_PATTERN = r"(?u)\b\w+\b"  # single letters and digits count: "A: 7" is a habit too


# ---------------------------------------------------------------------------------------------------- the document
class Baseline(TypedDict):
    name: str
    description: str
    params: dict[str, Any]
    cv_macro_f1: float | None
    macro_f1: float
    ci: list[float]
    risk_macro_f1: float
    risk_ci: list[float]
    per_category: dict[str, float]


class Rule(TypedDict):
    kind: str
    text: str
    longest_equivalent: str
    equivalent_features: int
    target: list[str]
    in_target: int
    with_feature: int
    target_size: int
    precision: float
    recall: float


class Finding(TypedDict):
    kind: str
    message: str


class AuditDocument(TypedDict):
    audit_version: int
    files: dict[str, Any]
    settings: dict[str, Any]
    categories: list[str]
    surface: dict[str, Any]
    rules: dict[str, Any]
    count_leakage: dict[str, Any]
    overlap: dict[str, Any]
    composition: dict[str, Any]
    verdict: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Item:
    """What the audit needs of one case."""

    file: str  # "train" or "test"
    line: int
    case_id: str
    category: str
    question: str
    answers: tuple[str, ...]
    source_dataset: str
    source_identity: str
    origin: str
    has_evidence: bool


@dataclass(frozen=True, slots=True)
class Settings:
    max_surface_f1: float = 0.45
    seed: int = 0
    n_boot: int = 1000


def normalise(text: str) -> str:
    """Lower case, runs of white space as one space: what "identical" means for questions and answers."""
    return " ".join(text.lower().split())


def item_from_case(case: dict[str, Any], file: str, line: int) -> Item:
    """The audit's view of one schema-valid case."""
    source = case["source"]
    if isinstance(source, str):  # "original": the question is the only identity there is
        dataset, identity = source, f"{source}:{normalise(case['question'])}"
    else:
        dataset, identity = source["dataset"], f"{source['dataset']}:{source['item']}"
    tags = set(case.get("tags", ()))
    origin = next((o.removeprefix("origin_") for o in ORIGINS if o in tags), "unknown")
    return Item(
        file=file,
        line=line,
        case_id=case["id"],
        category=case["category"],
        question=case["question"],
        answers=tuple(a["text"] for a in case["answers"]),
        source_dataset=dataset,
        source_identity=identity,
        origin=origin,
        has_evidence=bool(case.get("evidence")),
    )


def split_by_source_item(items: Sequence[Item], seed: int) -> tuple[list[Item], list[Item]]:
    """Half/half by a seeded hash of each case's source identity, so one source item lands on one side only."""
    train: list[Item] = []
    test: list[Item] = []
    for it in items:
        digest = hashlib.sha256(f"{seed}:{it.source_identity}".encode()).digest()
        side = test if digest[0] & 1 else train
        side.append(Item(**{**_fields(it), "file": "test" if side is test else "train"}))
    return train, test


def _fields(it: Item) -> dict[str, Any]:
    return {name: getattr(it, name) for name in Item.__slots__}


# ------------------------------------------------------------------------------------------------ surface features
def length_features(items: Sequence[Item]) -> np.ndarray:
    """Answer count, characters and words per answer (mean, min, max, std), question characters and words."""
    rows = []
    for it in items:
        chars = np.array([len(a) for a in it.answers], dtype=float)
        words = np.array([len(a.split()) for a in it.answers], dtype=float)
        rows.append(
            [len(it.answers)]
            + [f(chars) for f in (np.mean, np.min, np.max, np.std)]
            + [f(words) for f in (np.mean, np.min, np.max, np.std)]
            + [len(it.question), len(it.question.split())]
        )
    return np.array(rows, dtype=float)


def _answers_doc(it: Item) -> str:
    return "\n".join(it.answers)


def macro_f1_interval(
    y_true: np.ndarray, y_pred: np.ndarray, k: int, n_boot: int, seed: int
) -> tuple[float, list[float]]:
    """Macro-F1 (over the classes present as label or prediction, as scikit-learn does) and its 95% percentile
    bootstrap interval over cases."""
    n = len(y_true)
    code = y_true * k + y_pred
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    flat = (code[idx] + (np.arange(n_boot) * k * k)[:, None]).ravel()
    cms = np.bincount(flat, minlength=n_boot * k * k).reshape(n_boot, k, k)
    point = _macro_f1(np.bincount(code, minlength=k * k).reshape(1, k, k))[0]
    boot = _macro_f1(cms)
    return float(point), [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))]


def _macro_f1(cms: np.ndarray) -> np.ndarray:
    tp = np.diagonal(cms, axis1=1, axis2=2).astype(float)
    rows, cols = cms.sum(axis=2), cms.sum(axis=1)
    denom = rows + cols
    f1 = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    present = denom > 0
    return (f1 * present).sum(axis=1) / np.maximum(present.sum(axis=1), 1)


@dataclass(slots=True)
class _Fit:
    params: dict[str, Any]
    cv_score: float | None
    predict: np.ndarray
    model: Any


def _grid_fit(
    make: Callable[..., Any], grid: list[dict[str, Any]], x_tr: Any, y_tr: np.ndarray, groups: np.ndarray, x_te: Any
) -> _Fit:
    """Choose settings by grouped cross-validation on TRAIN, refit on all of TRAIN, predict TEST."""
    from sklearn.model_selection import GridSearchCV

    cv = _cv(groups, y_tr)
    if cv is None or len(grid) == 1:
        model = make(**grid[0]).fit(x_tr, y_tr)
        return _Fit(grid[0], None, model.predict(x_te), model)
    param_grid = [{key: [value] for key, value in g.items()} for g in grid]
    search = GridSearchCV(make(), param_grid, scoring="f1_macro", cv=cv, n_jobs=1)
    search.fit(x_tr, y_tr, groups=groups)
    return _Fit(search.best_params_, float(search.best_score_), search.predict(x_te), search.best_estimator_)


def _cv(groups: np.ndarray, y: np.ndarray) -> Any:
    from sklearn.model_selection import GroupKFold

    n_groups = len(np.unique(groups))
    if n_groups < 2 or len(np.unique(y)) < 2:
        return None
    return GroupKFold(n_splits=min(3, n_groups))


def _trees(seed: int) -> tuple[Callable[..., Any], list[dict[str, Any]]]:
    from sklearn.ensemble import HistGradientBoostingClassifier

    def make(**kw: Any) -> Any:
        return HistGradientBoostingClassifier(max_iter=60, random_state=seed, **kw)

    grid = [{"max_depth": d, "learning_rate": lr} for d in (2, 3) for lr in (0.1, 0.3)]
    return make, grid


def _logistic() -> tuple[Callable[..., Any], list[dict[str, Any]]]:
    from sklearn.linear_model import LogisticRegression

    def make(**kw: Any) -> Any:
        # saga suits L2-normalised TF-IDF rows: 10-50x faster here than lbfgs at the larger C values
        return LogisticRegression(solver="saga", tol=1e-3, max_iter=1000, random_state=0, **kw)

    return make, [{"C": c} for c in (0.3, 3.0, 30.0)]


def surface_baselines(
    train: Sequence[Item], test: Sequence[Item], cats: list[str], settings: Settings, progress: Callable[[str], None]
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Every surface baseline, and the top n-grams per category of the answers+question TF-IDF model."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import cross_val_predict
    from sklearn.preprocessing import OneHotEncoder

    index = {c: i for i, c in enumerate(cats)}
    y_tr = np.array([index[it.category] for it in train])
    y_te = np.array([index[it.category] for it in test])
    groups = np.array([it.source_identity for it in train])
    k = len(cats)
    out: list[Baseline] = []

    risk_of = np.array([RISKS.index(CATEGORY_RISK[c]) for c in cats])

    def score(name: str, description: str, fit: _Fit) -> None:
        pred = np.asarray(fit.predict)
        f1, ci = macro_f1_interval(y_te, pred, k, settings.n_boot, settings.seed)
        # The same predictions read as risks: the figure a detector is ranked by, so the two compare directly.
        risk_f1, risk_ci = macro_f1_interval(risk_of[y_te], risk_of[pred], len(RISKS), settings.n_boot, settings.seed)
        params = {key: _plain(v) for key, v in fit.params.items()}
        out.append(
            Baseline(
                name=name,
                description=description,
                params=params,
                cv_macro_f1=fit.cv_score,
                macro_f1=f1,
                ci=ci,
                risk_macro_f1=risk_f1,
                risk_ci=risk_ci,
                per_category=_per_category(y_te, pred, cats),
            )
        )

    majority = int(np.bincount(y_tr, minlength=k).argmax())
    score(
        "majority class",
        f"always {cats[majority]}, the commonest category in TRAIN",
        _Fit({}, None, np.full(len(test), majority), None),
    )

    progress("surface baselines: answer count and lengths (gradient-boosted trees)")
    num_tr, num_te = length_features(train), length_features(test)
    tree, tree_grid = _trees(settings.seed)
    score(
        "answer count only",
        "number of answers; trees of depth <= 3",
        _grid_fit(tree, tree_grid, num_tr[:, :1], y_tr, groups, num_te[:, :1]),
    )
    score(
        "answer count + lengths",
        "answers, chars and words per answer (mean/min/max/std), question length; trees",
        _grid_fit(tree, tree_grid, num_tr, y_tr, groups, num_te),
    )

    progress("surface baselines: TF-IDF over answers and question (logistic regression)")
    logit, logit_grid = _logistic()
    vec_a = TfidfVectorizer(ngram_range=(1, 3), min_df=2, sublinear_tf=True, token_pattern=TOKEN_PATTERN)
    vec_q = TfidfVectorizer(ngram_range=(1, 3), min_df=2, sublinear_tf=True, token_pattern=TOKEN_PATTERN)
    # The vocabularies and IDF come from TRAIN only (no labels are used); TEST is only transformed.
    xa_tr = vec_a.fit_transform([_answers_doc(it) for it in train])
    xa_te = vec_a.transform([_answers_doc(it) for it in test])
    xq_tr = vec_q.fit_transform([it.question for it in train])
    xq_te = vec_q.transform([it.question for it in test])
    fit_a = _grid_fit(logit, logit_grid, xa_tr, y_tr, groups, xa_te)
    score("TF-IDF answers", "word 1-3-grams over the answers; logistic regression", fit_a)
    fit_q = _grid_fit(logit, logit_grid, xq_tr, y_tr, groups, xq_te)
    score("TF-IDF question", "word 1-3-grams over the question; logistic regression", fit_q)
    xaq_tr, xaq_te = sparse.hstack([xa_tr, xq_tr]).tocsr(), sparse.hstack([xa_te, xq_te]).tocsr()
    fit_aq = _grid_fit(logit, logit_grid, xaq_tr, y_tr, groups, xaq_te)
    score("TF-IDF answers + question", "both TF-IDF blocks side by side; logistic regression", fit_aq)
    names = [f"answer: {t}" for t in vec_a.get_feature_names_out()] + [
        f"question: {t}" for t in vec_q.get_feature_names_out()
    ]
    top = top_ngrams(fit_aq.model, names, cats, np.unique(y_tr))

    progress("surface baselines: source data set, and everything together")
    enc = OneHotEncoder(handle_unknown="ignore")
    xs_tr = enc.fit_transform([[it.source_dataset] for it in train])
    xs_te = enc.transform([[it.source_dataset] for it in test])
    score(
        "source data set only",
        "one-hot source data set; logistic regression",
        _grid_fit(logit, logit_grid, xs_tr, y_tr, groups, xs_te),
    )

    # All together: trees over the numbers and the source, stacked on the text models' class probabilities
    # (out-of-fold on TRAIN, so the trees never see a text model's score on the cases it was fitted to).
    cv = _cv(groups, y_tr)
    stacked_tr, stacked_te = [num_tr, xs_tr.toarray()], [num_te, xs_te.toarray()]
    for fit, x_tr, x_te in ((fit_a, xa_tr, xa_te), (fit_q, xq_tr, xq_te)):
        if cv is not None:
            stacked_tr.append(cross_val_predict(fit.model, x_tr, y_tr, groups=groups, cv=cv, method="predict_proba"))
        else:
            stacked_tr.append(fit.model.predict_proba(x_tr))
        stacked_te.append(fit.model.predict_proba(x_te))
    score(
        "all surface features",
        "trees over counts, lengths, source and the out-of-fold TF-IDF model scores",
        _grid_fit(tree, tree_grid, np.hstack(stacked_tr), y_tr, groups, np.hstack(stacked_te)),
    )
    surface = {"baselines": out, "test_cases": len(test), "train_cases": len(train)}
    return surface, top


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _per_category(y_true: np.ndarray, y_pred: np.ndarray, cats: list[str]) -> dict[str, float]:
    from sklearn.metrics import f1_score

    present = sorted(set(y_true.tolist()))
    f1 = f1_score(y_true, y_pred, labels=present, average=None, zero_division=0)
    return {cats[c]: float(v) for c, v in zip(present, f1, strict=True)}


def top_ngrams(model: Any, names: list[str], cats: list[str], classes: np.ndarray, n: int = 8) -> dict[str, Any]:
    """The n-grams with the largest coefficients for each category in a fitted logistic regression."""
    coef = model.coef_
    if coef.shape[0] == 1:  # two classes: one row of coefficients, for the second class
        coef = np.vstack([-coef[0], coef[0]])
    top: dict[str, Any] = {}
    for row, cls in zip(coef, classes, strict=True):
        best = np.argsort(-row)[:n]
        top[cats[int(cls)]] = [{"ngram": names[j], "weight": round(float(row[j]), 4)} for j in best]
    return top


# ---------------------------------------------------------------------------------------------------- exact rules
def _prefixes(text: str) -> list[str]:
    words = WORD.findall(text.lower())
    return [" ".join(words[:n]) for n in range(1, min(6, len(words)) + 1)]


def _answer_matrix(items: Sequence[Item]) -> sparse.csr_matrix:
    """Cases x answers indicator, to turn per-answer features into per-case presence."""
    rows = np.repeat(np.arange(len(items)), [len(it.answers) for it in items])
    return sparse.csr_matrix((np.ones(len(rows)), (rows, np.arange(len(rows)))), shape=(len(items), len(rows)))


def rule_features(items: Sequence[Item], min_df: int) -> list[tuple[str, sparse.csc_matrix, list[str]]]:
    """Binary case x feature matrices: question and answer n-grams (1-4), question and answer prefixes (1-6 words),
    and answer-count conditions."""
    from sklearn.feature_extraction.text import CountVectorizer

    questions = [it.question for it in items]
    answers = [a for it in items for a in it.answers]
    to_case = _answer_matrix(items)
    blocks = []
    for kind, docs, per_answer, vec in (
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
    ):
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


def _count_block(items: Sequence[Item]) -> tuple[str, sparse.csc_matrix, list[str]]:
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


def exact_rules(items: Sequence[Item], cats: list[str]) -> dict[str, Any]:
    """Features that alone pick out one category (or a pair of categories, for habits shared by two) with
    precision >= 0.95 and recall >= 0.30, over the given cases (TRAIN and TEST together)."""
    index = {c: i for i, c in enumerate(cats)}
    y = np.array([index[it.category] for it in items])
    sizes = np.bincount(y, minlength=len(cats))
    present = [c for c in range(len(cats)) if sizes[c] >= RULE_MIN_CASES]
    if not present:
        return {"rules": [], "total": 0, "by_target": {}, "min_cases": RULE_MIN_CASES}
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
    return _collapse(found)


def _rule(
    kind: str, order: int, text: str, x: sparse.csc_matrix, j: int, target: list[str], hit: int, total: int, size: int
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


def _collapse(found: dict[tuple[int, ...], list[tuple[int, str, int, str, Rule]]]) -> dict[str, Any]:
    """One rule per (target, set of cases): the shortest feature, naming the longest one with the same cases."""
    listed: list[Rule] = []
    by_target: dict[str, dict[str, int]] = {}
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
    return {
        "rules": listed,
        "total": sum(v["distinct_rules"] for v in by_target.values()),
        "by_target": by_target,
        "min_cases": RULE_MIN_CASES,
    }


# -------------------------------------------------------------------------------------------------- count leakage
def count_leakage(items: Sequence[Item], cats: list[str]) -> dict[str, Any]:
    """Answers per case by category and by source data set (TRAIN and TEST together)."""
    by_cat: dict[str, Counter[int]] = {c: Counter() for c in cats}
    by_src: dict[str, Counter[int]] = defaultdict(Counter)
    for it in items:
        by_cat[it.category][len(it.answers)] += 1
        by_src[it.source_dataset][len(it.answers)] += 1
    as_dict = lambda counts: {str(k): v for k, v in sorted(counts.items())}  # noqa: E731
    return {
        "by_category": {c: as_dict(v) for c, v in by_cat.items() if v},
        "by_source": {s: as_dict(v) for s, v in sorted(by_src.items())},
    }


# -------------------------------------------------------------------------------------------------------- overlap
def overlap(train: Sequence[Item], test: Sequence[Item]) -> dict[str, Any]:
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
    return {
        "shared_source_items": {
            "count": len(shared),
            "test_cases": sum(it.source_identity in set(shared) for it in test),
            "listed": shared[:LISTED],
        },
        "identical_questions": _identical(items, norm_q, n_tr),
        "near_duplicate_questions": _pairs_summary(near, items, "cosine"),
        "answer_reuse": _answer_reuse(items, n_tr),
        "thresholds": {"near_duplicate_cosine": NEAR_DUPLICATE, "answer_reuse_share": ANSWER_REUSE},
    }


def _where(i: int, j: int, n_tr: int, items: Sequence[Item]) -> str:
    """Which of the pair kinds (i, j) is: across the files, or within one, same or different source item."""
    if (i < n_tr) != (j < n_tr):
        return "across_files"
    same = items[i].source_identity == items[j].source_identity
    return f"within_{items[i].file}_{'same' if same else 'different'}_source"


PAIR_KINDS = (
    "across_files",
    "within_train_different_source",
    "within_test_different_source",
    "within_train_same_source",
    "within_test_same_source",
)


def _pairs_summary(
    pairs: dict[str, list[tuple[int, int, float]]], items: Sequence[Item], measure: str
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in PAIR_KINDS:
        found = sorted(pairs.get(kind, []), key=lambda p: (-p[2], p[0], p[1]))
        out[kind] = {
            "pairs": len(found),
            "cases": len({k for p in found for k in p[:2]}),
            "listed": [{"a": _ref(items[i]), "b": _ref(items[j]), measure: round(s, 4)} for i, j, s in found[:LISTED]],
        }
    return out


def _ref(it: Item) -> dict[str, Any]:
    text = " ".join(it.question.split())
    return {
        "file": it.file,
        "line": it.line,
        "id": it.case_id,
        "source_item": it.source_identity,
        "question": text[:100] + ("..." if len(text) > 100 else ""),
    }


def _identical(items: Sequence[Item], norm_q: list[str], n_tr: int) -> dict[str, Any]:
    by_text: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(norm_q):
        by_text[q].append(i)
    pairs: dict[str, list[tuple[int, int, float]]] = defaultdict(list)
    for members in by_text.values():
        for a_pos, i in enumerate(members):
            for j in members[a_pos + 1 :]:
                pairs[_where(i, j, n_tr, items)].append((i, j, 1.0))
    return _pairs_summary(pairs, items, "similarity")


def _answer_reuse(items: Sequence[Item], n_tr: int) -> dict[str, Any]:
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


# ---------------------------------------------------------------------------------------------------- composition
def composition(train: Sequence[Item], test: Sequence[Item]) -> dict[str, Any]:
    """Counts by category x source x origin per file, evidence share and answers per case."""
    table: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for it in [*train, *test]:
        table[(it.category, it.source_dataset, it.origin)][it.file] += 1
    order = {c: i for i, c in enumerate(CATEGORIES)}
    rows = [
        {"category": c, "source": s, "origin": o, "train": n["train"], "test": n["test"]}
        for (c, s, o), n in sorted(table.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0]))
    ]
    files = {"train": train, "test": test}
    return {
        "rows": rows,
        "evidence_share": {
            f: round(sum(it.has_evidence for it in v) / len(v), 4) if v else 0.0 for f, v in files.items()
        },
        "answers_per_case": {
            f: {str(k): n for k, n in sorted(Counter(len(it.answers) for it in v).items())} for f, v in files.items()
        },
        "origins": sorted({it.origin for it in [*train, *test]}),
    }


# -------------------------------------------------------------------------------------------------------- verdict
def verdict(doc: Mapping[str, Any], settings: Settings) -> dict[str, Any]:
    """Findings over the thresholds (exit 1), warnings to read."""
    findings: list[Finding] = []
    warnings: list[Finding] = []
    for b in doc["surface"]["baselines"]:
        if b["name"] == "majority class":
            continue
        for key, label in (("macro_f1", "category macro-F1"), ("risk_macro_f1", "risk macro-F1")):
            if b[key] > settings.max_surface_f1:
                findings.append(
                    Finding(
                        kind="surface_baseline",
                        message=(
                            f"{b['name']}: {label} {b[key]:.3f} on TEST exceeds --max-surface-f1 "
                            f"{settings.max_surface_f1:.2f}"
                        ),
                    )
                )
        for cat, f1 in b["per_category"].items():
            if f1 >= CATEGORY_F1_WARNING:
                warnings.append(
                    Finding(kind="surface_category", message=(f"{b['name']}: F1 {f1:.3f} for {cat} on TEST"))
                )
    for target, counts in doc["rules"]["by_target"].items():
        best = next(r for r in doc["rules"]["rules"] if " + ".join(r["target"]) == target)
        findings.append(
            Finding(
                kind="exact_rule",
                message=(
                    f'{target}: {counts["distinct_rules"]} exact rule(s), e.g. {best["kind"]} "{best["text"]}" '
                    f"(precision {best['precision']:.2f}, recall {best['recall']:.2f}, "
                    f"{best['in_target']} of {best['with_feature']} cases)"
                ),
            )
        )
    ov = doc["overlap"]
    if n := ov["shared_source_items"]["count"]:
        findings.append(
            Finding(
                kind="shared_source_items",
                message=(
                    f"{n} source item(s) in both files ({ov['shared_source_items']['test_cases']} TEST cases): "
                    "TRAIN leaks into TEST"
                ),
            )
        )
    if n := ov["identical_questions"]["across_files"]["pairs"]:
        findings.append(
            Finding(
                kind="identical_questions",
                message=(f"{n} pair(s) of identical questions across the files: TRAIN leaks into TEST"),
            )
        )
    for section, label in (
        ("near_duplicate_questions", "near-duplicate questions"),
        ("answer_reuse", "cases reusing half or more of another case's answers"),
    ):
        for kind in ("across_files", "within_train_different_source", "within_test_different_source"):
            if n := ov[section][kind]["pairs"]:
                warnings.append(Finding(kind=section, message=f"{n} pair(s) of {label}, {kind.replace('_', ' ')}"))
    for f in ("train", "test"):
        if n := ov["identical_questions"][f"within_{f}_different_source"]["pairs"]:
            warnings.append(
                Finding(
                    kind="identical_questions",
                    message=(f"{n} pair(s) of identical questions within {f.upper()} from different source items"),
                )
            )
    return {"status": "fail" if findings else "pass", "findings": findings, "warnings": warnings}


# ------------------------------------------------------------------------------------------------------ the audit
def audit(
    train: Sequence[Item],
    test: Sequence[Item],
    files: dict[str, Any],
    settings: Settings,
    progress: Callable[[str], None] = lambda _msg: None,
) -> AuditDocument:
    """The whole audit of TRAIN against TEST."""
    import sklearn.ensemble  # noqa: F401  loaded first, so that threadpoolctl sees its OpenMP runtime
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits  # installed with scikit-learn

    # One thread: the trees' OpenMP threads fight over a shared machine's cores (a 4 s fit took 0.1 s with one).
    with threadpool_limits(limits=1), warnings.catch_warnings():
        # a grid point that stops at max_iter is still a valid (if weaker) model; the grid picks the better ones
        warnings.simplefilter("ignore", ConvergenceWarning)
        return _audit(train, test, files, settings, progress)


def _audit(
    train: Sequence[Item],
    test: Sequence[Item],
    files: dict[str, Any],
    settings: Settings,
    progress: Callable[[str], None],
) -> AuditDocument:
    started = time.perf_counter()
    cats = [c for c in CATEGORIES if any(it.category == c for it in [*train, *test])]
    cats += sorted({it.category for it in [*train, *test]} - set(cats))
    surface, top = surface_baselines(train, test, cats, settings, progress)
    progress("exact rules over TRAIN + TEST")
    rules = exact_rules([*train, *test], cats)
    rules["top_ngrams"] = top
    rules["thresholds"] = {"precision": RULE_PRECISION, "recall": RULE_RECALL, "listed_per_target": RULES_LISTED}
    leak = count_leakage([*train, *test], cats)
    leak["count_only_macro_f1"] = next(b["macro_f1"] for b in surface["baselines"] if b["name"] == "answer count only")
    progress("overlap between and within the files")
    doc = AuditDocument(
        audit_version=AUDIT_VERSION,
        files=files,
        settings={"max_surface_f1": settings.max_surface_f1, "seed": settings.seed, "bootstrap": settings.n_boot},
        categories=cats,
        surface=surface,
        rules=rules,
        count_leakage=leak,
        overlap=overlap(train, test),
        composition=composition(train, test),
        verdict={},  # filled in below: the verdict reads the findings above
    )
    doc["verdict"] = verdict(doc, settings)
    doc["files"]["seconds"] = round(time.perf_counter() - started, 2)
    return doc
