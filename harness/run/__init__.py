"""One evaluation: its settings and choice of cases, the runner, what it writes into its folder, the Python API,
where a Python detector runs (engines), the response cache, and shard merging."""
