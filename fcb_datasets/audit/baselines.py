"""Surface baselines: models fitted on TRAIN's wording and sizes alone, scored once on TEST."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from fcb_datasets.audit.view import TOKEN_PATTERN, CaseView, Settings
from harness.documents.audit import Surface, SurfaceBaseline, TopNgram
from harness.types import CATEGORY_RISK, RISKS


def length_features(items: Sequence[CaseView]) -> np.ndarray:
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


def _answers_doc(it: CaseView) -> str:
    return "\n".join(it.answers)


def macro_f1_interval(
    y_true: np.ndarray, y_pred: np.ndarray, k: int, n_boot: int, seed: int
) -> tuple[float, list[float]]:
    """Macro-F1 over ``k`` classes (those present as label or prediction, as scikit-learn counts them, in each
    resample) and its 95% percentile bootstrap interval over cases: `harness.metrics`' own figure and resampling."""
    from harness.metrics import bootstrap_confusions, confusion, macro_f1, percentile_interval

    point = macro_f1(confusion(y_true, y_pred, (k, k)))
    boots = bootstrap_confusions(y_true, y_pred, n_boot=n_boot, seed=seed, shape=(k, k))
    per_resample = np.array([macro_f1(cm) for cm in boots])  # each resample over the classes it holds
    return float(point), list(percentile_interval(per_resample))


@dataclass(slots=True)
class _Fit:
    params: dict[str, Any]
    cv_score: float | None
    predict: np.ndarray
    model: Any


@dataclass(frozen=True, slots=True)
class _Model:
    make: Callable[..., Any]
    grid: list[dict[str, Any]]  # the settings a grouped cross-validation chooses from
    one: dict[str, Any]  # the setting fitted without a search (Settings.search False)


def _grid_fit(model: _Model, search: bool, x_tr: Any, y_tr: np.ndarray, groups: np.ndarray, x_te: Any) -> _Fit:
    """Choose settings by grouped cross-validation on TRAIN (or take ``model.one`` when not ``search``), refit on
    all of TRAIN, predict TEST."""
    from sklearn.model_selection import GridSearchCV

    make, grid = model.make, model.grid if search else [model.one]
    cv = _cv(groups, y_tr)
    if cv is None or len(grid) == 1:
        fitted = make(**grid[0]).fit(x_tr, y_tr)
        return _Fit(grid[0], None, fitted.predict(x_te), fitted)
    param_grid = [{key: [value] for key, value in g.items()} for g in grid]
    grid_search = GridSearchCV(make(), param_grid, scoring="f1_macro", cv=cv, n_jobs=1)
    grid_search.fit(x_tr, y_tr, groups=groups)
    best = grid_search.best_estimator_
    return _Fit(grid_search.best_params_, float(grid_search.best_score_), grid_search.predict(x_te), best)


def _cv(groups: np.ndarray, y: np.ndarray) -> Any:
    from sklearn.model_selection import GroupKFold

    n_groups = len(np.unique(groups))
    if n_groups < 2 or len(np.unique(y)) < 2:
        return None
    return GroupKFold(n_splits=min(3, n_groups))


def _trees(seed: int) -> _Model:
    from sklearn.ensemble import HistGradientBoostingClassifier

    def make(**kw: Any) -> Any:
        return HistGradientBoostingClassifier(max_iter=60, random_state=seed, **kw)

    grid = [{"max_depth": d, "learning_rate": lr} for d in (2, 3) for lr in (0.1, 0.3)]
    return _Model(make, grid, one={"max_depth": 3, "learning_rate": 0.1})


def _logistic() -> _Model:
    from sklearn.linear_model import LogisticRegression

    def make(**kw: Any) -> Any:
        # saga suits L2-normalised TF-IDF rows: 10-50x faster here than lbfgs at the larger C values
        return LogisticRegression(solver="saga", tol=1e-3, max_iter=1000, random_state=0, **kw)

    return _Model(make, [{"C": c} for c in (0.3, 3.0, 30.0)], one={"C": 3.0})


