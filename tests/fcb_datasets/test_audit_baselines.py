"""Surface baselines (fcb_datasets/audit/baselines.py): length features, macro-F1 and its interval, the grouped
search, the heaviest n-grams, and every baseline on a tiny benchmark whose answers' count, words and source each give
the category away (so every model but the majority class scores 1.0), held to hand-worked values and to
scikit-learn's own macro-F1."""

from __future__ import annotations

import itertools
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.metrics import f1_score

from fcb_datasets.audit.baselines import (
    _cv,
    _grid_fit,
    _logistic,
    _per_category,
    _plain,
    _trees,
    length_features,
    macro_f1_interval,
    surface_baselines,
    top_ngrams,
)
from fcb_datasets.audit.view import CaseView, Settings

_serial = itertools.count(1)
A, B, C = "echo_cascade", "genuine_agreement_correct", "majority_wrong_fact"  # high, low and high risk


def view(category: str, question: str, answers: tuple[str, ...], file: str = "train", source: str = "s",
         item: str | None = None) -> CaseView:  # fmt: skip
    i = next(_serial)
    return CaseView(file=file, line=i, case_id=f"c{i}", category=category, question=question, answers=answers,  # type: ignore[arg-type]
                    source_dataset=source, source_identity=f"{source}:{item or i}", origin="natural",
                    has_evidence=False)  # fmt: skip


def test_length_features_by_hand() -> None:
    # answers "ab" (2 chars, 1 word) and "abcd efg" (8 chars, 2 words); question "Why so?" (7 chars, 2 words).
    # chars: mean 5, min 2, max 8, std 3; words: mean 1.5, min 1, max 2, std 0.5
    got = length_features([view(A, "Why so?", ("ab", "abcd efg")), view(B, "x", ("abc",))])
    assert got.shape == (2, 11)
    assert got[0].tolist() == [2, 5, 2, 8, 3, 1.5, 1, 2, 0.5, 7, 2]
    assert got[1].tolist() == [1, 3, 3, 3, 0, 1, 1, 1, 0, 1, 1]


def test_macro_f1_is_scikit_learns_over_the_classes_present() -> None:
    # class 0: TP 1, FN 1 -> P 1, R 1/2, F1 2/3; class 1: TP 2, FP 1 -> P 2/3, R 1, F1 0.8; class 2: F1 1.
    # Mean over the three present: (2/3 + 0.8 + 1) / 3 = 0.8222; class 3 (k = 4) is absent and not counted
    y, p = np.array([0, 0, 1, 1, 2]), np.array([0, 1, 1, 1, 2])
    for k in (3, 4):
        f1, ci = macro_f1_interval(y, p, k, n_boot=200, seed=1)
        assert f1 == pytest.approx((2 / 3 + 0.8 + 1) / 3)
        assert f1 == pytest.approx(f1_score(y, p, average="macro"))
        assert len(ci) == 2 and ci[0] <= f1 <= ci[1]
    # right everywhere: every resample is 1 too
    assert macro_f1_interval(y, y, 3, n_boot=100, seed=0) == (1.0, [1.0, 1.0])
    # a prediction without a label counts as present: class 1 predicted, never true: (0.8 + 0 + ...) see sklearn
    y2, p2 = np.array([0, 0, 2]), np.array([0, 1, 2])
    assert macro_f1_interval(y2, p2, 3, n_boot=10, seed=0)[0] == pytest.approx(f1_score(y2, p2, average="macro"))


def test_the_interval_depends_on_the_seed_and_the_resamples() -> None:
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 3, 60), rng.integers(0, 3, 60)
    a = macro_f1_interval(y, p, 3, n_boot=300, seed=1)[1]
    assert a == macro_f1_interval(y, p, 3, n_boot=300, seed=1)[1]
    assert a != macro_f1_interval(y, p, 3, n_boot=300, seed=2)[1]
    assert a[0] < a[1]


def test_grouped_folds_need_two_groups_and_two_classes() -> None:
    assert _cv(np.array(["a", "a", "a"]), np.array([0, 1, 0])) is None
    assert _cv(np.array(["a", "b", "c"]), np.array([1, 1, 1])) is None
    assert _cv(np.array(["a", "a", "b"]), np.array([0, 1, 0])).n_splits == 2  # two groups: two folds
    assert _cv(np.array(["a", "b", "c", "d", "e"]), np.array([0, 1, 0, 1, 0])).n_splits == 3  # at most three


