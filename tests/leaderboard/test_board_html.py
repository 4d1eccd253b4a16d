"""``fcb board`` end to end: four real runs by the real CLI (three built-in detectors and a file detector that fails
on three-answer cases) on the embedded set's 240 cases with origin tags added, the board written by the real CLI,
opened in headless Chromium (as report.html's tests). The heatmap's numbers, each filter's rows and a case's replies
are checked against what this file works out from the journals and the cases file with ``json`` alone. The board
is built once for the module. A screenshot goes to results/test-artifacts/board.png for a person to look at."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import EMBEDDED, ROOT, once, read_jsonl, run_cli
from playwright.sync_api import Page, sync_playwright
from sklearn.metrics import f1_score

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
RISKS = ["low", "medium", "high"]
DETECTORS = {"heuristic": "builtin:heuristic", "agreement": "builtin:agreement", "always-low": "builtin:always-low"}
BY_COUNT = """
def assess(request):
    n = len(request["answers"])
    if n == 3:
        raise RuntimeError(f"by-count refuses {n} answers")
    return {"false_consensus_risk": "high" if n >= 5 else "low", "risk_score": 0.9 if n >= 5 else 0.1}
"""


ORIGINS = ("origin_natural", "origin_assembled", "origin_constructed")


def _build(tmp: Path) -> None:
    cases = tmp / "cases.jsonl"
    with cases.open("w") as f:  # an origin tag on each case (never sent to a detector): the natural ranking shows
        for i, case in enumerate(read_jsonl(EMBEDDED)):
            f.write(json.dumps({**case, "tags": [*case.get("tags", []), ORIGINS[i % 3]]}) + "\n")
    (tmp / "by_count.py").write_text(BY_COUNT)
    specs = {**DETECTORS, "by-count": f"{tmp / 'by_count.py'}:assess"}
    for name, spec in specs.items():
        proc = run_cli("eval", str(cases), "-d", spec, "--name", name, "--out", str(tmp / "runs" / name), "-q",
                       "--bootstrap", "50", "--no-preflight", "--max-consecutive-errors", "0")  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    proc = run_cli("board", str(tmp / "runs"), "-o", str(tmp / "out" / "board.html"), "--bootstrap", "100")
    assert proc.returncode == 0, proc.stderr
    assert "wrote" in proc.stderr and (tmp / "out" / "board.html").is_file()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return once(tmp_path_factory, "board-html", _build)


@pytest.fixture(scope="module")
def expected(built: Path) -> dict:
    """Per detector each case's risk (or "error"), from its journal; the cases; the sets each filter should show."""
    cases = {c["id"]: c for c in read_jsonl(built / "cases.jsonl")}
    preds = {}
    for name in [*DETECTORS, "by-count"]:
        rows = read_jsonl(built / "runs" / name / "predictions.jsonl")
        preds[name] = {r["id"]: r["risk"] or "error" for r in rows}
    ids = sorted(cases)
    truth = [cases[i]["expected_risk"] for i in ids]
    f1 = {n: f1_score(truth, [p[i] for i in ids], labels=RISKS, average="macro", zero_division=0)
          for n, p in preds.items()}  # fmt: skip
    right = {n: {i for i in ids if p[i] == cases[i]["expected_risk"]} for n, p in preds.items()}
    best = max(f1, key=f1.get)
    return {
        "cases": cases,
        "preds": preds,
        "right": right,
        "best": best,
        "all_wrong": set(ids) - set().union(*right.values()),
        "only_best": right[best] - set().union(*(r for n, r in right.items() if n != best)),
    }


@pytest.fixture(scope="module")
def page(built: Path):
    assert Path(CHROMIUM).exists(), "Chromium is needed: `make browser` installs Debian's chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 1100})
        pg.errors, pg.requests = [], []  # type: ignore[attr-defined]
        pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))  # type: ignore[attr-defined]
        pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)  # type: ignore[attr-defined]
        pg.on("request", lambda req: pg.requests.append(req.url))  # type: ignore[attr-defined]
        pg.goto((built / "out" / "board.html").as_uri())
        pg.wait_for_selector("body[data-ready='1']", timeout=20_000)
        yield pg
        browser.close()


def _listed(page: Page) -> tuple[int, list[str]]:
    """(the matching count the table states, the ids of the rows it drew)."""
    count = int(re.match(r"(\d+) of", page.text_content("#count") or "").group(1))  # type: ignore[union-attr]
    return count, page.eval_on_selector_all("#cases tbody tr td:first-child", "c => c.map(x => x.textContent)")


def _run_value(page: Page, name: str) -> str:
    options = page.eval_on_selector_all("#f-a option", "o => o.map(x => [x.value, x.textContent])")
    return next(value for value, text in options if text == name)


def _reset(page: Page) -> None:
    page.click("#f-reset")


