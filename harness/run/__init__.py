"""One evaluation: the runner, where a Python detector runs (engines), the response cache, and shard merging."""
