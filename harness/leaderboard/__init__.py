"""Finished runs read back, ranked into leaderboards, compared, and rendered.

Modules:
- ``runs``: finished runs read back from their folders (``metrics.json`` and ``predictions.jsonl``), aligned by case
- ``rank``: leaderboards: one board per data set, medians over repeated runs, ranks the data supports
- ``render``: leaderboards as Markdown, CSV, JSON or one HTML page
- ``compare``: two runs compared case by case: paired-bootstrap deltas, per-category deltas, flipped cases
- ``compare_render``: a comparison as text, Markdown or JSON
- ``case_analysis``, ``case_analysis_render``: case-level analysis over several runs (difficulty, discrimination,
  suspect labels: ``fcb cases``)
- ``export``, ``export_mlflow``: a run as a Parquet file joined with its cases; a run logged to MLflow
"""
