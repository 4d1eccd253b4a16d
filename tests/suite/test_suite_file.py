"""The suite file's checks: every refusal names the file, the line (counted by hand in each text below) and the
key; a good file reads into the settings the runs use."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.suite.pairs import pair_settings
from harness.suite.spec import key_line, load_suite

GOOD = """\
seed = 4

[[detectors]]
name = "agree"
spec = "builtin:agreement"

[[detectors]]
name = "web"
spec = "http://127.0.0.1:9"
concurrency = 3
timeout = 2.5
engine = "processes"
workers = 2

[[datasets]]
name = "small"
cases = "cases/small.jsonl"
limit = 5
"""


def refusal(tmp_path: Path, text: str) -> str:
    path = tmp_path / "suite.toml"
    path.write_text(text)
    with pytest.raises(UsageError) as info:
        load_suite(path)
    return str(info.value).replace(str(path), "FILE")


def test_a_good_file_gives_the_settings_fcb_eval_would(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(GOOD)
    suite, base = load_suite(path)
    web, small = suite.detectors[1], suite.datasets[0]
    settings = pair_settings(suite, base, web, small, tmp_path / "run")
    assert (settings.detector.text, settings.detector.kind, settings.name) == ("http://127.0.0.1:9", "http", "web")
    assert (settings.options.concurrency, settings.options.timeout) == (3, 2.5)
    assert (settings.engine, settings.workers, settings.limit, settings.seed) == ("processes", 2, 5, 4)
    assert settings.cases == str(tmp_path / "cases" / "small.jsonl")  # relative to the suite file's folder
    assert settings.resume is False  # no journal in the run folder yet
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "predictions.jsonl").write_text("")
    assert pair_settings(suite, base, web, small, tmp_path / "run").resume is True


def test_an_unknown_key_names_its_line(tmp_path: Path) -> None:
    text = GOOD.replace("timeout = 2.5", "timout = 2.5")  # line 11
    assert refusal(tmp_path, text) == "FILE:11: detectors[1].timout: unknown key"


def test_a_wrong_type_names_its_line_and_what_came(tmp_path: Path) -> None:
    text = GOOD.replace("concurrency = 3", 'concurrency = "3"')  # line 10
    message = refusal(tmp_path, text)
    assert message.startswith("FILE:10: detectors[1].concurrency: ")
    assert "'3'" in message and "str" in message


def test_a_value_out_of_range(tmp_path: Path) -> None:
    assert refusal(tmp_path, GOOD.replace("limit = 5", "limit = 0")).startswith("FILE:18: datasets[0].limit: ")


def test_a_missing_field_points_at_its_table(tmp_path: Path) -> None:
    text = GOOD.replace('name = "small"\n', "")  # the [[datasets]] header is line 15
    assert refusal(tmp_path, text) == "FILE:15: datasets[0].name: missing (required)"


def test_a_key_of_the_same_name_in_an_earlier_table_is_not_taken(tmp_path: Path) -> None:
    # both detectors have "spec"; the second one's (line 9) is wrong: its line, not the first one's (line 5)
    text = GOOD.replace('spec = "http://127.0.0.1:9"', "spec = 9")
    assert refusal(tmp_path, text).startswith("FILE:9: detectors[1].spec: ")


def test_every_problem_is_listed(tmp_path: Path) -> None:
    text = GOOD.replace("timeout = 2.5", "timout = 2.5").replace("seed = 4", 'seed = "x"')
    lines = refusal(tmp_path, text).splitlines()
    assert sorted(line.split(": ")[0] for line in lines) == ["FILE:1", "FILE:11"]


def test_a_name_given_twice(tmp_path: Path) -> None:
    text = GOOD.replace('name = "web"', 'name = "agree"')  # line 8
    assert refusal(tmp_path, text) == "FILE:8: detectors[1].name: 'agree' is named twice"


def test_a_name_that_cannot_be_a_folder(tmp_path: Path) -> None:
    assert refusal(tmp_path, GOOD.replace('name = "small"', 'name = "../up"')).startswith("FILE:16: datasets[0].name")


def test_a_gate_naming_no_detector_of_the_suite(tmp_path: Path) -> None:
    text = GOOD + '\n[[gates]]\ndetector = "nobody"\ndataset = "small"\nbaseline = "b.json"\n'  # header: line 20
    message = refusal(tmp_path, text)
    assert message.startswith("FILE:21: gates[0].detector: 'nobody' is no detector of this suite")


def test_neither_spec_nor_config(tmp_path: Path) -> None:
    text = GOOD.replace('spec = "builtin:agreement"\n', "")  # the first [[detectors]] header: line 3
    assert refusal(tmp_path, text).startswith("FILE:3: detectors[0]: give spec")


def test_no_detectors_at_all(tmp_path: Path) -> None:
    text = 'seed = 1\n\n[[datasets]]\nname = "a"\ncases = "embedded"\n'
    assert refusal(tmp_path, text) == "FILE:1: detectors: missing (required)"


def test_a_toml_syntax_error_keeps_its_line(tmp_path: Path) -> None:
    assert refusal(tmp_path, GOOD.replace("limit = 5", "limit = = 5")).startswith("FILE:18: ")


def test_key_line_finds_keys_by_table_position() -> None:
    text = "[[a]]\nx = 1\n[[a]]\ny = 2\nx = 3\n[[b]]\nx = 4\n"
    assert [key_line(text, ("a", 0, "x")), key_line(text, ("a", 1, "x")), key_line(text, ("b", 0, "x"))] == [2, 5, 7]
    assert key_line(text, ("a", 1, "z")) == 3  # absent: the table's header


# ---- split: a built benchmark folder ------------------------------------------------------------------------------

SPLIT = GOOD.replace('cases = "cases/small.jsonl"', 'cases = "bench"\nsplit = "test"')  # split: line 18


def test_split_reads_the_split_file_of_a_benchmark_folder(tmp_path: Path) -> None:
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "test.jsonl").write_text("")
    path = tmp_path / "suite.toml"
    path.write_text(SPLIT)
    suite, base = load_suite(path)
    settings = pair_settings(suite, base, suite.detectors[0], suite.datasets[0], tmp_path / "run")
    assert settings.cases == str(tmp_path / "bench" / "test.jsonl")


def test_a_missing_split_file_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "dev.jsonl").write_text("")  # the dev split alone: test.jsonl is missing
    message = refusal(tmp_path, SPLIT)
    assert message.startswith("FILE:18: datasets[0].split: ") and "holds no test.jsonl" in message
    assert refusal(tmp_path, SPLIT.replace('"bench"', '"elsewhere"')).startswith("FILE:18: datasets[0].split: ")


def test_a_folder_without_split_is_refused_at_its_cases_line(tmp_path: Path) -> None:
    (tmp_path / "bench").mkdir()
    message = refusal(tmp_path, SPLIT.replace('split = "test"\n', ""))  # cases: line 17
    assert message.startswith("FILE:17: datasets[0].cases: ") and 'split = "dev" or "test"' in message


def test_split_takes_dev_or_test_alone(tmp_path: Path) -> None:
    (tmp_path / "bench").mkdir()
    assert refusal(tmp_path, SPLIT.replace('"test"', '"train"')).startswith("FILE:18: datasets[0].split: ")
    embedded = SPLIT.replace('cases = "bench"', 'cases = "embedded"')
    assert refusal(tmp_path, embedded) == "FILE:18: datasets[0].split: the embedded set has no splits"


def test_the_example_suite_holds_to_the_printed_schema() -> None:
    import tomllib

    from jsonschema import Draft202012Validator

    from harness.documents import schema

    validator = Draft202012Validator(schema("suite"))
    # the checkout's configs/: two levels up, or further up from a copy under build/mutation/ (make mutation)
    found = (p / "configs" / "suites" / "builtins.toml" for p in Path(__file__).parents)
    example = tomllib.loads(next(f for f in found if f.is_file()).read_text())
    assert list(validator.iter_errors(example)) == []
    example["datasets"][0]["split"] = "train"
    example["detectors"][0]["concurency"] = 2
    assert sorted(e.json_path for e in validator.iter_errors(example)) == ["$.datasets[0].split", "$.detectors[0]"]


@pytest.mark.parametrize(("text", "key"), [("seed = -5", "seed"), ("seed = 4294967296", "seed"),
                                           ("seed = 4\nbootstrap = 3000000000", "bootstrap")])  # fmt: skip
def test_a_seed_or_bootstrap_out_of_range_is_refused_at_its_line(tmp_path: Path, text: str, key: str) -> None:
    """Issue 45, item 14: ``seed = -5`` in a suite ran the detector, then left a run folder without metrics.json."""
    message = refusal(tmp_path, GOOD.replace("seed = 4", text))
    line = 1 if key == "seed" else 2
    assert message.startswith(f"FILE:{line}: {key}: Input should be "), message