def surface_baselines(
    train: Sequence[CaseView],
    test: Sequence[CaseView],
    cats: list[str],
    settings: Settings,
    progress: Callable[[str], None],
) -> tuple[Surface, dict[str, list[TopNgram]]]:
    """Every surface baseline, and the top n-grams per category of the answers+question TF-IDF model."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import cross_val_predict
    from sklearn.preprocessing import OneHotEncoder

    index = {c: i for i, c in enumerate(cats)}
    y_tr = np.array([index[it.category] for it in train])
    y_te = np.array([index[it.category] for it in test])
    groups = np.array([it.source_identity for it in train])
    k = len(cats)
    out: list[SurfaceBaseline] = []

    risk_of = np.array([RISKS.index(CATEGORY_RISK[c]) for c in cats])

    def score(name: str, description: str, fit: _Fit) -> None:
        pred = np.asarray(fit.predict)
        f1, ci = macro_f1_interval(y_te, pred, k, settings.n_boot, settings.seed)
        # The same predictions read as risks: the figure a detector is ranked by, so the two compare directly.
        risk_f1, risk_ci = macro_f1_interval(risk_of[y_te], risk_of[pred], len(RISKS), settings.n_boot, settings.seed)
        params = {key: _plain(v) for key, v in fit.params.items()}
        out.append(
            SurfaceBaseline(
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
    tree, search = _trees(settings.seed), settings.search
    score(
        "answer count only",
        "number of answers; trees of depth <= 3",
        _grid_fit(tree, search, num_tr[:, :1], y_tr, groups, num_te[:, :1]),
    )
    score(
        "answer count + lengths",
        "answers, chars and words per answer (mean/min/max/std), question length; trees",
        _grid_fit(tree, search, num_tr, y_tr, groups, num_te),
    )

    progress("surface baselines: TF-IDF over answers and question (logistic regression)")
    logit = _logistic()
    vec_a = TfidfVectorizer(ngram_range=(1, 3), min_df=2, sublinear_tf=True, token_pattern=TOKEN_PATTERN)
    vec_q = TfidfVectorizer(ngram_range=(1, 3), min_df=2, sublinear_tf=True, token_pattern=TOKEN_PATTERN)
    # The vocabularies and IDF come from TRAIN only (no labels are used); TEST is only transformed.
    xa_tr = vec_a.fit_transform([_answers_doc(it) for it in train])
    xa_te = vec_a.transform([_answers_doc(it) for it in test])
    xq_tr = vec_q.fit_transform([it.question for it in train])
    xq_te = vec_q.transform([it.question for it in test])
    fit_a = _grid_fit(logit, search, xa_tr, y_tr, groups, xa_te)
    score("TF-IDF answers", "word 1-3-grams over the answers; logistic regression", fit_a)
    fit_q = _grid_fit(logit, search, xq_tr, y_tr, groups, xq_te)
    score("TF-IDF question", "word 1-3-grams over the question; logistic regression", fit_q)
    xaq_tr, xaq_te = sparse.hstack([xa_tr, xq_tr]).tocsr(), sparse.hstack([xa_te, xq_te]).tocsr()
    fit_aq = _grid_fit(logit, search, xaq_tr, y_tr, groups, xaq_te)
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
        _grid_fit(logit, search, xs_tr, y_tr, groups, xs_te),
    )

    # As if a detector spotted every constructed case: what the construction alone (with the source) says.
    enc_o = OneHotEncoder(handle_unknown="ignore")
    xo_tr = enc_o.fit_transform([[it.source_dataset, it.origin] for it in train])
    xo_te = enc_o.transform([[it.source_dataset, it.origin] for it in test])
    score(
        "source and origin",
        "one-hot source data set and origin tag, as if every constructed case were spotted; logistic regression",
        _grid_fit(logit, search, xo_tr, y_tr, groups, xo_te),
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
        _grid_fit(tree, search, np.hstack(stacked_tr), y_tr, groups, np.hstack(stacked_te)),
    )
    return Surface(baselines=out, test_cases=len(test), train_cases=len(train)), top


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _per_category(y_true: np.ndarray, y_pred: np.ndarray, cats: list[str]) -> dict[str, float]:
    """F1 of each category TEST holds (`harness.metrics.per_class`)."""
    from harness.metrics import confusion, per_class

    f1 = per_class(confusion(y_true, y_pred, (len(cats), len(cats))))["f1"]
    return {cats[c]: float(f1[c]) for c in sorted(set(y_true.tolist()))}


def top_ngrams(
    model: Any, names: list[str], cats: list[str], classes: np.ndarray, n: int = 8
) -> dict[str, list[TopNgram]]:
    """The n-grams with the largest coefficients for each category in a fitted logistic regression."""
    coef = model.coef_
    if coef.shape[0] == 1:  # two classes: one row of coefficients, for the second class
        coef = np.vstack([-coef[0], coef[0]])
    top: dict[str, list[TopNgram]] = {}
    for row, cls in zip(coef, classes, strict=True):
        best = np.argsort(-row)[:n]
        top[cats[int(cls)]] = [{"ngram": names[j], "weight": round(float(row[j]), 4)} for j in best]
    return top
