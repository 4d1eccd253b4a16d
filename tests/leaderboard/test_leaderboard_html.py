"""The HTML leaderboard opened in headless Chromium: it renders, runs no failing script, loads its images offline,
and sorts on a header click. A screenshot is saved to results/test-artifacts/ for a person to look at."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, run_cli
from playwright.sync_api import sync_playwright
from runkit import ids, make_run

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def test_html_leaderboard_renders_in_chromium(tmp_path: Path) -> None:
    assert Path(CHROMIUM).exists(), "Chromium is needed: `make browser` installs Debian's chromium"
    cases = write_cases(tmp_path / "cases.jsonl", 120)
    results = tmp_path / "results"
    make_run(cases, results, ids(1, 100), "strong")
    make_run(cases, results, ids(1, 40), "weak")
    page_path = tmp_path / "leaderboard.html"
    assert run_cli("leaderboard", str(results), "--format", "html", "--out", str(page_path)).returncode == 0
    html = page_path.read_text()
    assert "http://" not in html and "https://" not in html  # nothing to fetch at view time

    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1300, "height": 1600})
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("request", lambda req: requests.append(req.url))
        page.goto(page_path.as_uri())
        page.wait_for_load_state("load")
        images = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.complete && i.naturalWidth > 0)")
        names = "table.sortable tbody tr td:nth-child(2)"
        detectors = page.eval_on_selector_all(names, "c => c.map(x => x.textContent)")
        page.click("table.sortable th:nth-child(4)")  # accuracy, ascending
        sorted_once = page.eval_on_selector_all(names, "c => c.map(x => x.textContent)")
        page.click("table.sortable th:nth-child(4)")  # and descending
        sorted_twice = page.eval_on_selector_all(names, "c => c.map(x => x.textContent)")
        shot = ROOT / "results" / "test-artifacts" / "leaderboard.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert errors == []
    assert all(u.startswith(("file:", "data:")) for u in requests)
    assert images and all(images) and len(images) == 4  # a heatmap and category bars per detector
    assert detectors == ["strong", "weak"]  # ranked order
    assert sorted_once == ["weak", "strong"] and sorted_twice == ["strong", "weak"]
    assert shot.stat().st_size > 10_000
