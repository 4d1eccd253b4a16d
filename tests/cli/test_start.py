"""``fcb`` starts light: the command line imports none of the heavy libraries until a command needs them, and a run
none of them before its first request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from casegen import write_cases
from localdetector import serving


def test_cli_start_does_not_import_heavy_libraries() -> None:
    heavy = "('numpy', 'pandas', 'sklearn', 'aiohttp')"
    code = f"import sys, harness.cli; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# the compiled parts each library loads on import: a process has imported the library once its file is mapped
COMPILED = {
    "numpy": "_multiarray_umath",
    "pandas": "pandas/_libs",
    "scikit-learn": "sklearn/",
    "scipy": "scipy/",
    "pydantic": "_pydantic_core",
}


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads a process's mapped files from /proc")
def test_a_run_sends_its_first_request_before_it_imports_numpy_pandas_scikit_learn_scipy_or_pydantic(
    tmp_path: Path,
) -> None:
    """What a run needs before its first request (read and check the cases, open the detector, send) uses none of
    them: the figures and the reports import them once the answers are in. Seen from the detector's side: when the
    first request arrives, the client process has mapped aiohttp's compiled parts (the check sees imports) and none
    of theirs."""
    client: list[int] = []
    seen: dict[str, bool] = {}

    def look() -> None:  # which of them the client has mapped, as its first request arrives
        maps = Path(f"/proc/{client[0]}/maps").read_text()
        seen.update({name: part in maps for name, part in {**COMPILED, "aiohttp": "aiohttp/"}.items()})

    with serving(on_first=look) as detector:
        cases = write_cases(tmp_path / "cases.jsonl", 3)
        command = [sys.executable, "-m", "harness", "eval", str(cases), "-d", detector.url, "-q", "--out",
                   str(tmp_path / "r")]  # fmt: skip
        with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as process:
            client.append(process.pid)
            _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    assert seen == {**{name: False for name in COMPILED}, "aiohttp": True}
