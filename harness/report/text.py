"""Render a run's metrics document: the terminal summary, ``report.md`` and ``metrics.json``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, cast

import orjson

from harness.documents import Calibration, GroupAccuracy, Headline, Metrics, MetricsDocument, Tokens, error_rate
from harness.files import atomic_write
from harness.report.markdown import md_text
from harness.report.operating import OPERATING_HEADER, operating_note, operating_rows, threshold_lines
from harness.report.repeats import (
    AGREEMENT_HEADER,
    EPOCH_HEADER,
    PROBE_HEADER,
    PROBES_NOTE,
    STYLE_HEADER,
    agreement_rows,
    epoch_rows,
    epochs_note,
    noise_lines,
    probe_category_rows,
    probe_rows,
    style_rows,
)
from harness.runfolder.names import METRICS, REPORT
from harness.schema_messages import printable
from harness.tables import figure, interval, percent, table


def _core_rows(block: Headline) -> list[list[str]]:
    """(metric, value, 95% interval) rows of one headline block: all cases, or the natural + assembled ones."""
    return [
        ["accuracy", percent(block["accuracy"]), interval(block.get("accuracy_ci95"), percent)],
        ["macro-F1", figure(block["macro_f1"]), interval(block.get("macro_f1_ci95"))],
        ["weighted kappa (quadratic)", figure(block["weighted_kappa"]), ""],
        ["high-risk recall", percent(block["high_risk_recall"]), ""],
        ["false-alarm rate (low called high)", percent(block["false_alarm_rate"]), ""],
        ["error rate", percent(error_rate(block)), ""],
    ]


def consensus_rows(m: Metrics) -> list[list[str]]:
    """The consensus block's rows (`harness.figures.consensus`): what a false-consensus detector is for; none for a
    run without a consensus case (or one written before the block)."""
    c = m.get("consensus")
    if not c:
        return []
    rows = [
        [f"wrong consensus called high ({c['n_wrong']} cases)", percent(c["wrong_caught"]),
         interval(c["wrong_caught_ci95"], percent)],
        [f"right consensus called high ({c['n_right']} cases)", percent(c["right_alarmed"]),
         interval(c["right_alarmed_ci95"], percent)],
        ["consensus balanced accuracy", figure(c["balanced_accuracy"]), interval(c["balanced_accuracy_ci95"])],
    ]  # fmt: skip
    if c["n_scored"]:
        rows.append([f"consensus ROC-AUC, wrong vs right (n={c['n_scored']})", figure(c["roc_auc"]),
                     interval(c["roc_auc_ci95"])])  # fmt: skip
    return rows


def headline_rows(m: Metrics) -> list[list[str]]:
    """(metric, value, 95% interval) rows for the figures a reader looks at first."""
    rows = _core_rows(m) + consensus_rows(m)
    if s := m.get("scores"):
        rows += [
            [f"ROC-AUC, high vs rest (n={s['n_scored']})", figure(s["roc_auc"]), ""],
            ["average precision, high vs rest", figure(s["average_precision"]), ""],
            ["Brier score, high vs rest", figure(s["brier"]), ""],
        ]
        if cal := s.get("calibration"):
            rows.append([f"ECE, high vs rest ({cal['bins']} bins)", figure(cal["ece"]), interval(cal.get("ece_ci95"))])
    return rows


CALIBRATION_HEADER = ["bin", "scores", "cases", "mean score", "share high", "gap"]
"""The reliability diagram's columns; gap is |share high - mean score| (no pipe: it would split a Markdown cell)."""


def calibration_of(m: Metrics) -> Calibration | None:
    """The calibration block, or None: no scores, or a document written before calibration was reported."""
    scores = m.get("scores")
    return scores.get("calibration") if scores else None


def calibration_rows(m: Metrics) -> list[list[Any]]:
    """The reliability diagram as rows, one a bin (empty bins too: their means are n/a); none without scores."""
    cal = calibration_of(m)
    if not cal:
        return []
    rows = []
    for k, b in enumerate(cal["diagram"]):
        span = f"{'[' if k == 0 else '('}{b['lower']:.3f}, {b['upper']:.3f}]"
        mean, share = b["mean_score"], b["share_high"]
        gap = None if mean is None or share is None else abs(share - mean)
        rows.append([k + 1, span, b["count"], figure(mean), figure(share), figure(gap)])
    return rows


