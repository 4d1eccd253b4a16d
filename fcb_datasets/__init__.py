"""Benchmarks, apart from the evaluation package `harness`: the embedded set's generator, the synthetic cases, the
real-data build and the shortcut audit. Its extra (`pip install 'fcb-harness[datasets]'`: math-verify, json-repair)
is only for the build; `fcb build-dataset` and `fcb audit-dataset` (in `harness.cli`) import it when they run.

Modules and packages:
- ``embedded/``: the embedded false-consensus benchmark, generated from fact tables and templates
- ``synthetic``: a seeded generator of valid synthetic cases, for tests and benchmarks
- ``realdata/``: the real-data benchmark built from public model answers (``fcb build-dataset``)
- ``audit/``: the shortcut audit (``fcb audit-dataset``); ``audit_report``: its text and Markdown rendering
"""
