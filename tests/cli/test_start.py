"""``fcb`` starts light: the command line imports none of the heavy libraries until a command needs them."""

from __future__ import annotations

import subprocess
import sys


def test_cli_start_does_not_import_heavy_libraries() -> None:
    heavy = "('numpy', 'pandas', 'sklearn', 'aiohttp')"
    code = f"import sys, harness.cli; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
