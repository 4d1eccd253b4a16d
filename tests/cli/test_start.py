"""``fcb`` starts light: the command line imports none of the heavy libraries until a command needs them, and a run
none of them before its first request."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
from pathlib import Path
from typing import ClassVar

import pytest
from casegen import write_cases


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


class _FirstRequest(http.server.BaseHTTPRequestHandler):
    """A detector that answers low, and on its first request notes which of `COMPILED` the client has mapped."""

    seen: ClassVar[dict[str, bool]] = {}
    client_pid = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        if not _FirstRequest.seen:
            maps = Path(f"/proc/{_FirstRequest.client_pid}/maps").read_text()
            _FirstRequest.seen = {name: part in maps for name, part in {**COMPILED, "aiohttp": "aiohttp/"}.items()}
        body = b'{"false_consensus_risk": "low", "risk_score": 0.1}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads a process's mapped files from /proc")
def test_a_run_sends_its_first_request_before_it_imports_numpy_pandas_scikit_learn_scipy_or_pydantic(
    tmp_path: Path,
) -> None:
    """What a run needs before its first request (read and check the cases, open the detector, send) uses none of
    them: the figures and the reports import them once the answers are in. Seen from the detector's side: when the
    first request arrives, the client process has mapped aiohttp's compiled parts (the check sees imports) and none
    of theirs."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FirstRequest)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/consensus"
        cases = write_cases(tmp_path / "cases.jsonl", 3)
        command = [sys.executable, "-m", "harness", "eval", str(cases), "-d", url, "-q", "--out", str(tmp_path / "r")]
        with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as process:
            _FirstRequest.client_pid = process.pid
            _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    finally:
        server.shutdown()
        server.server_close()
    assert _FirstRequest.seen == {**{name: False for name in COMPILED}, "aiohttp": True}
