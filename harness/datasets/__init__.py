"""Benchmarks: the embedded set, the synthetic generator, the real-data build, the shortcut audit and stats.

Modules and packages:
- ``embedded/``: the embedded false-consensus benchmark, generated from fact tables and templates
- ``synthetic``: a seeded generator of valid synthetic cases, for tests and benchmarks
- ``realdata/``: the real-data benchmark built from public model answers (``fcb build-dataset``)
- ``audit/``: the shortcut audit (``fcb audit-dataset``); ``audit_report``: its text and Markdown rendering
- ``stats``: counts that show a data set's balance (``fcb stats``)
"""
