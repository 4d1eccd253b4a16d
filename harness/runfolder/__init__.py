"""The run folder: the journal (predictions.jsonl), the manifest (run.json), the lock, and reading them back."""
