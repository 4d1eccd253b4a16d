"""The run folder: the journal (predictions.jsonl), the manifest (run.json), the lock, and reading them back.

Modules:
- ``names``: the names of the files in a run folder
- ``folder``: naming a new run folder, refusing one that already holds a run
- ``journal``: ``predictions.jsonl``, one record per finished case: written, checked and read back
- ``manifest``: ``run.json``: what identifies a run, its settings and its sessions; the identity a resume must match
- ``scope``: ``scope.json``: the (id, content hash) of every case a run counts
- ``lock``: the run lock: two processes never run one folder at once
- ``read``, ``checked``: the run folder's files read back, each checked against its document's definition
- ``cases``: a run's cases read back from the cases file it read, while that is still the same file
- ``baseline``: a baseline file (``fcb baseline save``)
"""
