"""report.html opened in headless Chromium (Debian's, as the leaderboard test): it runs no failing script and makes
no request; the reliability diagram shows the bins, counts, shares of high and ECE worked out from the cases;
filtering to a category and clicking a confusion-matrix cell list exactly the cases they should (counts worked out
here from the cases file and the test detector's rule, not from the harness); a case opens with its answers, and an
errored one with its traceback. ``fcb compare --format html`` shows flipped cases with both predictions.
Screenshots go to results/test-artifacts/ for a person to look at."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import EMBEDDED, ROOT, read_jsonl, run_cli
from playwright.sync_api import Page, sync_playwright
from runkit import ids, make_run

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
ARTIFACTS = ROOT / "results" / "test-artifacts"

# The test detector: high for four or more answers, low for two, and it raises on three (a traceback to show).
DETECTOR = """
def assess(request):
    n = len(request["answers"])
    if n == 3:
        raise RuntimeError(f"this test detector refuses {n} answers")
    return {"false_consensus_risk": "high" if n >= 4 else "low", "risk_score": 0.9 if n >= 4 else 0.1,
            "reason": f"saw {n} answers"}
"""


def rule(case: dict) -> str:
    n = len(case["answers"])
    return "error" if n == 3 else ("high" if n >= 4 else "low")


@pytest.fixture
def browser_page():
    assert Path(CHROMIUM).exists(), "Chromium is needed: `make browser` installs Debian's chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.errors, page.requests = [], []  # type: ignore[attr-defined]
        page.on("pageerror", lambda exc: page.errors.append(str(exc)))  # type: ignore[attr-defined]
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)  # type: ignore[attr-defined]
        page.on("request", lambda req: page.requests.append(req.url))  # type: ignore[attr-defined]
        yield page
        browser.close()


def _open(page: Page, path: Path) -> None:
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)


def _listed(page: Page) -> tuple[int, list[str]]:
    """(the matching count the explorer states, the ids of the rows it drew)."""
    count = int(re.match(r"(\d+) of", page.text_content("#count") or "").group(1))  # type: ignore[union-attr]
    return count, page.eval_on_selector_all("#cases tbody tr td:first-child", "c => c.map(x => x.textContent)")


def test_report_html_filters_and_opens_cases(tmp_path: Path, browser_page: Page) -> None:
    detector = tmp_path / "by_count.py"
    detector.write_text(DETECTOR)
    run = tmp_path / "run"
    proc = run_cli(
        "eval", str(EMBEDDED), "-d", f"{detector}:assess", "--out", str(run), "-q", "--no-preflight",
        "--max-consecutive-errors", "0", "--bootstrap", "100",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    page_path = run / "report.html"
    html = page_path.read_text()
    assert "http://" not in html and "https://" not in html and "<script src" not in html

    cases = read_jsonl(EMBEDDED)
    by_id = {c["id"]: c for c in cases}
    page = browser_page
    _open(page, page_path)
    assert _listed(page)[0] == len(cases)
    _check_reliability_diagram(page, cases)

    category = "echo_cascade"
    page.select_option("#f-cat", category)
    count, shown = _listed(page)
    wanted = {c["id"] for c in cases if c["category"] == category}
    assert count == len(wanted) and set(shown) == wanted

    cells = Counter((c["expected_risk"], rule(c)) for c in cases)
    for expected, predicted in [
        ("high", "low"),
        ("high", "high"),
        max((k for k in cells if k[1] == "error"), key=cells.get),
    ]:
        page.click(f"td.cell[data-exp='{expected}'][data-pred='{predicted}']")
        count, shown = _listed(page)
        wanted = {c["id"] for c in cases if c["expected_risk"] == expected and rule(c) == predicted}
        assert wanted and count == len(wanted) and set(shown) == wanted, (expected, predicted)
        assert page.input_value("#f-cat") == ""  # a cell click starts from a clean filter

    # the last cell is an error cell: its case opens with every answer and the detector's traceback
    first = shown[0]
    page.click("#cases tbody tr >> nth=0")
    detail = page.text_content("#detail") or ""
    case = by_id[first]
    assert case["question"] in detail and case["rationale"] in detail
    assert all(a["agent_id"] in detail and a["text"] in detail for a in case["answers"])
    assert "detector_exception" in detail and "RuntimeError: this test detector refuses 3 answers" in detail
    assert "Traceback" in detail

    page.click("#detail .close")
    assert page.is_hidden("#detail")
    page.click("#f-reset")
    page.click("#cases th[data-col='0']")
    page.click("#cases th[data-col='0']")  # sorted by id, descending
    assert _listed(page)[1][:2] == sorted(by_id, reverse=True)[:2]
    page.fill("#f-text", "saw 2 answers")  # free text reaches the detector's reply
    two = sum(len(c["answers"]) == 2 for c in cases)
    page.wait_for_function("n => document.querySelector('#count').textContent.startsWith(n + ' ')", arg=two)
    page.click("#cases tbody tr >> nth=0")
    assert "saw 2 answers" in (page.text_content("#detail") or "")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report.png"
    page.screenshot(path=str(shot), full_page=False)
    assert page.errors == []  # type: ignore[attr-defined]
    assert page.requests == [page_path.as_uri()]  # type: ignore[attr-defined]
    assert shot.stat().st_size > 10_000


def _check_reliability_diagram(page: Page, cases: list[dict]) -> None:
    """The detector scores 0.1 (two answers) and 0.9 (four or more), and none on three (an error): two bins of 15
    hold cases, (0.0667, 0.1333] and (0.8667, 0.9333]. Counts, shares and the ECE worked out from the cases file."""
    low = [c for c in cases if len(c["answers"]) == 2]
    high = [c for c in cases if len(c["answers"]) >= 4]
    n = len(low) + len(high)
    share = [sum(c["expected_risk"] == "high" for c in group) / len(group) for group in (low, high)]
    ece = len(low) / n * abs(share[0] - 0.1) + len(high) / n * abs(share[1] - 0.9)
    assert page.is_visible("svg.reliability")
    bars = page.eval_on_selector_all("svg.reliability rect.bin", "r => r.map(x => x.dataset.count)")
    assert bars == [str(len(low)), str(len(high))]
    dots = page.eval_on_selector_all("svg.reliability circle", "c => c.map(x => x.getBoundingClientRect().y)")
    assert len(dots) == 2 and (dots[0] > dots[1]) == (share[0] < share[1])  # a higher share is drawn higher
    note = page.text_content("#calibration-note") or ""
    assert f"ECE {ece:.3f} [" in note and "over 15 equal-width bins" in note and f"on the {n} cases of" in note
    rows = page.eval_on_selector_all(
        "table.calibration tbody tr", "r => r.map(x => Array.from(x.cells).map(c => c.textContent))"
    )
    assert len(rows) == 15 and [r[2] for r in rows if r[2] != "0"] == [str(len(low)), str(len(high))]
    assert [r[4] for r in rows if r[2] != "0"] == [f"{share[0]:.3f}", f"{share[1]:.3f}"]


def test_compare_html_shows_flipped_cases_with_both_predictions(tmp_path: Path, request) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 120)
    results = tmp_path / "results"
    base = make_run(cases, results, ids(1, 100), "strong")
    new = make_run(cases, results, ids(1, 40), "weak")
    out = tmp_path / "compare.html"
    proc = run_cli("compare", str(base), str(new), "--format", "html", "--out", str(out), "--bootstrap", "200")
    assert proc.returncode == 1, proc.stderr  # a regression, and still the page
    page = request.getfixturevalue("browser_page")  # after the runs: Playwright's loop would stop asyncio.run
    _open(page, out)
    count, shown = _listed(page)
    assert count == 60 and set(shown) == ids(41, 100)  # right in base, wrong in new
    page.select_option("#f-flip", "w2r")
    assert _listed(page)[0] == 0
    page.select_option("#f-flip", "")
    assert _listed(page)[0] == 120
    page.click("td.cell[data-run='1'][data-exp='high'][data-pred='low']")  # the new run's wrong high cases
    count, shown = _listed(page)
    high = {c["id"] for c in read_jsonl(cases) if c["expected_risk"] == "high"}
    assert count == len(high - ids(1, 40)) and set(shown) == high - ids(1, 40)  # ChosenRight: wrong is one up
    page.select_option("#f-flip", "flipped")
    page.click("#cases tbody tr >> nth=0")
    detail = page.text_content("#detail") or ""
    assert "base: strong" in detail and "new: weak" in detail and "(right" in detail and "(wrong" in detail
    page.screenshot(path=str(ARTIFACTS / "compare.png"), full_page=False)
    assert page.errors == [] and page.requests == [out.as_uri()]  # type: ignore[attr-defined]


def test_fcb_view_rewrites_the_page_and_prints_its_path_without_a_display(tmp_path: Path, monkeypatch) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 12)
    run = make_run(cases, tmp_path / "results", ids(1, 6), "half")
    (run / "report.html").unlink()
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    proc = run_cli("view", str(run))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(run / "report.html") and (run / "report.html").stat().st_size > 10_000
    proc = run_cli("view", str(tmp_path))
    assert proc.returncode == 2 and "metrics.json" in proc.stderr and "Traceback" not in proc.stderr


def _eval(cases: Path, run: Path) -> None:
    proc = run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(run), "-q", "--bootstrap", "20")
    assert proc.returncode == 0, proc.stderr


def _open_case(page: Page, case_id: str) -> str:
    page.keyboard.press("Escape")  # an open detail panel covers the table
    # The text filter applies 150 ms after typing and redraws the rows: a click whose row is redrawn between its
    # mouse-down and mouse-up is lost. So the rows drawn before are marked, and the click waits for the redraw.
    page.evaluate("document.querySelectorAll('#cases tbody tr').forEach(tr => { tr.dataset.stale = '1'; })")
    page.fill("#f-text", case_id)
    page.wait_for_function(
        "id => document.querySelector('#count').textContent.startsWith('1 ') && "
        "document.querySelector('#cases tbody td').textContent === id && "
        "!document.querySelector('#cases tbody tr').dataset.stale",
        arg=case_id,
    )
    page.click("#cases tbody tr >> nth=0")
    assert page.is_visible("#detail")
    return page.text_content("#detail") or ""


def test_a_real_benchmark_case_shows_its_source_data_set_and_item(tmp_path: Path, browser_page: Page) -> None:
    # every real-benchmark case showed "source [object Object]" in its detail
    cases = read_jsonl(write_cases(tmp_path / "made.jsonl", 6))
    cases[0]["source"] = {
        "dataset": "GSM8K model solutions", "license": "MIT", "citation": "Cobbe et al., 2021",
        "url": "https://github.com/openai/grade-school-math", "item": "gsm8k:0123456789abcdef",
    }  # fmt: skip
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    _eval(path, tmp_path / "run")
    _open(browser_page, tmp_path / "run" / "report.html")
    detail = _open_case(browser_page, cases[0]["id"])
    assert "source GSM8K model solutions, item gsm8k:0123456789abcdef (MIT)" in detail
    assert "source original" in _open_case(browser_page, cases[1]["id"])
    assert "[object Object]" not in detail and browser_page.errors == []  # type: ignore[attr-defined]


def test_a_cases_file_of_another_shape_since_the_run_never_breaks_the_explorer(
    tmp_path: Path, browser_page: Page
) -> None:
    # after the cases file changed shape (answers no longer a list), `fcb view` put its text in the page: the
    # explorer threw on the case and its detail panel stayed closed
    path = write_cases(tmp_path / "cases.jsonl", 6)
    run = tmp_path / "run"
    _eval(path, run)
    cases = read_jsonl(path)
    cases[0]["answers"] = "no longer a list"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    proc = run_cli("view", str(run), "--no-open")
    assert proc.returncode == 2 and "is not the cases file this run read" in proc.stderr, proc.stderr
    proc = run_cli("view", str(run), "--no-open", "--force")
    assert proc.returncode == 0 and "the page has no case text" in proc.stderr, proc.stderr
    page = browser_page
    _open(page, run / "report.html")
    assert "case text unavailable" in (page.text_content("#explorer p.bad") or "")  # said on the page, loudly
    detail = _open_case(page, cases[0]["id"])
    assert "The case text is not available" in detail and "Detector: builtin:agreement" in detail
    assert "no longer a list" not in detail and page.errors == []  # type: ignore[attr-defined]


def test_the_explorer_reads_a_case_of_any_shape_without_throwing(tmp_path: Path, browser_page: Page) -> None:
    # a case text of another shape (answers not a list, evidence a number) threw in the explorer: the free-text
    # filter broke and the detail panel stayed closed. The page is written here straight from explorer data, as no
    # run can put such text in it any more (the cases file's sha256 is checked first)
    from harness.report.html import page

    odd = {"question": ["not", "text"], "answers": "no list", "evidence": 5, "tags": "x", "source": 7}
    rows = [{"id": "FCB-0001", "cat": "c", "exp": "low", "p": [{"r": "low", "s": None, "a": 1, "l": 0.1}], "case": odd}]
    path = tmp_path / "odd.html"
    path.write_text(page("odd", [], "", {"runs": ["d"], "cases": rows, "note": ""}))
    _open(browser_page, path)
    detail = _open_case(browser_page, "FCB-0001")
    assert "Detector: d" in detail and "predicted low" in detail and "source 7" in detail
    assert browser_page.errors == []  # type: ignore[attr-defined]