def calibration_note(m: Metrics) -> str:
    """What the calibration figures count, or that there are none (never a 0 standing for no score)."""
    s = m.get("scores")
    if not s:
        return ("No reply carried a risk_score: no ROC-AUC, average precision, Brier score or calibration (ECE) "
                "for this run.")  # fmt: skip
    cal = s.get("calibration")
    if not cal:
        return "This run's metrics were written before calibration was reported (fcb eval --resume writes them again)."
    bounds = f" {interval(cal['ece_ci95'])}" if cal.get("ece_ci95") else ""
    return (
        f"ECE {figure(cal['ece'])}{bounds} over {cal['bins']} equal-width bins of the score, high risk against the "
        f"rest, on the {s['n_scored']} cases of {m['n_cases']} whose reply carried a risk_score (errored cases "
        f"and replies without a score are left out, as for ROC-AUC). ECE = sum over bins of cases / {s['n_scored']} "
        "x gap, the gap being |share high - mean score|; a bin holds the scores above its lower edge up to its upper "
        "one (the first holds 0 too). A calibrated score lies on the diagonal: share high = mean score."
    )


REAL_LABEL = "natural + assembled"
NATURAL_LABEL = "natural only"


def headline_table(m: Metrics) -> tuple[list[str], list[list[str]]]:
    """The headline table: one value column, or, when the cases carry origin tags, the same figures on the
    natural + assembled cases and on the natural ones alone in more columns, so that constructed cases never stand
    alone behind a result (a run written before ``headline_natural`` shows the first two)."""
    rows = headline_rows(m)
    real = m.get("headline_real")
    if not real:
        return ["metric", "value", "95% CI"], rows
    subsets = [(REAL_LABEL, real)]
    if natural := m.get("headline_natural"):
        subsets.append((NATURAL_LABEL, natural))
    combined = [["cases", str(m["n_cases"]), "", *(c for _, b in subsets for c in (str(b["n_cases"]), ""))]]
    cores = [_core_rows(block) for _, block in subsets]
    combined += [row + [c for core in cores for c in core[k][1:]] for k, row in enumerate(rows[: len(cores[0])])]
    combined += [[*r, *([""] * 2 * len(subsets))] for r in rows[len(cores[0]) :]]  # score metrics: all cases only
    return ["metric", "all cases", "95% CI", *(h for label, _ in subsets for h in (label, "95% CI"))], combined


def origin_rows(m: Metrics) -> list[list[Any]] | None:
    """Accuracy by origin, or None when no case carries an origin tag (the table would say nothing)."""
    if not m.get("headline_real"):
        return None
    return group_rows(m["breakdowns"]["origin"])


def confusion_rows(m: Metrics) -> tuple[list[str], list[list[Any]]]:
    cm = m["confusion_matrix"]
    header = ["expected \\ predicted", *cm["columns"]]
    return header, [[row, *counts] for row, counts in zip(cm["rows"], cm["counts"], strict=True)]


_RISKS: Final = ("low", "medium", "high")


def class_rows(m: Metrics) -> list[list[Any]]:
    scores = m["per_class"]
    return [[r, *(figure(scores[r][k]) for k in ("precision", "recall", "f1")), scores[r]["support"]]
            for r in _RISKS]  # fmt: skip


def category_rows(m: Metrics) -> list[list[Any]]:
    rows = []
    for cat, v in m["per_category"].items():
        p = v["predicted"]
        rows.append(
            [
                cat,
                v["expected_risk"],
                v["n"],
                percent(v["accuracy"]),
                interval(v["ci95"], percent),
                p["low"],
                p["medium"],
                p["high"],
                p["error"],
            ]
        )
    return rows


CATEGORY_HEADER = ["category", "expected", "n", "accuracy", "95% CI", "low", "medium", "high", "error"]


