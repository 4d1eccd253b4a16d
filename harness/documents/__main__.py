"""``python -m harness.documents``: rewrite the shipped schemas (``harness/data/NAME.schema.json``) from the
definitions."""

from pathlib import Path

from harness.documents import SCHEMAS, schema_file_text

for doc_name in SCHEMAS:
    target = Path(__file__).parent.parent / "data" / f"{doc_name}.schema.json"
    target.write_text(schema_file_text(doc_name), encoding="utf-8")
    print(target)
