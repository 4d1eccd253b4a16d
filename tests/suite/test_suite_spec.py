"""The suite file's reader (harness/suite/spec.py) held to lines counted by hand: `key_line` on small TOML texts,
the names a refusal gives a key, and every refusal of names and splits read back in full (issue 46)."""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import pytest

from harness.errors import UsageError
from harness.suite import spec
from harness.suite.spec import SuiteDataset, cases_file, key_line, load_suite, resolve

TWO = '[[detectors]]\nname = "agree"\nspec = "builtin:agreement"\n'  # lines 1-3


def refusal(tmp_path: Path, text: str) -> str:
    path = tmp_path / "suite.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as info:
        load_suite(path)
    return str(info.value).replace(str(tmp_path), "DIR")


# ---- key_line ------------------------------------------------------------------------------------------------------


def test_a_top_level_key_is_found_above_the_first_table() -> None:
    assert key_line("seed = 4\nbootstrap = 9\n", ("bootstrap",)) == 2  # no table at all: the whole text
    # the first line is a line too: x on line 1, not the [x] table of line 2
    assert key_line("x = 1\n[x]\ny = 2\n", ("x",)) == 1


def test_a_top_level_key_below_a_table_header_belongs_to_the_table() -> None:
    # "seed = 1" on line 2 is the table a's key, not the document's: not found, so line 1
    assert key_line("[[a]]\nseed = 1\n", ("seed",)) == 1
    assert key_line("  [[a]]\nseed = 1\n", ("seed",)) == 1  # an indented header starts a table too


def test_a_key_of_a_top_level_table_points_at_its_header() -> None:
    text = "seed = 1\n\n[extra]\nk = 1\n"  # [extra] on line 3
    assert key_line(text, ("extra", "k")) == 3
    assert key_line("seed = 1\n", ("extra",)) == 1  # no such header: line 1


def test_a_key_missing_from_its_table_is_not_taken_from_a_later_one() -> None:
    text = "[[a]]\ny = 1\n[[a]]\nx = 2\n"  # x only in the second a (line 4)
    assert key_line(text, ("a", 0, "x")) == 1  # absent from the first: its header, line 1
    assert key_line(text, ("a", 1, "x")) == 4
    assert key_line(text, ("a", 1)) == 3  # the table itself: its header


def test_a_table_index_past_the_headers_searches_the_whole_text() -> None:
    text = "[[a]]\ny = 1\n[[a]]\nx = 3\n"  # two headers: index 2 and 5 name none
    assert key_line(text, ("a", 2, "x")) == 4
    assert key_line(text, ("a", 5, "x")) == 4
    assert key_line(text, ("a", 2, "z")) == 1


def test_key_name_as_a_reader_names_it() -> None:
    assert spec._key_name(("detectors", 1, "timeout")) == "detectors[1].timeout"
    assert spec._key_name(("Xtra",)) == "Xtra"
    assert spec._key_name(()) == "(document)"


@pytest.mark.parametrize("kind", ["int_type", "int_from_float", "bool_parsing"])
def test_a_type_error_says_what_came(kind: str) -> None:
    error = {"type": kind, "msg": "Input should be a valid integer", "input": 4.5}
    assert spec._message(error) == "Input should be a valid integer (got float 4.5)"


def test_other_messages_lose_pydantics_prefix() -> None:
    assert spec._message({"type": "value_error", "msg": "Value error, give spec"}) == "give spec"
    assert spec._message({"type": "missing", "msg": "Field required"}) == "missing (required)"
    assert spec._message({"type": "extra_forbidden", "msg": "Extra inputs"}) == "unknown key"


# ---- load_suite ----------------------------------------------------------------------------------------------------


def test_an_unknown_key_whose_name_begins_with_x(tmp_path: Path) -> None:
    assert refusal(tmp_path, "Xtra = 1\n" + TWO + DATASETS) == "DIR/suite.toml:1: Xtra: unknown key"


def test_the_file_is_read_as_utf8_whatever_the_locale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read = Path.read_text
    used: list[Any] = []

    def spy(self: Path, encoding: str | None = None, errors: str | None = None) -> str:
        used.append(encoding)
        return read(self, encoding=encoding, errors=errors)

    path = tmp_path / "suite.toml"
    path.write_text('[[detectors]]\nname = "agree"\nspec = "é"\n\n[[datasets]]\nname = "a"\ncases = "embedded"\n',
                    encoding="utf-8")  # fmt: skip
    monkeypatch.setattr(Path, "read_text", spy)
    suite, base = load_suite(path)
    assert suite.detectors[0].spec == "é" and base == tmp_path
    assert used and codecs.lookup(used[0]).name == "utf-8"


def test_a_toml_error_without_a_line_is_put_on_line_1(tmp_path: Path) -> None:
    # "x = " ends the document: tomllib says "(at end of document)", no line
    assert refusal(tmp_path, "x = ") == "DIR/suite.toml:1: Invalid value (at end of document)"
    assert refusal(tmp_path, "seed = 1\n[[a]\n").startswith("DIR/suite.toml:2: Expected ']]'")


