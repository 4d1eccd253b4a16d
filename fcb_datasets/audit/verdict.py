"""The verdict: findings over the thresholds (exit 1) and warnings to read."""

from __future__ import annotations

from fcb_datasets.audit.view import Settings
from harness.documents.audit import Finding, Overlap, Rules, Shape, Structure, Surface, Verdict
from harness.tables import interval

CATEGORY_F1_WARNING = 0.9


def verdict(
    surface: Surface, rules: Rules, shape: Shape, structure: Structure, overlap: Overlap, settings: Settings
) -> Verdict:
    """Findings over the thresholds (exit 1), warnings to read."""
    findings: list[Finding] = []
    warnings: list[Finding] = []
    for b in surface["baselines"]:
        if b["name"] == "majority class":
            continue
        for value, label in ((b["macro_f1"], "category macro-F1"), (b["risk_macro_f1"], "risk macro-F1")):
            if value > settings.max_surface_f1:
                findings.append(
                    Finding(
                        kind="surface_baseline",
                        message=(
                            f"{b['name']}: {label} {value:.3f} on TEST exceeds --max-surface-f1 "
                            f"{settings.max_surface_f1:.2f}"
                        ),
                    )
                )
        for cat, f1 in b["per_category"].items():
            if f1 >= CATEGORY_F1_WARNING:
                warnings.append(
                    Finding(kind="surface_category", message=(f"{b['name']}: F1 {f1:.3f} for {cat} on TEST"))
                )
    for target, counts in rules["by_target"].items():
        best = next(r for r in rules["rules"] if " + ".join(r["target"]) == target)
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
    _shape(shape, findings, warnings)
    _structure(structure, findings, warnings)
    ov = overlap
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
    for section, pairset, label in (
        ("near_duplicate_questions", ov["near_duplicate_questions"], "near-duplicate questions"),
        ("answer_reuse", ov["answer_reuse"], "cases reusing half or more of another case's answers"),
    ):
        for where, pairs in (
            ("across files", pairset["across_files"]),
            ("within train different source", pairset["within_train_different_source"]),
            ("within test different source", pairset["within_test_different_source"]),
        ):
            if n := pairs["pairs"]:
                warnings.append(Finding(kind=section, message=f"{n} pair(s) of {label}, {where}"))
    identical = ov["identical_questions"]
    for f, pairs in (("TRAIN", identical["within_train_different_source"]),
                     ("TEST", identical["within_test_different_source"])):  # fmt: skip
        if n := pairs["pairs"]:
            warnings.append(
                Finding(
                    kind="identical_questions",
                    message=(f"{n} pair(s) of identical questions within {f} from different source items"),
                )
            )
    return Verdict(status="fail" if findings else "pass", findings=findings, warnings=warnings)


def _shape(shape: Shape, findings: list[Finding], warnings: list[Finding]) -> None:
    """Findings and warnings of the shape checks (`shape`)."""
    for o in shape["origin"]:
        for rule in o["rules"]:
            findings.append(Finding(kind="origin_rule", message=(
                f'{o["source"]}: {rule["kind"]} "{rule["text"]}" picks out its {rule["target"][0]} cases '
                f"(precision {rule['precision']:.2f}, recall {rule['recall']:.2f})")))  # fmt: skip
        if o["auc"] is not None and o["auc"] >= shape["thresholds"]["origin_auc_warning"]:
            warnings.append(Finding(kind="origin_classifier", message=(
                f"{o['source']}: a TF-IDF classifier tells constructed cases from real ones at ROC-AUC {o['auc']:.3f} "
                "(what that buys: the source-and-origin baseline and the truth-inside check)")))  # fmt: skip
    line = shape["thresholds"]["max_shape_auc"]
    for t in shape["truth_inside"]:
        for what, auc, low in (
            ("shape features", t["auc"], t["auc_low"]),
            ("their words", t["text_auc"], t["text_auc_low"]),
        ):
            message = (
                f"{t['source']} ({t['origin']}): {what} tell wrong majorities from right ones at ROC-AUC "
                f"{auc:.3f} on TEST, at least {low:.3f} (line {line:.2f})"
            )
            if t["finding"] and low > line:
                findings.append(Finding(kind="truth_inside", message=message))
            elif auc > line and low > 0.5:  # over the line, and better than chance beyond doubt
                warnings.append(Finding(kind="truth_inside", message=message))
    for p in shape["positions"]:
        if p["finding"]:
            findings.append(Finding(kind="answer_position", message=(
                f"{p['source']} / {p['category']}: correct answers sit {abs(p['gap']):.2f} "
                f"{'later' if p['gap'] > 0 else 'earlier'} than wrong ones among answers of one kind "
                f"({p['cases']} cases, z {p['z']})")))  # fmt: skip


def _structure(structure: Structure, findings: list[Finding], warnings: list[Finding]) -> None:
    """A structure model that tells a wrong consensus from a right one (or high from low) over the line, and better
    than chance beyond doubt (its interval's lower end over 0.5): a finding, the benchmark rewards counting votes.
    Over the line on a set too small to be sure: a warning. The vote rule is the floor a detector is read against,
    never a finding by itself."""
    line = structure["max_structure_auc"]
    for b in structure["baselines"]:
        if b["name"] == "vote rule":
            continue
        for block, what in ((b["consensus"], "a wrong consensus from a right one"),
                            (b["high_vs_low"], "a high-risk case from a low-risk one")):  # fmt: skip
            auc, ci = (block["roc_auc"], block["roc_auc_ci95"]) if block else (None, None)
            if auc is None or auc <= line:
                continue
            sure = ci is not None and ci[0] > 0.5
            shown = f"{auc:.3f} {interval(ci)}" if ci else f"{auc:.3f}"
            message = f"{b['name']}: tells {what} at ROC-AUC {shown} on TEST (line {line:.2f})"
            message += ": counting votes scores on this benchmark" if sure else ""
            (findings if sure else warnings).append(Finding(kind="structure", message=message))
