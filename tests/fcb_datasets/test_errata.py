"""The errata: a source gold named wrong is replaced for every source that carries the item, and only while the source
still gives the gold the entry names."""

from __future__ import annotations

from fcb_datasets.realdata import errata
from fcb_datasets.realdata.grading import Gold


def test_every_entry_names_the_gold_given_the_right_one_and_why() -> None:
    entries = errata.entries()
    assert entries, "errata.toml holds the reviewed entries"
    for item, entry in entries.items():
        assert item.split(":")[0] in {"math", "gsm8k", "mmlu-pro", "truthfulqa", "numersense"}
        assert entry["given"] != entry["gold"] and len(entry["reason"]) > 40


def test_the_math_series_gold_is_minus_three_and_an_answer_of_minus_three_is_right() -> None:
    """A 15-term series from 7 summing to -210: 15/2 (14 + 14d) = -210 gives d = -3, by hand."""
    item = "math:fd5c196178e05740"
    gold = errata.gold(item, "3")
    assert gold == "-3"
    assert Gold(gold).grade(("$-3$", "answer-is"))[1] and not Gold(gold).grade(("3", "answer-is"))[1]


def test_a_gold_the_entry_does_not_name_and_an_item_without_entry_stay_as_given() -> None:
    assert errata.gold("math:fd5c196178e05740", "-3") == "-3"  # fixed upstream: read as it is
    assert errata.gold("math:0000000000000000", "3") == "3"
