"""The operating points in the reports (report.md, report.html): what escalating on the detector's verdicts costs
and catches, the risk-coverage area beside its two references, and, in HTML, the review curve (the share of false
consensus caught against the share of cases escalated, along risk_score) with the two policies marked. Rows and
notes from a metrics document's ``operating_points`` block (`harness.operating`)."""

from __future__ import annotations

from collections.abc import Callable

from harness.documents import Metrics, OperatingPoint
from harness.tables import figure, interval, percent

OPERATING_HEADER = ["escalate", "cases escalated", "escalation rate", "95% CI", "false consensus caught", "95% CI",
                    "right consensus escalated", "95% CI"]  # fmt: skip
POLICY_NAMES = {"high": "verdict high", "high_or_medium": "verdict medium or high"}


def operating_rows(m: Metrics) -> list[list[str]]:
    """One row a policy; none for a document without the block."""
    block = m.get("operating_points")
    if not block:
        return []
    rows = []
    for name, p in block["policies"].items():
        rows.append([POLICY_NAMES[name], str(p["escalated"]), *_pair(p, "escalation_rate"),
                     *_pair(p, "false_consensus_caught"), *_pair(p, "right_consensus_escalated")])  # fmt: skip
    return rows


def _pair(p: OperatingPoint, name: str) -> list[str]:
    return [percent(p[name]), interval(p[f"{name}_ci95"], percent)]  # type: ignore[literal-required]


def operating_note(m: Metrics) -> str:
    """What the figures count, and the risk-coverage area beside a ranking that knows nothing and a perfect one."""
    block = m.get("operating_points")
    if not block:
        return ""
    rc = block["risk_coverage"]
    n, high = block["n_cases"], block["n_false_consensus"]
    text = (
        f"Of {n} cases, {high} are false consensus (labelled high) and {block['n_right_consensus']} right consensus "
        "(labelled low). A case escalated goes to a person; an error is never escalated "
        f"({block['n_errors']} here). "
    )
    if rc["aurc"] is not None and n:
        text += (
            f"Risk-coverage by {rc['by'].replace('_', ' ')}: letting cases through from the lowest risk up, the area "
            f"under the share of false consensus among them is {figure(rc['aurc'])} (AURC; a ranking that knows "
            f"nothing: {figure(high / n)}; a perfect one: {figure(best_aurc(n, high))}; lower is better)."
        )
    return text


def best_aurc(n: int, high: int) -> float:
    """AURC of a ranking that lets every other case through before any false consensus: its risk is 0 up to
    coverage (n - high) / n, then high_passed / passed for each false consensus let through one at a time."""
    return sum((k / (n - high + k)) / n for k in range(1, high + 1))


def review_svg(m: Metrics, size: int = 300) -> str:
    """The share of false consensus caught against the share of cases escalated, along risk_score (a line), with
    the two verdict policies (dots); empty without the block."""
    block = m.get("operating_points")
    if not block:
        return ""
    pad, side = 36, size - 72

    def at(v: float, vertical: bool = False) -> float:
        return pad + (1 - v) * side if vertical else pad + v * side

    diagonal = f"M{at(0)} {at(0, True)}L{at(1)} {at(1, True)}"  # escalating at random
    parts = [f'<svg class="review" width="{size}" height="{size}" role="img" aria-label="review curve">',
             f'<rect x="{pad}" y="{pad}" width="{side}" height="{side}" fill="#fff" stroke="#999"/>',
             f'<path d="{diagonal}" stroke="#999" stroke-dasharray="4 3"/>']  # fmt: skip
    points = [(0.0, 0.0)] + [(p["escalation_rate"], p["false_consensus_caught"]) for p in block["by_score"]
                             if p["false_consensus_caught"] is not None]  # fmt: skip
    if len(points) > 1:
        path = "".join(f"{'M' if i == 0 else 'L'}{at(x):.1f} {at(y, True):.1f}" for i, (x, y) in enumerate(points))
        parts.append(f'<path class="score-curve" d="{path}" fill="none" stroke="#4c72b0" stroke-width="1.5"/>')
    for name, p in block["policies"].items():
        x, y = p["escalation_rate"], p["false_consensus_caught"]
        if x is None or y is None:
            continue
        tip = f"escalate {POLICY_NAMES[name]}: {percent(x)} escalated, {percent(y)} of false consensus caught"
        parts.append(f'<circle class="policy" data-policy="{name}" cx="{at(x):.1f}" cy="{at(y, True):.1f}" r="4" '
                     f'fill="#b42318"><title>{tip}</title></circle>')  # fmt: skip
    ticks: Callable[[float], str] = lambda t: (  # noqa: E731
        f'<text class="tick" x="{at(t):.1f}" y="{size - pad + 14}" text-anchor="middle">{t:g}</text>'
        f'<text class="tick" x="{pad - 4}" y="{at(t, True) + 4:.1f}" text-anchor="end">{t:g}</text>'
    )
    parts.extend(ticks(t) for t in (0, 0.5, 1))
    parts.append(f'<text x="{size / 2}" y="{size - 4}" text-anchor="middle">share of cases escalated</text>')
    parts.append(f'<text x="10" y="{size / 2}" transform="rotate(-90 10 {size / 2})" text-anchor="middle">'
                 "false consensus caught</text></svg>")  # fmt: skip
    return "".join(parts)


def threshold_lines(m: Metrics) -> list[str]:
    """A run asked with --threshold: the promise, and what this run's cases show beside it; none otherwise."""
    t = m.get("threshold")
    if not t:
        return []
    shown = "every case" if t["threshold"] is None else f"{t['basis'].replace('_', ' ')} >= {t['threshold']:g}"
    lines = [f"Promise ({t['file']}): {t['promise']}."]
    if t["miss_rate"] is None:
        lines.append(f"This run has no case labelled high: nothing to hold the promise to ({shown}).")
        return lines
    verdict = "within the promise" if t["within"] else "above the promise's target"
    lines.append(
        f"This run, escalating {shown}: {t['missed']} of {t['n_false_consensus']} false consensus missed, "
        f"{percent(t['miss_rate'])} {interval(t['miss_rate_ci95'], percent)} against a target of "
        f"{percent(t['miss_rate_target'])} ({verdict}); {t['escalated']} of {t['n_cases']} cases escalated "
        f"({percent(t['escalation_rate'])})."
    )
    return lines