def group_rows(groups: Mapping[str, GroupAccuracy], shown: Callable[[Any], str] = str) -> list[list[Any]]:
    """One row a group; ``shown`` renders its name, a value of the cases file (`md_text` for Markdown)."""
    return [[shown(key), v["n"], percent(v["accuracy"]), interval(v["ci95"], percent)] for key, v in groups.items()]


def operational_rows(m: Metrics) -> list[list[Any]]:
    ops = m["operational"]
    lat = ops["latency_s"]
    kinds = ", ".join(f"{k} {n}" for k, n in ops["errors_by_kind"].items()) or "none"
    unit = "items" if "epochs" in m or "probes" in m else "cases"  # a run with epochs or probes counts each request
    return [
        [f"{unit} run", ops["cases"]],
        ["cases not run", m["n_not_run"]],
        ["errors", f"{ops['errors']} ({kinds})"],
        ["retries", ops["retries"]],
        ["wall time", f"{ops['wall_s']:.2f} s"],
        ["throughput", f"{ops['cases_per_s']:.1f} {unit}/s" if ops["cases_per_s"] else "n/a"],
        [
            "latency p50 / p90 / p99",
            " / ".join(f"{1000 * lat[k]:.1f} ms" for k in ("p50", "p90", "p99")) if lat else "n/a",
        ],
        *_token_rows(ops.get("tokens")),
        *([["replayed from the response cache", cached]] if (cached := ops.get("cached")) else []),
    ]


def error_message_rows(m: Metrics, width: int = 160) -> list[list[Any]]:
    """(count, kind, message, first case) for the most frequent distinct error messages, each on one line."""
    rows = []
    for e in m["operational"].get("error_messages", []):
        text = printable(" ".join(e["message"].split()), escape_backslash=False)  # no terminal escapes
        rows.append([e["count"], e["kind"], text if len(text) <= width else text[: width - 3] + "...", e["case_id"]])
    return rows


ERROR_HEADER = ["count", "kind", "message", "e.g. case"]


def _error_table(m: Metrics, fmt: str) -> list[str]:
    rows = error_message_rows(m)
    if fmt == "github":  # a detector's message is inert Markdown: no HTML, link or pipe of it renders
        rows = [[n, kind, md_text(text), md_text(case)] for n, kind, text, case in rows]
    return [table(rows, headers=ERROR_HEADER, tablefmt=fmt)] if rows else []


def _token_rows(tokens: Tokens | None) -> list[list[Any]]:
    if not tokens:
        return []
    counts = f"{tokens['prompt']:,} / {tokens['completion']:,} / {tokens['total']:,}"
    rows: list[list[Any]] = [["tokens (prompt / completion / total)", counts]]
    if estimated := tokens.get("estimated"):
        rows.append(["tokens counted at their most (no usage in the reply)", f"{estimated:,}"])
    if "cost_usd" in tokens:
        rows.append(["cost (at most)" if estimated else "cost", f"${tokens['cost_usd']:.4f}"])
    return rows


def _title(doc: MetricsDocument, shown: Callable[[Any], str] = str) -> list[str]:
    """The run's title lines; ``shown`` renders the values the user or the detector chose (`md_text`)."""
    ds, det = doc["dataset"], doc["detector"]
    status = "complete" if doc["complete"] else "INCOMPLETE"
    spec = shown(det["spec"])
    lines = [
        f"detector: {shown(det['label'])} ({spec})" if det.get("label") else f"detector: {spec}",
        *([f"fingerprint: {shown(_fingerprint_text(fp))}"] if (fp := det.get("fingerprint")) else []),
        f"data set: {shown(ds['name'])} (sha256 {shown(ds['sha256'][:12])}, {ds['cases']} valid cases)",
        f"run: {status}; harness {doc['harness_version']}; {doc['created']}",
    ]
    if skipped := ds.get("skipped_invalid"):
        lines.append(f"skipped: {skipped} invalid line(s), listed in metrics.json")
    return lines


def _origin_table(m: Metrics, fmt: str) -> list[str]:
    rows = origin_rows(m)
    return [] if rows is None else [table(rows, headers=["origin", "n", "accuracy", "95% CI"], tablefmt=fmt)]


