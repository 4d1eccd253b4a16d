"""Synthetic cases for tests: the package's seeded generator."""

from harness.datasets.synthetic import CATEGORIES, make_case, write_cases

__all__ = ["CATEGORIES", "make_case", "write_cases"]
