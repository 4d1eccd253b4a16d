"""The case-level analysis as Markdown (`harness.leaderboard.case_analysis_render`) from a document written by hand:
the page is read back line by line and table by table (rows split on their unescaped pipes), each cell against the
figure it shows (three decimals, n/a where undefined) and each heading and sentence as a reader reads it."""

from __future__ import annotations

import json
import re
from typing import Any

from harness.leaderboard.case_analysis_render import (
    DEFAULT_TOP,
    case_rows,
    detector_rows,
    least_discriminating,
    suspect_rows,
    to_json,
    to_markdown,
)

METHOD = {
    "difficulty": "the share of detectors right",
    "discrimination": "the point-biserial correlation of right with macro_f1",
    "errors": "an error counts as wrong",
    "suspect": "every strongest detector predicts the same wrong risk",
}


def case(cid: str, disc: float | None, **kw: Any) -> dict[str, Any]:
    return {
        "id": cid,
        "category": kw.get("category", "echo_cascade"),
        "expected": kw.get("expected", "high"),
        "predicted": kw.get("predicted", "lml"),
        "right": kw.get("right", 1),
        "errored": kw.get("errored", 0),
        "difficulty": kw.get("difficulty", 1 / 3),
        "discrimination": disc,
    }


def document() -> dict[str, Any]:
    """Three detectors (given out of order of macro_f1) on 5 of a data set's 6 cases; two suspects; three cases of
    negative discrimination (C-3 and C-5 tied at -0.5, C-4 at -0.125), one at exactly 0 (C-6) and one undefined."""
    return {
        "dataset": {"name": "set_a.jsonl", "sha256": "0123456789abcdef" * 4, "cases": 6},
        "method": dict(METHOD),
        "detectors": [
            {"detector": "b*", "macro_f1": 0.5, "strongest": True, "errors": 1, "run": "/runs/b"},
            {"detector": "a", "macro_f1": 0.75, "strongest": True, "errors": 0, "run": "/runs/a"},
            {"detector": "c", "macro_f1": 0.25, "strongest": False, "errors": 2, "run": "/runs/c_1"},
        ],
        "summary": {
            "cases": 5,
            "detectors": 3,
            "strongest": 2,
            "mean_difficulty": 0.4,
            "all_right": 1,
            "all_wrong": 0,
            "discrimination_undefined": 1,
            "negative_discrimination": 3,
            "errored_predictions": 3,
            "cases_with_errors": 2,
            "suspects": 2,
        },
        "suspects": [
            {
                "id": "C-2",
                "category": "echo_cascade",
                "origin": "natural",
                "expected": "high",
                "predicted": "low",
                "agreeing": 2,
                "difficulty": 0.0,
                "discrimination": None,
            },
            {
                "id": "C-5",
                "category": "fact",
                "expected": "medium",
                "predicted": "high",
                "agreeing": 2,
                "difficulty": 0.25,
                "discrimination": -0.5,
            },
        ],
        "cases": [  # out of id order: ties of discrimination are broken by id, not by this order
            case("C-1", 0.25),
            case("C-5", -0.5, category="fact", expected="medium", predicted="hhm", right=1, difficulty=0.25),
            case("C-2", None, predicted="lll", right=0, difficulty=0.0),
            case("C-4", -0.125, category="x_y", expected="low", predicted="mel", right=1, errored=1, difficulty=0.5),
            case("C-3", -0.5, expected="medium", predicted="lme", right=1, errored=2, difficulty=2 / 3),
            case("C-6", 0.0),
        ],
    }


def blocks(text: str) -> list[Any]:
    """The page's lines, each run of table lines replaced by (header, rows), rows split on unescaped pipes."""
    out: list[Any] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].startswith("|"):
            j += 1
        cells = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines[i:j]]
        assert set(lines[i + 1]) <= set("|:- ")  # the separator under the header
        out.append((cells[0], cells[2:]))
        i = j
    return out


DETECTORS = (
    ["detector", "macro_f1", "strongest", "errors", "run"],
    # by macro_f1, highest first: a 0.75, b* 0.5, c 0.25; names and folders inert Markdown (\* and \_)
    [["a", "0.750", "yes", "0", "/runs/a"], ["b\\*", "0.500", "yes", "1", "/runs/b"],
     ["c", "0.250", "", "2", "/runs/c\\_1"]],
)  # fmt: skip
SUSPECTS = (
    ["case", "category", "origin", "label", "strongest predict", "agreeing", "difficulty", "discrimination"],
    # 2 of the 3 detectors agree on each; C-5 has no origin: an empty cell
    [["C-2", "echo\\_cascade", "natural", "high", "low", "2 of 3", "0.000", "n/a"],
     ["C-5", "fact", "", "medium", "high", "2 of 3", "0.250", "-0.500"]],
)  # fmt: skip
NEGATIVE_HEADER = ["case", "category", "label", "predicted", "right", "errored", "difficulty", "discrimination"]
NEGATIVE_ROWS = [  # -0.5 (C-3, then C-5 by id), then -0.125; C-6 at exactly 0 is not negative; 2/3 -> 0.667
    ["C-3", "echo\\_cascade", "medium", "lme", "1", "2", "0.667", "-0.500"],
    ["C-5", "fact", "medium", "hhm", "1", "0", "0.250", "-0.500"],
    ["C-4", "x\\_y", "low", "mel", "1", "1", "0.500", "-0.125"],
]


