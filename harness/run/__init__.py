"""One evaluation: its settings and choice of cases, the runner, what it writes into its folder, the Python API,
where a Python detector runs (engines), the response cache, and shard merging.

Modules:
- ``settings``: `EvalSettings`, the ``--shard K/N`` text, the settings as ``run.json`` and ``metrics.json`` store them
- ``selection``: which cases a run counts: categories, tags, the shard, ``--limit``
- ``runner``: `run`: validate, strip labels, call the detector, journal, compute metrics
- ``engines``: where a Python detector runs: in-process, worker processes or Ray actors
- ``cache``: the response cache (SQLite), keyed by the detector's fingerprint and the request
- ``outputs``: what a run writes into its folder, and the identity checked when it resumes
- ``reading``: how a run reads its cases file; ``pace``: what it does for its own pace only (the collector, imports)
- ``progress``: progress on standard error; ``signals``: SIGINT and SIGTERM during a run
- ``merge``: ``fcb merge``: the shard runs of one evaluation combined into one run
- ``api``: the Python API: `evaluate`, `evaluate_async`, `load_result`
"""