DATASETS = '\n[[datasets]]\nname = "small"\ncases = "embedded"\n\n[[datasets]]\nname = "big"\ncases = "embedded"\n'
# lines 5-7 and 9-11 after TWO's three lines and its blank line 4


def test_a_data_set_named_twice(tmp_path: Path) -> None:
    text = TWO + DATASETS.replace('"big"', '"small"')  # the second name: line 10
    assert refusal(tmp_path, text) == "DIR/suite.toml:10: datasets[1].name: 'small' is named twice"


def test_a_gate_naming_no_data_set_lists_the_suites(tmp_path: Path) -> None:
    gate = '\n[[gates]]\ndetector = "agree"\ndataset = "huge"\nbaseline = "b.json"\n'  # dataset: line 15
    assert refusal(tmp_path, TWO + DATASETS + gate) == (
        "DIR/suite.toml:15: gates[0].dataset: 'huge' is no dataset of this suite (big, small)"
    )


def test_a_split_on_a_later_data_set_is_checked_after_an_embedded_one(tmp_path: Path) -> None:
    text = TWO + DATASETS.replace('cases = "embedded"\n\n', 'cases = "embedded"\n\n', 1).replace(
        'name = "big"\ncases = "embedded"', 'name = "big"\ncases = "bench"\nsplit = "dev"'
    )  # the second data set: cases line 11, split line 12
    assert refusal(tmp_path, text) == (
        "DIR/suite.toml:12: datasets[1].split: DIR/bench is no folder; split needs cases to name a benchmark "
        "folder built by fcb build-dataset (dev.jsonl, test.jsonl)"
    )
    (tmp_path / "bench").mkdir()
    assert refusal(tmp_path, text).startswith("DIR/suite.toml:12: datasets[1].split: DIR/bench holds no dev.jsonl;")
    no_split = text.replace('split = "dev"\n', "")
    assert refusal(tmp_path, no_split) == (
        "DIR/suite.toml:11: datasets[1].cases: DIR/bench is a folder (a built benchmark?): "
        'give split = "dev" or "test", or the path of a cases file'
    )


def test_a_split_after_a_data_set_of_a_plain_cases_file(tmp_path: Path) -> None:
    text = TWO + DATASETS.replace('cases = "embedded"', 'cases = "cases.jsonl"', 1).replace(
        'name = "big"\ncases = "embedded"', 'name = "big"\ncases = "embedded"\nsplit = "dev"'
    )  # the first: a file (it need not exist yet); the second: the embedded set with a split, line 12
    assert refusal(tmp_path, text) == "DIR/suite.toml:12: datasets[1].split: the embedded set has no splits"


# ---- paths ---------------------------------------------------------------------------------------------------------


def test_resolve_reads_a_relative_path_from_the_suite_folder() -> None:
    assert resolve(Path("/suites"), "cases/a.jsonl") == "/suites/cases/a.jsonl"
    assert resolve(Path("/suites"), "/data/a.jsonl") == "/data/a.jsonl"  # an absolute path stays


def test_cases_file_of_a_split_and_of_a_plain_file() -> None:
    split = SuiteDataset.model_validate({"name": "b", "cases": "bench", "split": "test"})
    assert cases_file(Path("/s"), split) == "/s/bench/test.jsonl"
    plain = SuiteDataset.model_validate({"name": "p", "cases": "c.jsonl"})
    assert cases_file(Path("/s"), plain) == "/s/c.jsonl"


def test_a_second_gate_is_named_at_its_own_line(tmp_path: Path) -> None:
    gates = (
        '\n[[gates]]\ndetector = "agree"\ndataset = "small"\nbaseline = "b.json"\n'  # lines 13-16
        '\n[[gates]]\ndetector = "agree"\ndataset = "huge"\nbaseline = "b.json"\n'  # lines 18-21: dataset on 20
    )
    assert refusal(tmp_path, TWO + DATASETS + gates).startswith("DIR/suite.toml:20: gates[1].dataset: 'huge' is no")


def split_sets(second_cases: str, second_split: str) -> str:
    """Two data sets, the first a good split of bench: small's cases on line 7, split 8; big's name 11, cases 12,
    split 13."""
    return TWO + (
        '\n[[datasets]]\nname = "small"\ncases = "bench"\nsplit = "dev"\n'
        f'\n[[datasets]]\nname = "big"\ncases = "{second_cases}"\nsplit = "{second_split}"\n'
    )


def test_a_second_data_sets_split_is_named_at_its_own_line(tmp_path: Path) -> None:
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "dev.jsonl").write_text("")
    path = tmp_path / "suite.toml"
    path.write_text(split_sets("bench", "dev"))
    assert [d.split for d in load_suite(path)[0].datasets] == ["dev", "dev"]
    assert refusal(tmp_path, split_sets("bench", "test")).startswith(
        "DIR/suite.toml:13: datasets[1].split: DIR/bench holds no test.jsonl"
    )
    assert refusal(tmp_path, split_sets("embedded", "dev")) == (
        "DIR/suite.toml:13: datasets[1].split: the embedded set has no splits"
    )
