"""Reading and checking cases files, and the requests a detector sees.

Modules:
- ``lines``: the bounded line reader (a line over `MAX_LINE_BYTES` is counted and skipped), a file's sha256
- ``validate``: the check of one line: JSON, structure, the case schema, the label scheme
- ``labels``: the label scheme's cross-field rules and the label record a case leaves for metrics
- ``reader``: `scan`, the streaming read and validation of a whole cases file
- ``request``: a case turned into the request a detector sees, with no label in it
"""
