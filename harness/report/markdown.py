"""Values from run folders (detector names, data set names, categories, case ids, a detector's messages) made inert
in Markdown: Markdown meant for a pull-request comment must show them as written, never render them."""

from __future__ import annotations

import re
from typing import Any

from harness.schema_messages import printable

# the punctuation that can start Markdown or HTML syntax mid-line: HTML tags and entities, links and images,
# emphasis, code spans, table cells, mathematics, strike-through, autolinks (``http:``) and emoji (``:x:``)
_SYNTAX = re.compile(r"([\\`*_{}\[\]()#+!|<>$~&:])")


def md_text(value: Any) -> str:
    """``value`` as Markdown text that renders to itself on one line: its syntax characters are backslash-escaped
    (CommonMark escapes any ASCII punctuation), so ``<img ...>``, links, emphasis, code spans, table pipes and
    ``$...$`` mathematics stay text; control and invisible characters are shown as escapes (``\\x1b``)."""
    return _SYNTAX.sub(r"\\\1", printable(str(value), escape_backslash=False))