def _real_note(m: Metrics) -> list[str]:
    if not m.get("headline_real"):
        return []
    return [
        f"The {REAL_LABEL} column counts only cases tagged `origin_natural` (a source's answer set as it is) or "
        "`origin_assembled` (real answers combined by rule); `origin_constructed` cases (text written for the "
        f"benchmark) and untagged ones are left out of it. The {NATURAL_LABEL} column counts the `origin_natural` "
        "cases alone. Read the columns together.",
        "",
    ]


DESIGN_NAMES: Final = {"accuracy": "accuracy", "macro_f1": "macro-F1", "weighted_kappa": "weighted kappa",
                       "high_risk_recall": "high-risk recall", "false_alarm_rate": "false-alarm rate",
                       "error_rate": "error rate"}  # fmt: skip


def interval_lines(m: Metrics, shown: Callable[[Any], str] = str) -> list[str]:
    """What the intervals resample (the cases, or their clusters: `harness.design_effect`) and, where cases share
    a cluster, each headline figure's design effect; nothing for a run drawn without resamples. ``shown`` writes
    the user's --cluster-by (a tag prefix can hold anything)."""
    boot, block = m.get("bootstrap"), m.get("clusters")
    if not boot:
        return []
    drawn = f"{boot['resamples']} bootstrap resamples (seed {boot['seed']}, {boot['method']})"
    if block is None or block["n_clusters"] == block["n_cases"]:
        by = f" (--cluster-by {shown(block['by'])}: no two cases share a cluster)" if block else ""
        return [f"Intervals: {drawn} of the cases{by}; per-group intervals are Wilson score intervals. Errors "
                "count as wrong."]  # fmt: skip
    found = cast(Mapping[str, float | None], block["design_effect"])
    effects = ", ".join(f"{name} {figure(found.get(key), 2)}" for key, name in DESIGN_NAMES.items())
    return [
        f"Intervals: {drawn} of {block['n_clusters']:,} clusters of the {block['n_cases']:,} cases (--cluster-by "
        f"{shown(block['by'])}; the largest holds {block['largest']}), a drawn cluster bringing all its cases; "
        "per-group intervals are Wilson score intervals on the effective number of cases. Errors count as wrong.",
        f"Design effect of the {block['n_clusters']:,} clusters (each figure's variance over the clusters' "
        f"resamples, over its variance when every case is drawn alone; the effective sample size is the cases over "
        f"it): {effects}.",
    ]


def _fingerprint_text(fp: Mapping[str, Any]) -> str:
    """A fingerprint on one line: its kind, then each field (digests shortened to 12 characters)."""
    parts = []
    for key, value in fp.items():
        if key != "kind":
            text = value if not isinstance(value, dict | list) else orjson.dumps(value).decode()
            parts.append(f"{key} {str(text)[:12] if key.endswith('sha256') else text}")
    return f"{fp.get('kind', '?')}: " + ", ".join(parts)


def render_summary(doc: MetricsDocument) -> str:
    """The terminal summary of a run."""
    m = doc["metrics"]
    fmt = "simple"
    header, cm_rows = confusion_rows(m)
    headline_header, headline_body = headline_table(m)
    parts = [
        "\n".join(_title(doc, printable)),
        table(headline_body, headers=headline_header, tablefmt=fmt),
        *interval_lines(m, printable)[1:],  # the design effect, where cases share clusters
        table(cm_rows, headers=header, tablefmt=fmt),
        table(category_rows(m), headers=CATEGORY_HEADER, tablefmt=fmt),
        *_origin_table(m, fmt),
        table(
            group_rows(m["breakdowns"]["model_family"]),
            headers=["model_family", "n", "accuracy", "95% CI"],
            tablefmt=fmt,
        ),
        *_repeats_summary(m, fmt),
        table(operational_rows(m), tablefmt=fmt),
        *_error_table(m, fmt),
    ]
    return "\n\n".join(parts)


