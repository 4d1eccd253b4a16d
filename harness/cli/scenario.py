"""``fcb scenario validate|analyze|score``: registered here; the arguments and the actions are those of
`harness.scenario.commands`, which also runs on its own (``python -m harness.scenario.commands``)."""

from __future__ import annotations

import argparse

from harness.scenario.commands import add_scenario_parser  # argparse only; the work is imported on use


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_scenario_parser(subparsers)