def test_the_heatmap_shows_each_detectors_accuracy_per_category(page: Page, expected: dict) -> None:
    cases, preds = expected["cases"], expected["preds"]
    cells = page.eval_on_selector_all(
        "section.ds:not([hidden]) table.board-heatmap tbody tr",
        "rows => rows.map(r => [r.cells[0].textContent, Array.from(r.cells).slice(1).map(c => c.textContent)])",
    )
    cats = page.eval_on_selector_all(
        "section.ds:not([hidden]) table.board-heatmap thead th", "h => h.slice(1).map(x => x.textContent)"
    )
    assert sorted(cats) == cats == sorted({c["category"] for c in cases.values()})
    assert sorted(name for name, _ in cells) == sorted(preds)
    for name, shown in cells:
        want = []
        for cat in cats:
            in_cat = [i for i, c in cases.items() if c["category"] == cat]
            right = sum(preds[name][i] == cases[i]["expected_risk"] for i in in_cat)
            want.append(f"{right / len(in_cat):.3f}")
        assert shown == want, name
    natural = page.eval_on_selector_all("section.ds:not([hidden]) table.natural tbody tr", "r => r.length")
    assert natural == len(preds)  # the ranking on the natural cases, one row a detector
    caption = page.text_content("section.ds:not([hidden]) table.natural caption") or ""
    assert f"{sum('origin_natural' in c['tags'] for c in cases.values())} cases" in caption


def test_each_filter_lists_the_cases_it_should(page: Page, expected: dict) -> None:
    cases, preds = expected["cases"], expected["preds"]
    _reset(page)
    assert _listed(page)[0] == len(cases)
    cat = sorted({c["category"] for c in cases.values()})[2]
    page.select_option("#f-cat", label=cat)
    count, shown = _listed(page)
    assert count == len(shown) == sum(c["category"] == cat for c in cases.values())
    assert {cases[i]["category"] for i in shown} == {cat}
    _reset(page)
    for value, wanted in (("allwrong", expected["all_wrong"]), ("bestonly", expected["only_best"])):
        page.select_option("#f-set", value)
        count, shown = _listed(page)
        assert wanted and count == len(wanted) and set(shown) == wanted, value
    _reset(page)
    page.select_option("#f-a", _run_value(page, "heuristic"))
    page.select_option("#f-b", _run_value(page, "by-count"))
    wanted = {i for i in cases if preds["heuristic"][i] != preds["by-count"][i]}
    count, shown = _listed(page)
    assert 0 < count < len(cases) and count == len(wanted) and set(shown) == wanted
    page.select_option("#f-set", "allwrong")  # the filters combine
    assert set(_listed(page)[1]) == wanted & expected["all_wrong"]
    _reset(page)


def test_a_case_opens_with_its_text_and_every_detectors_reply(page: Page, expected: dict, built: Path) -> None:
    cases, preds = expected["cases"], expected["preds"]
    errored = sorted(i for i, p in preds["by-count"].items() if p == "error")
    assert errored
    _reset(page)
    page.fill("#f-text", errored[0])
    page.wait_for_function("() => document.querySelector('#count').textContent.startsWith('1 of')")
    page.click("#cases tbody tr >> nth=0")
    detail = page.text_content("#detail") or ""
    case = cases[errored[0]]
    assert case["question"] in detail
    assert all(a["agent_id"] in detail and a["text"] in detail for a in case["answers"])
    replies = page.eval_on_selector_all("#detail .reply", "r => r.map(x => x.textContent)")
    assert len(replies) == len(preds)
    for name, p in preds.items():
        (mine,) = [r for r in replies if r.startswith(name)]
        assert f"predicted {p[errored[0]]}" in mine
    (failed,) = [r for r in replies if r.startswith("by-count")]
    assert "detector_exception" in failed and "by-count refuses 3 answers" in failed
    links = page.eval_on_selector_all("#detail .reply a", "a => a.map(x => x.href)")
    assert sorted(links) == sorted((built / "runs" / n / "report.html").as_uri() for n in preds)
    page.click("#detail .close")
    artifacts = ROOT / "results" / "test-artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(artifacts / "board.png"), full_page=False)
    assert page.errors == []  # type: ignore[attr-defined]
    assert page.requests == [(built / "out" / "board.html").as_uri()]  # type: ignore[attr-defined]


def test_exit_codes(built: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = run_cli("board", str(tmp_path / "empty"))
    assert proc.returncode == 2 and "no run folders" in proc.stderr and str(tmp_path / "empty") in proc.stderr
    proc = run_cli("board", str(tmp_path / "absent"))
    assert proc.returncode == 2 and "no such folder" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("board", str(built / "runs"), "--bootstrap", "-1")
    assert proc.returncode == 2 and "--bootstrap" in proc.stderr
    out = tmp_path / "again.html"
    proc = run_cli("board", str(built / "runs" / "heuristic"), str(built / "runs" / "agreement"), "-o", str(out),
                   "--bootstrap", "0")  # fmt: skip
    assert proc.returncode == 0 and out.is_file(), proc.stderr
    assert "2 runs" in proc.stderr and "case analysis" in proc.stderr  # two detectors: no analysis, and it says so
    leaderboard = out.read_text().split('class="num leaderboard"')[1].split("</table>")[0]
    rows = re.findall(r"<tr><td>(\d+=?)</td><td>([a-z-]+)</td>", leaderboard)
    assert sorted(name for _, name in rows) == ["agreement", "heuristic"]
