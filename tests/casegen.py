"""Synthetic cases for tests: the package's seeded generator."""

from fcb_datasets.synthetic import make_case, write_cases

__all__ = ["make_case", "write_cases"]