def _repeats_summary(m: Metrics, fmt: str) -> list[str]:
    """Self-agreement over the epochs and each probe's flip rate, when the run has them."""
    out = []
    if rows := agreement_rows(m):
        out.append(table(rows, [f"epochs: {AGREEMENT_HEADER[0]}", *AGREEMENT_HEADER[1:]], fmt))
    if rows := probe_rows(m):
        out.append(table(rows, headers=PROBE_HEADER, tablefmt=fmt))
        out += noise_lines(m)
    out += threshold_lines(m)
    return out


def render_markdown(doc: MetricsDocument) -> str:
    """``report.md``: every table of the summary plus all breakdowns."""
    m = doc["metrics"]
    fmt = "github"
    header, cm_rows = confusion_rows(m)
    out = ["# False-consensus detector report", "", *(f"- {line}" for line in _title(doc, md_text)), ""]
    headline_header, headline_body = headline_table(m)
    out += ["## Headline", "", table(headline_body, headers=headline_header, tablefmt=fmt)]
    out += ["", *_real_note(m)]
    out += [line for text in interval_lines(m, md_text) for line in (text, "")]
    if rows := operating_rows(m):
        out += ["## Operating points", "", operating_note(m), "", table(rows, OPERATING_HEADER, fmt), ""]
        out += [*(f"- {md_text(line)}" for line in threshold_lines(m)), ""] if threshold_lines(m) else []
    out += ["## Confusion matrix", "", table(cm_rows, headers=header, tablefmt=fmt), ""]
    out += [
        "## Per class",
        "",
        table(class_rows(m), headers=["risk", "precision", "recall", "F1", "support"], tablefmt=fmt),
        "",
    ]
    out += ["## Calibration", "", calibration_note(m), ""]
    if cal_rows := calibration_rows(m):
        out += [table(cal_rows, headers=CALIBRATION_HEADER, tablefmt=fmt), ""]
    out += _repeats_markdown(m, fmt)
    out += ["## Per category", "", table(category_rows(m), headers=CATEGORY_HEADER, tablefmt=fmt), ""]
    for name, groups in m["breakdowns"].items():
        if name == "origin" and origin_rows(m) is None:
            continue
        out += [
            f"## By {name}",
            "",
            table(group_rows(groups, md_text), headers=[name, "n", "accuracy", "95% CI"], tablefmt=fmt),
            "",
        ]
    out += ["## Operational", "", table(operational_rows(m), headers=["", ""], tablefmt=fmt), ""]
    if errors := _error_table(m, fmt):
        out += ["## Errors (most frequent messages)", "", *errors, ""]
    if problems := doc["dataset"].get("problems"):
        out += ["## Problems in the cases file", "", *(f"- {md_text(p)}" for p in problems), ""]
    return "\n".join(out)


def _repeats_markdown(m: Metrics, fmt: str) -> list[str]:
    """The epochs and probes sections (`harness.report.repeats`); none for a plain run."""
    out: list[str] = []
    if rows := epoch_rows(m):
        out += ["## Epochs", "", epochs_note(m), "", table(rows, EPOCH_HEADER, fmt), ""]
        out += ["Self-agreement:", "", table(agreement_rows(m), AGREEMENT_HEADER, fmt), ""]
    if rows := probe_rows(m):
        header, cat_rows = probe_category_rows(m)
        out += ["## Probes: the robustness card", "", PROBES_NOTE, "", table(rows, PROBE_HEADER, fmt), ""]
        out += [*(f"- {line}" for line in noise_lines(m)), ""] if noise_lines(m) else []
        if styled := style_rows(m):
            out += ["Per tone and per injected template:", "", table(styled, STYLE_HEADER, fmt), ""]
        out += ["Each probe's figure per category:", "", table(cat_rows, headers=header, tablefmt=fmt), ""]
    return out


def write_reports(run_dir: str | Path, doc: MetricsDocument) -> None:
    """Write ``metrics.json`` and ``report.md`` into the run folder, each atomically."""
    run_dir = Path(run_dir)
    atomic_write(run_dir / METRICS, orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
    atomic_write(run_dir / REPORT, render_markdown(doc).encode())
