"""Building the real-data benchmark from public model answers and multi-agent debates (``fcb build-dataset``).

Sources are read from paths the user gives; nothing from them is stored in the repository. The modules, in the
order `build` runs them: ``sourcefile`` (the bounded, typed reading of a source file), one reader and case builder
a source (``gsm8k``, ``truthfulqa`` with ``claims``, ``dylan``, ``mmlu_pro``, ``zeroeval``), ``grading`` (final
values compared by math-verify), ``panels`` (the 60% rule over a panel), ``cases`` (a case from answers),
``splits`` (source items, question families, splits), ``sampling`` (balance by risk), ``wording`` (our notes and
echoes), ``models`` (model names and families), ``card`` (the datasheet) and ``build`` (the stages in order).
"""

from __future__ import annotations

import importlib

EXTRA_MODULES = ("math_verify", "json_repair")  # what the datasets extra brings (pyproject.toml)


def import_extra() -> None:
    """Import the datasets extra's modules now, before any work: the grading imports them late, in its worker
    processes, where a missing one would surface only as a failed source. Raises `ModuleNotFoundError`."""
    for name in EXTRA_MODULES:
        importlib.import_module(name)
