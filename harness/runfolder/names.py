"""The names of the files in a run folder, in one place."""

PREDICTIONS = "predictions.jsonl"  # the journal, one line per finished case: the run's source of truth
MANIFEST = "run.json"  # what identifies the run, its settings and sessions
SCOPE = "scope.json"  # the (id, content hash) of every case the run counts
METRICS = "metrics.json"
REPORT = "report.md"
REPORT_HTML = "report.html"
LOCK = ".lock"
