"""The embedded set passes the project's own shortcut audit (`fcb audit-dataset --split-by source-item`), with margin.

The audit fits its surface models on half the set (a few seconds), so it runs once for the session
(`conftest.embedded_audit`: the CLI's JSON document, shared by the workers) and the text report is rendered from
that document.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import EMBEDDED

from fcb_datasets.audit_report import RENDERERS

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

SURFACE_LINE = 0.45  # the audit's --max-surface-f1 (its default): a surface baseline over it is a finding
COUNT_ONLY_LINE = 0.30  # issue 27: the answer count alone must tell the risk no better than this
ROW = re.compile(r"^(?P<name>[a-zA-Z][\w +-]*?)\s{2,}(?P<cat>\d\.\d{3}) \[[\d., ]+\]\s+(?P<risk>\d\.\d{3}) \[")
BASELINES = [
    "majority class", "answer count only", "answer count + lengths", "TF-IDF answers", "TF-IDF question",
    "TF-IDF answers + question", "source data set only", "source and origin", "all surface features",
]  # fmt: skip


@pytest.fixture
def audited(embedded_audit: Path) -> dict:
    return json.loads(embedded_audit.read_text())


def test_the_printed_audit_passes_line_by_line(audited: dict) -> None:
    lines = RENDERERS["text"](audited).splitlines()  # what `fcb audit-dataset` prints for the same document
    assert any(line.startswith("verdict: PASS") for line in lines), lines[:3]
    assert "no single feature picks out a category" in lines
    assert "no finding over the thresholds" in lines
    rows = {m["name"]: (float(m["cat"]), float(m["risk"])) for line in lines if (m := ROW.match(line))}
    assert sorted(rows) == sorted(BASELINES)
    for name, (category_f1, risk_f1) in rows.items():
        assert category_f1 <= SURFACE_LINE and risk_f1 <= SURFACE_LINE, (name, category_f1, risk_f1)
    assert rows["answer count only"][1] <= COUNT_ONLY_LINE
    count_line = next(line for line in lines if line.startswith("macro-F1 on TEST from the answer count alone"))
    assert float(count_line.rsplit(" ", 1)[1]) <= COUNT_ONLY_LINE


def test_the_audit_document_has_no_finding(audited: dict) -> None:
    doc = audited
    assert doc["verdict"] == {"status": "pass", "findings": [], "warnings": doc["verdict"]["warnings"]}
    assert doc["files"]["split_by"] == "source-item"
    assert doc["files"]["train"]["cases"] + doc["files"]["test"]["cases"] == len(EMBEDDED.read_text().splitlines())
    assert doc["rules"]["total"] == 0 and doc["rules"]["rules"] == []
    for baseline in doc["surface"]["baselines"]:
        assert baseline["macro_f1"] <= SURFACE_LINE and baseline["risk_macro_f1"] <= SURFACE_LINE, baseline["name"]
    count_only = next(b for b in doc["surface"]["baselines"] if b["name"] == "answer count only")
    assert count_only["risk_macro_f1"] <= COUNT_ONLY_LINE
    assert doc["count_leakage"]["count_only_macro_f1"] == count_only["macro_f1"]
    # Every category has the same answer counts (lone_correct_dissenter: its pairs are threes), as the audit counts.
    by_category = doc["count_leakage"]["by_category"]
    assert len({json.dumps(v, sort_keys=True) for c, v in by_category.items() if c != "lone_correct_dissenter"}) == 1
    assert not any(t["finding"] for t in doc["shape"]["truth_inside"])
    assert not any(p["finding"] for p in doc["shape"]["positions"])
