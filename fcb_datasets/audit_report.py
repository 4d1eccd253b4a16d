"""Render the `fcb audit-dataset` document (`fcb_datasets.audit`) as text or Markdown; JSON is the document."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from harness.documents.audit import AuditDocument, CaseRef, Pairs, PairSet
from harness.tables import figure, interval, table

PAIRS_SHOWN = 10  # overlap pairs printed per kind; the JSON lists up to 20 and counts them all
NGRAMS_SHOWN = 5


def _ci(value: float, ci: list[float]) -> str:
    return f"{figure(value)} {interval(ci)}"


class _Writer:
    def __init__(self, markdown: bool) -> None:
        self.md = markdown
        self.parts: list[str] = []

    def heading(self, text: str) -> None:
        self.parts.append(f"## {text}" if self.md else f"{text}\n{'=' * len(text)}")

    def para(self, text: str) -> None:
        self.parts.append(text)

    def table(self, rows: list[list[Any]], headers: list[str]) -> None:
        if rows:
            self.parts.append(table(rows, headers=headers, tablefmt="github" if self.md else "simple"))
        else:
            self.parts.append("(none)")

    def text(self) -> str:
        return "\n\n".join(self.parts) + "\n"


def render(doc: AuditDocument, markdown: bool = False) -> str:
    w = _Writer(markdown)
    files = doc["files"]
    split = f" (one file split by {files['split_by']})" if files.get("split_by") else ""
    w.para(
        f"audit of TRAIN {files['train']['path']} ({files['train']['cases']} cases) against TEST "
        f"{files['test']['path']} ({files['test']['cases']} cases){split}\n"
        f"verdict: {doc['verdict']['status'].upper()}  (max surface macro-F1 {doc['settings']['max_surface_f1']:.2f}, "
        f"seed {doc['settings']['seed']}, {files['seconds']:.1f} s)"
    )
    _surface(w, doc)
    _rules(w, doc)
    _counts(w, doc)
    _shape(w, doc)
    _structure(w, doc)
    _overlap(w, doc)
    _composition(w, doc)
    _verdict(w, doc)
    return w.text()


def _surface(w: _Writer, doc: AuditDocument) -> None:
    s = doc["surface"]
    w.heading("1. Surface baselines (trained on TRAIN, scored on TEST)")
    rows = [
        [
            b["name"],
            _ci(b["macro_f1"], b["ci"]),
            _ci(b["risk_macro_f1"], b["risk_ci"]),
            "" if b["cv_macro_f1"] is None else f"{b['cv_macro_f1']:.3f}",
            ", ".join(f"{k}={v}" for k, v in b["params"].items()),
        ]
        for b in s["baselines"]
    ]
    w.table(rows, ["features", "category macro-F1 [95% CI]", "risk macro-F1 [95% CI]", "CV on TRAIN", "chosen"])
    chosen = (
        f"settings chosen by grouped cross-validation on TRAIN ({s['train_cases']} cases)"
        if doc["settings"].get("search", True)
        else f"each model at one setting, fitted on TRAIN ({s['train_cases']} cases) without a search (--quick)"
    )
    w.para(
        f"{len(doc['categories'])} categories, chance about {1 / len(doc['categories']):.3f} (category) and "
        f"the majority class above; {chosen}"
    )
    names = [b["name"] for b in s["baselines"] if b["name"] != "majority class"]
    per = {b["name"]: b["per_category"] for b in s["baselines"]}
    rows = [[c, *(f"{per[n].get(c, 0.0):.2f}" for n in names)] for c in doc["categories"] if c in per[names[0]]]
    w.table(rows, ["F1 on TEST", *names])


def _rules(w: _Writer, doc: AuditDocument) -> None:
    r = doc["rules"]
    t = r["thresholds"]
    w.heading(f"2. Exact rules (precision >= {t['precision']:.2f}, recall >= {t['recall']:.2f}, TRAIN + TEST)")
    totals = ", ".join(f"{k}: {v['distinct_rules']}" for k, v in r["by_target"].items())
    w.para(
        f"{r['total']} distinct rule(s) ({totals or 'none'}); up to {t['listed_per_target']} listed per target"
        if r["total"]
        else "no single feature picks out a category"
    )
    rows = [
        [
            " + ".join(x["target"]),
            x["kind"],
            f'"{x["text"]}"',
            "" if x["longest_equivalent"] == x["text"] else f'"{x["longest_equivalent"]}"',
            f"{x['in_target']}/{x['with_feature']}",
            x["target_size"],
            f"{x['precision']:.2f}",
            f"{x['recall']:.2f}",
        ]
        for x in r["rules"]
    ]
    if rows:
        w.table(
            rows,
            [
                "category",
                "kind",
                "feature",
                "longest with the same cases",
                "in cat./with it",
                "cat. size",
                "precision",
                "recall",
            ],
        )
    top = [[cat, "; ".join(g["ngram"] for g in grams[:NGRAMS_SHOWN])] for cat, grams in r["top_ngrams"].items()]
    w.para("Most predictive n-grams of the TF-IDF answers + question model:")
    w.table(top, ["category", "n-grams (largest coefficients first)"])


def _counts(w: _Writer, doc: AuditDocument) -> None:
    c = doc["count_leakage"]
    w.heading("3. Count leakage (answers per case, TRAIN + TEST)")
    w.para(f"macro-F1 on TEST from the answer count alone: {c['count_only_macro_f1']:.3f}")
    for counts, label in ((c["by_category"], "category"), (c["by_source"], "source")):
        values = sorted({int(n) for d in counts.values() for n in d}, key=int)
        rows = [[name, *(d.get(str(v), "") for v in values)] for name, d in counts.items()]
        w.table(rows, [label, *(f"{v} ans." for v in values)])


def _shape(w: _Writer, doc: AuditDocument) -> None:
    sh = doc["shape"]
    t = sh["thresholds"]
    w.heading("4. Shape tells (what a shape shared by several categories gives away)")
    w.para("Constructed cases told from real ones, per source: exact rules (findings) and a TF-IDF classifier "
           f"(ROC-AUC on TEST; a warning from {t['origin_auc_warning']:.2f})")  # fmt: skip
    rows = [[o["source"], o["constructed"], o["real"], len(o["rules"]), "" if o["auc"] is None else f"{o['auc']:.3f}"]
            for o in sh["origin"]]  # fmt: skip
    w.table(rows, ["source", "constructed", "real", "exact rules", "classifier AUC"])
    w.para(f"Wrong majorities told from right ones by shape features and by words, per source x origin (ROC-AUC on "
           f"TEST; a finding when even the lower end of its 95% interval is over {t['max_shape_auc']:.2f}, "
           "for built cases)")  # fmt: skip
    rows = [[x["source"], x["origin"], x["test_cases"], x["wrong_majorities_test"], f"{x['auc']:.3f}",
             f"{x['auc_low']:.3f}", f"{x['text_auc']:.3f}", f"{x['text_auc_low']:.3f}",
             "finding" if x["finding"] else ""] for x in sh["truth_inside"]]  # fmt: skip
    w.table(
        rows,
        [
            "source",
            "origin",
            "TEST cases",
            "wrong majorities",
            "shape AUC",
            "at least (95%)",
            "words AUC",
            "at least (95%)",
            "",
        ],
    )
    w.para(f"Answer position: mean position of correct answers less that of wrong ones, among answers of one kind "
           f"(0 = no tell; a finding at {t['position_effect']:.2f} or more with |z| >= {t['position_z']})")  # fmt: skip
    rows = [[p["source"], p["category"], p["cases"], f"{p['gap']:+.3f}", "" if p["z"] is None else p["z"],
             "finding" if p["finding"] else ""] for p in sh["positions"]]  # fmt: skip
    w.table(rows, ["source", "category", "cases", "gap", "z", ""])


def _structure(w: _Writer, doc: AuditDocument) -> None:
    st = doc["structure"]
    w.heading("5. Structure baselines (what counting votes is worth)")
    w.para("Each answer's final value read and counted; no baseline knows which answer is true. On the cases with a "
           "consensus (a value held by 60%): the share of wrong consensus called high, of right consensus called "
           f"high, and ROC-AUC (a finding over {st['max_structure_auc']:.2f} for a structure model)")  # fmt: skip
    rows = []
    keys = ("wrong_caught", "right_alarmed", "balanced_accuracy", "roc_auc")
    for b in st["baselines"]:
        first = [b["name"], _ci(b["risk_macro_f1"], b["risk_ci"])]
        rows.append([*first, "wrong vs right consensus", *(_optional(b["consensus"], k) for k in keys)])
        rows.append(["", "", "high vs low", *(_optional(b["high_vs_low"], k) for k in keys)])
    w.table(rows, ["baseline", "risk macro-F1 [95% CI]", "cases", "wrong caught", "right alarmed",
                   "balanced accuracy", "ROC-AUC"])  # fmt: skip
    w.para("answers with no final value read, TEST: " + ", ".join(
        f"{source} {u['unread']} of {u['answers']}" for source, u in st["unread"].items()))  # fmt: skip


def _optional(block: Any, key: str) -> str:
    """A consensus figure with its interval, or "n/a" when there is no block or no figure."""
    if not block or block[key] is None:
        return "n/a"
    found = block.get(f"{key}_ci95")
    return _ci(block[key], found) if found else figure(block[key])


def _overlap(w: _Writer, doc: AuditDocument) -> None:
    o = doc["overlap"]
    w.heading("6. Overlap")
    shared = o["shared_source_items"]
    w.para(
        f"source items in both files: {shared['count']} ({shared['test_cases']} TEST cases)"
        + "".join(f"\n  {s}" for s in shared["listed"][:PAIRS_SHOWN])
    )
    sections = (
        (o["identical_questions"], "identical questions"),
        (o["near_duplicate_questions"],
         f"near-duplicate questions (cosine >= {o['thresholds']['near_duplicate_cosine']})"),
        (o["answer_reuse"], f"answer reuse (>= {o['thresholds']['answer_reuse_share']:.0%} of a case's answers)"),
    )  # fmt: skip
    kinds = list(PairSet.__annotations__)
    rows = [[label, *(f"{_kinds(s)[k]['pairs']} ({_kinds(s)[k]['cases']})" for k in kinds)] for s, label in sections]
    w.table(rows, ["pairs (cases)", *(k.replace("_", " ") for k in kinds)])
    for pairset, label in sections:
        for kind in ("across_files", "within_train_different_source", "within_test_different_source"):
            pairs = _kinds(pairset)[kind]
            listed = pairs["listed"][:PAIRS_SHOWN]
            if not listed:
                continue
            lines = [f"{label}, {kind.replace('_', ' ')} (first {len(listed)} of {pairs['pairs']}):"]
            for p in listed:
                measure = p.get("similarity", p.get("cosine", p.get("shared_share", 0.0)))
                lines.append(f"  {_where(p['a'])} ~ {_where(p['b'])} ({measure:.2f}): {p['a']['question']}")
                if p["b"]["question"] != p["a"]["question"]:
                    lines.append(f"  {' ' * len(_where(p['a']))}   {p['b']['question']}")
            w.para("\n".join(lines))


def _kinds(pairset: PairSet) -> Mapping[str, Pairs]:
    """A pair set's kinds by name, in the document's order."""
    return cast("Mapping[str, Pairs]", pairset)


def _where(ref: CaseRef) -> str:
    return f"{ref['file']}:{ref['line']} {ref['id']}"


def _composition(w: _Writer, doc: AuditDocument) -> None:
    c = doc["composition"]
    w.heading("7. Composition")
    w.table(
        [[r["category"], r["source"], r["origin"], r["train"], r["test"]] for r in c["rows"]],
        ["category", "source", "origin", "TRAIN", "TEST"],
    )
    ev = c["evidence_share"]
    w.para(f"evidence share: TRAIN {ev['train']:.1%}, TEST {ev['test']:.1%}")
    per_file = (("TRAIN", c["answers_per_case"]["train"]), ("TEST", c["answers_per_case"]["test"]))
    values = sorted({int(n) for _, d in per_file for n in d})
    w.table(
        [[f, *(d.get(str(v), "") for v in values)] for f, d in per_file],
        ["answers per case", *map(str, values)],
    )


def _verdict(w: _Writer, doc: AuditDocument) -> None:
    v = doc["verdict"]
    w.heading(f"8. Verdict: {v['status'].upper()}")
    lines = [f"- {f['message']}" for f in v["findings"]] or ["no finding over the thresholds"]
    if v["warnings"]:
        lines += ["", "warnings (not failing; read them):"] + [f"- {f['message']}" for f in v["warnings"]]
    w.para("\n".join(lines))


RENDERERS: dict[str, Callable[[AuditDocument], str]] = {
    "text": lambda doc: render(doc, markdown=False),
    "md": lambda doc: render(doc, markdown=True),
}
