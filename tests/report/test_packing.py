"""harness.report.packing: what a page carries for its script, unpacked here as the browser does (gzip, then JSON)."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator
from typing import Any

import orjson

from harness.report.packing import pack, pack_explorer


def unpacked(text: str) -> bytes:
    return gzip.decompress(base64.b64decode(text, validate=True))


ROWS = [
    {
        "id": "FCB-0001",
        "p": [{"r": "low", "s": 0.25}],
        "case": orjson.Fragment(b'{ "id" : "FCB-0001", "x": "\\u00e9"}'),
    },
    {"id": "FCB-0002", "p": [None], "cat": "éclair </script>"},
    {"id": "FCB-0003", "p": [{"r": None, "e": "timeout"}], "n": {1: "a non-string key"}},
]


def test_the_explorer_packed_row_by_row_is_the_whole_document_packed_at_once() -> None:
    whole = {"runs": ["det <1>"], "cases": ROWS, "note": "a note"}
    assert unpacked(pack_explorer(["det <1>"], iter(ROWS), "a note")) == unpacked(pack(whole))
    # the bytes as JSON: the row's case is the line as read, spaces and escapes kept
    text = unpacked(pack_explorer(["det <1>"], ROWS, "a note"))
    assert text.startswith(b'{"runs":["det <1>"],"cases":[{"id":"FCB-0001"') and text.endswith(b'],"note":"a note"}')
    assert b'"case":{ "id" : "FCB-0001", "x": "\\u00e9"}' in text
    assert json.loads(text)["cases"][2]["n"] == {"1": "a non-string key"}


def test_no_rows_and_one_row() -> None:
    for rows in ([], ROWS[:1]):
        assert json.loads(unpacked(pack_explorer([], rows, ""))) == json.loads(
            orjson.dumps({"runs": [], "cases": rows, "note": ""})
        )


def test_each_row_is_packed_before_the_next_is_made() -> None:
    made: list[int] = []

    class Made:  # serialised through ``default=repr``: says how many rows had been made when it was packed
        def __repr__(self) -> str:
            return str(len(made))

    def rows() -> Iterator[dict[str, Any]]:
        for i in range(3):
            made.append(i)
            yield {"id": i, "made": Made()}

    assert [r["made"] for r in json.loads(unpacked(pack_explorer([], rows(), "")))["cases"]] == ["1", "2", "3"]