def test_the_model_settings() -> None:
    trees, logit = _trees(5), _logistic()
    assert trees.grid == [{"max_depth": 2, "learning_rate": 0.1}, {"max_depth": 2, "learning_rate": 0.3},
                          {"max_depth": 3, "learning_rate": 0.1}, {"max_depth": 3, "learning_rate": 0.3}]  # fmt: skip
    assert trees.one == {"max_depth": 3, "learning_rate": 0.1}
    tree = trees.make(max_depth=2, learning_rate=0.3)
    assert (tree.max_iter, tree.random_state, tree.max_depth, tree.learning_rate) == (60, 5, 2, 0.3)
    assert logit.grid == [{"C": 0.3}, {"C": 3.0}, {"C": 30.0}] and logit.one == {"C": 3.0}
    lr = logit.make(C=3.0)
    assert (lr.solver, lr.tol, lr.max_iter, lr.random_state, lr.C) == ("saga", 1e-3, 1000, 0, 3.0)


def separable(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.array([[float(i % 2)] for i in range(n)])
    return x, (x[:, 0] > 0.5).astype(int), np.array([f"g{i}" for i in range(n)])


def test_a_grid_is_searched_by_grouped_folds_and_refitted_on_all_of_train() -> None:
    # one feature that is the class: every C scores macro-F1 1 in every fold; the first setting wins a tie
    x, y, groups = separable(12)
    fit = _grid_fit(_logistic(), True, x, y, groups, np.array([[0.0], [1.0]]))
    assert (fit.params, fit.cv_score, fit.predict.tolist()) == ({"C": 0.3}, 1.0, [0, 1])
    assert fit.model.C == 0.3 and fit.model.coef_.shape == (1, 1)


def test_without_a_search_or_without_folds_one_setting_is_fitted() -> None:
    x, y, groups = separable(12)
    fit = _grid_fit(_logistic(), False, x, y, groups, np.array([[1.0]]))
    assert (fit.params, fit.cv_score, fit.predict.tolist(), fit.model.C) == ({"C": 3.0}, None, [1], 3.0)
    # a search, but one group: no folds, the grid's first setting
    fit = _grid_fit(_logistic(), True, x, y, np.array(["g"] * 12), np.array([[1.0]]))
    assert (fit.params, fit.cv_score, fit.model.C) == ({"C": 0.3}, None, 0.3)


def test_a_plain_value() -> None:
    assert _plain(np.float64(0.5)) == 0.5 and type(_plain(np.float64(0.5))) is float
    assert type(_plain(np.int64(3))) is int and _plain("x") == "x"


def test_per_category_f1_of_the_categories_test_holds() -> None:
    # classes 0, 2 in TEST (1 only predicted): 0: TP 1, FN 1 -> 2/3; 2: TP 1, FP 1 (the 1 predicted... no, class 1)
    # TEST 0, 0, 2; predicted 0, 1, 2: class 0 P 1 R 1/2 -> 2/3; class 2 P 1 R 1 -> 1; class 1 not in TEST
    got = _per_category(np.array([0, 0, 2]), np.array([0, 1, 2]), ["x", "y", "z"])
    assert got == pytest.approx({"x": 2 / 3, "z": 1.0})
    assert list(got) == ["x", "z"]


def test_top_ngrams_of_two_classes_read_one_row_both_ways() -> None:
    # one row [0.5, -1, 2, 0] is the second class's; the first's is its negative. Top 2: first class b (1.0) and
    # d (0.0); second c (2.0) and a (0.5)
    model = SimpleNamespace(coef_=np.array([[0.5, -1.0, 2.0, 0.0]]))
    got = top_ngrams(model, ["a", "b", "c", "d"], ["X", "Y"], np.array([0, 1]), n=2)
    assert got == {"X": [{"ngram": "b", "weight": 1.0}, {"ngram": "d", "weight": 0.0}],
                   "Y": [{"ngram": "c", "weight": 2.0}, {"ngram": "a", "weight": 0.5}]}  # fmt: skip


def test_top_ngrams_of_three_classes_name_the_classes_fitted() -> None:
    # classes 0, 1, 3 of four categories: one row each, named by the category; weights to four decimals; 8 by default
    coef = np.array([[1.23456, 0.1, -2.0], [0.0, 3.0, 1.0], [-1.0, -2.0, -0.5]])
    model = SimpleNamespace(coef_=coef)
    got = top_ngrams(model, ["a", "b", "c"], ["W", "X", "Y", "Z"], np.array([0, 1, 3]))
    assert got == {
        "W": [{"ngram": "a", "weight": 1.2346}, {"ngram": "b", "weight": 0.1}, {"ngram": "c", "weight": -2.0}],
        "X": [{"ngram": "b", "weight": 3.0}, {"ngram": "c", "weight": 1.0}, {"ngram": "a", "weight": 0.0}],
        "Z": [{"ngram": "c", "weight": -0.5}, {"ngram": "a", "weight": -1.0}, {"ngram": "b", "weight": -2.0}],
    }
    names = [f"n{k}" for k in range(10)]
    wide = SimpleNamespace(coef_=np.array([np.arange(10.0)]))
    assert [t["ngram"] for t in top_ngrams(wide, names, ["X", "Y"], np.array([0, 1]))["Y"]] == names[::-1][:8]


# --- every baseline on a benchmark that gives itself away ---------------------------------------------------------


def give_away(file: str, n_a: int, n_b: int, start: int = 0) -> list[CaseView]:
    """A: three long answers "alpha ..." to "why alpha ...", source sa; B: two short "beta" answers to "why beta",
    source sb. Answer count, lengths, words and source each tell the category."""
    out = [view(A, f"why alpha thing {i}", (f"alpha one {i}", f"alpha two {i} more", f"alpha three {i} words here"),
                file, "sa") for i in range(start, start + n_a)]  # fmt: skip
    out += [view(B, f"why beta {i}", (f"beta {i}", "beta"), file, "sb") for i in range(start, start + n_b)]
    return out


@pytest.fixture(scope="module")
def surface() -> tuple[dict, dict, list[str]]:
    said: list[str] = []
    # TRAIN: 25 A, 20 B (A the commonest); TEST: 6 A, 4 B, and 2 C (high risk like A) worded as A and never in TRAIN
    train, test = give_away("train", 25, 20), give_away("test", 6, 4, start=100)
    test += [replace(it, category=C) for it in give_away("test", 2, 0, start=200)]
    got, top = surface_baselines(train, test, [A, B, C], Settings(n_boot=40, search=False), said.append)
    return got, top, said


NAMES = ["majority class", "answer count only", "answer count + lengths", "TF-IDF answers", "TF-IDF question",
         "TF-IDF answers + question", "source data set only", "source and origin", "all surface features"]  # fmt: skip


def test_every_baseline_is_scored_in_order(surface: tuple[dict, dict, list[str]]) -> None:
    got, _, said = surface
    assert [b["name"] for b in got["baselines"]] == NAMES
    assert (got["train_cases"], got["test_cases"]) == (45, 12)
    assert said == ["surface baselines: answer count and lengths (gradient-boosted trees)",
                    "surface baselines: TF-IDF over answers and question (logistic regression)",
                    "surface baselines: source data set, and everything together"]  # fmt: skip


def test_the_majority_class_by_hand(surface: tuple[dict, dict, list[str]]) -> None:
    # always A (25 of 45 in TRAIN). TEST 6 A, 4 B, 2 C: A P 6/12, R 1 -> F1 2/3; B and C F1 0 (present as labels).
    # Macro (2/3 + 0 + 0) / 3 = 0.2222. As risks: high 8 (A and C), low 4, all called high: high P 8/12, R 1 -> 0.8,
    # low 0: (0.8 + 0) / 2 = 0.4
    got, _, _ = surface
    major = got["baselines"][0]
    assert major["description"] == f"always {A}, the commonest category in TRAIN"
    assert (major["params"], major["cv_macro_f1"]) == ({}, None)
    assert major["macro_f1"] == pytest.approx(2 / 9)
    assert major["risk_macro_f1"] == pytest.approx(0.4)
    assert major["per_category"] == pytest.approx({A: 2 / 3, B: 0.0, C: 0.0})
    assert major["ci"][0] <= 2 / 9 <= major["ci"][1] and major["risk_ci"][0] <= 0.4 <= major["risk_ci"][1]


def test_every_other_baseline_reads_the_give_away(surface: tuple[dict, dict, list[str]]) -> None:
    # every model tells A from B; C, worded as A and never seen, is called A. Categories: A P 6/8, R 1 -> 6/7;
    # B 1; C 0: macro (6/7 + 1 + 0) / 3 = 0.6190. As risks C is high like A: every risk right, 1.0
    got, _, _ = surface
    for b in got["baselines"][1:]:
        assert (b["name"], b["macro_f1"], b["risk_macro_f1"], b["risk_ci"], b["cv_macro_f1"]) == (
            b["name"], pytest.approx((6 / 7 + 1) / 3), 1.0, [1.0, 1.0], None)  # fmt: skip
        assert b["per_category"] == pytest.approx({A: 6 / 7, B: 1.0, C: 0.0})
        assert b["ci"][0] < b["macro_f1"] <= b["ci"][1]
    params = {b["name"]: b["params"] for b in got["baselines"]}
    trees, logit = {"max_depth": 3, "learning_rate": 0.1}, {"C": 3.0}
    want = [{}, trees, trees, logit, logit, logit, logit, logit, trees]
    assert params == dict(zip(NAMES, want, strict=True))


def test_the_descriptions(surface: tuple[dict, dict, list[str]]) -> None:
    got, _, _ = surface
    assert [b["description"] for b in got["baselines"][1:]] == [
        "number of answers; trees of depth <= 3",
        "answers, chars and words per answer (mean/min/max/std), question length; trees",
        "word 1-3-grams over the answers; logistic regression",
        "word 1-3-grams over the question; logistic regression",
        "both TF-IDF blocks side by side; logistic regression",
        "one-hot source data set; logistic regression",
        "one-hot source data set and origin tag, as if every constructed case were spotted; logistic regression",
        "trees over counts, lengths, source and the out-of-fold TF-IDF model scores",
    ]


def test_the_heaviest_n_grams_name_each_category_s_words(surface: tuple[dict, dict, list[str]]) -> None:
    # the answers + question model, both sides fitted (two classes: one row read both ways). Each side's heaviest
    # n-gram is the word on every one of its answers ("alpha", "beta"), then its question's words; weights fall.
    _, top, _ = surface
    assert list(top) == [A, B]
    assert len(top[A]) == 8 and len(top[B]) == 8
    assert (top[A][0]["ngram"], top[B][0]["ngram"]) == ("answer: alpha", "answer: beta")
    assert all("alpha" in t["ngram"] for t in top[A][1:3]) and all("beta" in t["ngram"] for t in top[B][1:3])
    for side in (A, B):
        weights = [t["weight"] for t in top[side]]
        assert weights == sorted(weights, reverse=True) and weights[0] > 0.5


# --- the searched run: what each model is handed -------------------------------------------------------------------


def test_four_categories_fill_a_k_by_k_matrix() -> None:
    # k = 4 with class 3 present (harness' default confusion is 3x4 and could not hold it). y 0,1,2,3,3, p 0,1,2,3,0:
    # class 0 P 1/2 R 1 -> 2/3; 1 and 2 F1 1; class 3 P 1 R 1/2 -> 2/3: macro (2/3 + 1 + 1 + 2/3) / 4 = 5/6
    from harness.metrics import bootstrap_confusions, macro_f1, percentile_interval

    y, p = np.array([0, 1, 2, 3, 3]), np.array([0, 1, 2, 3, 0])
    f1, ci = macro_f1_interval(y, p, 4, n_boot=7, seed=3)
    assert f1 == pytest.approx(5 / 6) and f1 == pytest.approx(f1_score(y, p, average="macro"))
    # the interval is that of exactly n_boot = 7 resamples of a 4x4 matrix, harness' own resampling
    boots = bootstrap_confusions(y, p, n_boot=7, seed=3, shape=(4, 4))
    assert ci == list(percentile_interval(np.array([macro_f1(cm) for cm in boots])))
    assert ci != list(percentile_interval(np.array([macro_f1(cm) for cm in bootstrap_confusions(
        y, p, n_boot=1000, seed=3, shape=(4, 4))])))  # fmt: skip
    assert _per_category(y, p, ["w", "x", "y", "z"]) == pytest.approx({"w": 2 / 3, "x": 1.0, "y": 1.0, "z": 2 / 3})


def test_the_search_scores_macro_f1_over_grouped_folds_one_job(monkeypatch: pytest.MonkeyPatch) -> None:
    import sklearn.model_selection as ms
    from sklearn.model_selection import GroupKFold

    seen: list[dict] = []
    real = ms.GridSearchCV

    def spy(*args: object, **kw: object) -> object:
        seen.append(kw)
        return real(*args, **kw)

    monkeypatch.setattr(ms, "GridSearchCV", spy)
    x, y, _ = separable(12)
    groups = np.array([f"g{i % 4}" for i in range(len(y))])
    _grid_fit(_logistic(), True, x, y, groups, x)
    assert len(seen) == 1
    assert seen[0]["scoring"] == "f1_macro" and seen[0]["n_jobs"] == 1
    assert isinstance(seen[0]["cv"], GroupKFold) and seen[0]["cv"].n_splits == 3  # four groups: three folds


def groups_of(file: str, n_a: int, n_b: int, start: int, n_groups: int) -> list[CaseView]:
    """give_away's cases, their source identities folded into n_groups groups per source."""
    return [replace(it, source_identity=f"{it.source_dataset}:{i % n_groups}")
            for i, it in enumerate(give_away(file, n_a, n_b, start))]  # fmt: skip


def test_a_searched_run_hands_each_model_the_search_the_groups_and_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    import sklearn.feature_extraction.text as text
    import sklearn.model_selection as ms

    import fcb_datasets.audit.baselines as mod
    from fcb_datasets.audit.view import TOKEN_PATTERN

    calls: dict[str, list] = {"fit": [], "interval": [], "trees": [], "tfidf": [], "cvp": []}
    real_fit, real_interval, real_trees = mod._grid_fit, mod.macro_f1_interval, mod._trees
    real_tfidf, real_cvp = text.TfidfVectorizer, ms.cross_val_predict

    def fit(model, search, x_tr, y_tr, groups, x_te):  # type: ignore[no-untyped-def]
        calls["fit"].append((search, None if groups is None else list(groups)))
        return real_fit(model, search, x_tr, y_tr, groups, x_te)

    def interval(y_true, y_pred, k, n_boot, seed):  # type: ignore[no-untyped-def]
        calls["interval"].append((k, n_boot, seed))
        return real_interval(y_true, y_pred, k, n_boot, seed)

    def trees(seed):  # type: ignore[no-untyped-def]
        calls["trees"].append(seed)
        return real_trees(seed)

    def tfidf(**kw):  # type: ignore[no-untyped-def]
        calls["tfidf"].append(kw)
        return real_tfidf(**kw)

    def cvp(*args, **kw):  # type: ignore[no-untyped-def]
        calls["cvp"].append(kw)
        return real_cvp(*args, **kw)

    monkeypatch.setattr(mod, "_grid_fit", fit)
    monkeypatch.setattr(mod, "macro_f1_interval", interval)
    monkeypatch.setattr(mod, "_trees", trees)
    monkeypatch.setattr(text, "TfidfVectorizer", tfidf)
    monkeypatch.setattr(ms, "cross_val_predict", cvp)
    # TRAIN: 25 A in groups sa:0..4, 20 B in sb:0..4 (ten groups); TEST 3 A, 2 B
    train, test = groups_of("train", 25, 20, 0, 5), groups_of("test", 3, 2, 50, 5)
    got, _ = surface_baselines(train, test, [A, B], Settings(n_boot=20, seed=7, search=True), lambda _: None)
    identities = [it.source_identity for it in train]
    assert calls["fit"] == [(True, identities)] * 8  # every model but the majority class, searched, grouped
    assert calls["interval"] == [(2, 20, 7), (3, 20, 7)] * 9  # as categories (k 2), then as the three risks
    assert calls["trees"] == [7]
    want = {"ngram_range": (1, 3), "min_df": 2, "sublinear_tf": True, "token_pattern": TOKEN_PATTERN}
    assert calls["tfidf"] == [want, want]
    # the two text models' TRAIN scores are out of fold: three grouped folds of the ten groups, by source identity
    assert len(calls["cvp"]) == 2
    for kw in calls["cvp"]:
        assert kw["method"] == "predict_proba" and kw["cv"].n_splits == 3 and list(kw["groups"]) == identities
    # a searched model reports its cross-validated macro-F1 (the majority class none). Every logistic model's folds
    # tell A from B by the words or the source: 1.0. The trees' folds train on ~30 cases, too few for a leaf of 20
    # (scikit-learn's least), so they guess: a figure in [0, 1], below 1
    cv = [b["cv_macro_f1"] for b in got["baselines"]]
    assert cv[0] is None and cv[3:8] == [1.0] * 5
    assert all(0 <= cv[i] < 1 for i in (1, 2, 8))


def test_one_group_in_train_means_no_folds_and_in_fold_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    # every TRAIN case one source identity: no grouped folds, so no search (cv None) and the stacked model reads
    # the text models' own TRAIN probabilities; still every model tells A from B on TEST: macro 1.0, cv None
    import sklearn.model_selection as ms

    def no_cvp(*args: object, **kw: object) -> None:
        raise AssertionError("no folds to predict out of")

    monkeypatch.setattr(ms, "cross_val_predict", no_cvp)
    train = [replace(it, source_identity="one") for it in give_away("train", 25, 20)]
    test = give_away("test", 3, 2, start=50)
    got, _ = surface_baselines(train, test, [A, B], Settings(n_boot=10, search=True), lambda _: None)
    assert [b["macro_f1"] for b in got["baselines"][1:]] == [1.0] * 8
    assert [b["cv_macro_f1"] for b in got["baselines"]] == [None] * 9