def page(negative_rows: list[list[str]], suspects: Any = SUSPECTS, more_suspects: list[str] = (),
         more_negative: list[str] = ()) -> list[Any]:  # fmt: skip
    return [
        "## Case-level analysis: set\\_a.jsonl (sha256 0123456789ab, 5 cases of 6, 3 detectors)",
        "",
        DETECTORS,
        "",
        "- difficulty: the share of detectors right; mean 0.400; every detector right on 1 case(s), every one wrong "
        "on 0.",
        "- discrimination: the point-biserial correlation of right with macro_f1; undefined (n/a) on 1 case(s), "
        "negative on 3.",
        "- errors: 3 errored prediction(s) on 2 case(s); an error counts as wrong.",
        "",
        "### Suspect labels: 2 case(s)",
        "",
        "A suspect: every strongest detector predicts the same wrong risk (here the 2 marked strongest). Most suspect "
        "first: more detectors agreeing, then a prediction farther from the label.",
        "",
        suspects,
        *more_suspects,
        "",
        "### Negative discrimination: 3 case(s), most negative first",
        "",
        "The letters of `predicted` follow the detectors in the order given: b\\*, a, c (e: an errored prediction).",
        "",
        (NEGATIVE_HEADER, negative_rows),
        *more_negative,
    ]


def test_the_whole_page_read_back() -> None:
    assert DEFAULT_TOP == 20
    assert blocks(to_markdown(document())) == page(NEGATIVE_ROWS)


def test_top_cuts_each_table_and_says_how_many_more() -> None:
    # top 2: both suspects shown (2 is not more than 2), 3 - 2 = 1 more negative case
    more = "... and 1 more (--top, or --format json for every case)"
    assert blocks(to_markdown(document(), top=2)) == page(NEGATIVE_ROWS[:2], more_negative=["", more])
    # top 1: 2 - 1 = 1 more suspect, 3 - 1 = 2 more negative cases
    got = blocks(to_markdown(document(), top=1))
    assert got == page(
        NEGATIVE_ROWS[:1],
        suspects=(SUSPECTS[0], SUSPECTS[1][:1]),
        more_suspects=["", more],
        more_negative=["", "... and 2 more (--top, or --format json for every case)"],
    )
    assert blocks(to_markdown(document(), top=3)) == page(NEGATIVE_ROWS)  # 3 of 3: nothing more


def test_no_suspect_and_no_negative_case_say_none_and_all_cases_drop_the_of() -> None:
    doc = document()
    doc["suspects"] = []
    doc["cases"] = [case("C-1", 0.0), case("C-2", None)]
    doc["summary"] |= {"cases": 6, "suspects": 0, "negative_discrimination": 0}
    lines = to_markdown(doc).split("\n")
    assert lines[0] == "## Case-level analysis: set\\_a.jsonl (sha256 0123456789ab, 6 cases, 3 detectors)"
    assert lines.count("(none)") == 2
    assert (
        "### Suspect labels: 0 case(s)" in lines
        and "### Negative discrimination: 0 case(s), most negative first" in lines
    )
    assert lines[-1] == "(none)" and lines[lines.index("### Suspect labels: 0 case(s)") + 4] == "(none)"


def test_the_row_builders_alone() -> None:
    doc = document()
    assert detector_rows(doc) == DETECTORS[1]
    assert suspect_rows(doc, 1) == SUSPECTS[1][:1] and suspect_rows(doc, 0) == []
    assert case_rows(least_discriminating(doc, 20)) == NEGATIVE_ROWS
    assert [c["id"] for c in least_discriminating(doc, 2)] == ["C-3", "C-5"]
    # a discrimination just below zero counts; exactly zero and undefined do not
    doc["cases"] = [case("Z", 0.0), case("N", None), case("T", -1e-9)]
    assert [c["id"] for c in least_discriminating(doc, 5)] == ["T"]


def test_json_is_the_document_indented() -> None:
    doc = document()
    text = to_json(doc)
    assert json.loads(text) == doc
    assert text.startswith('{\n  "dataset": {\n    "name": "set_a.jsonl",')
