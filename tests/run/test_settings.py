"""A run's settings, defined once (harness/run/settings.py): every way in (fcb eval's flags, a suite file's keys,
evaluate()'s keywords, run.json's record) names a setting by one name, and the stored record reads back to the same
settings, whatever its version."""

from __future__ import annotations

import argparse
from dataclasses import fields, replace
from pathlib import Path

import pytest
from conftest import run_cli

from harness import documents
from harness.cli import eval as eval_command
from harness.detectors.options import DetectorOptions
from harness.documents.suite import SuiteDataset, SuiteDetector
from harness.run.settings import (
    SESSION_ONLY,
    SETTING_NAMES,
    SETTINGS_VERSION,
    EvalSettings,
    manifest_settings,
    settings_record,
    with_settings,
)
from harness.spec import parse_spec
from harness.suite.pairs import NOT_SETTINGS

SPEC = parse_spec("builtin:agreement")
# fcb eval's flags that are not settings of a run: what runs it, and how it reports (each said in its help)
EVAL_FLAGS_NOT_SETTINGS = {"func", "command", "detector_config", "header", "cache_at", "no_cache", "quiet",
                           "fail_on_error", "resume_dir"}  # fmt: skip


def _manifest(record: dict) -> dict:
    return {"identity": {"detector": "builtin:agreement"}, "cases": "cases.jsonl", "settings": record}


def _stored(settings: EvalSettings) -> EvalSettings:
    """What a later session reads of a run's settings: those that are not the session's own."""
    session = SESSION_ONLY - {"cases", "detector"}
    return replace(settings, **{f.name: f.default for f in fields(EvalSettings) if f.name in session})


VARIED = [
    EvalSettings(cases="cases.jsonl", detector=SPEC),
    EvalSettings(
        cases="cases.jsonl", detector=SPEC, limit=7, shard=(2, 5), anonymize_agents=True, skip_invalid=True,
        strict=True, n_boot=250, seed=4, ece_bins=9, epochs=3, epoch_reducer="first", probes=("order", "names"),
        probe_seed=5, name="nightly", categories=("echo_cascade",), tags=("t-a", "t-b"), engine="processes",
        workers=2, options=DetectorOptions(concurrency=3, timeout=2.5, retries=1, risk_field=("a", "b"),
                                           headers={"X-Key": "MY_KEY"}, backoff_initial=0.1, rpm=60, max_cost=1.5,
                                           price_prompt_per_mtok=1.0, price_completion_per_mtok=2.0),
    ),
]  # fmt: skip


@pytest.mark.parametrize("settings", VARIED, ids=["defaults", "every-kind-of-value"])
def test_the_stored_record_reads_back_to_the_same_settings(settings: EvalSettings) -> None:
    record = settings_record(settings)
    assert record["settings_version"] == SETTINGS_VERSION == 2
    assert manifest_settings(_manifest(dict(record))) == _stored(settings)
    # the record is what run.json's definition allows
    manifest = {**_manifest(dict(record)), "identity": {}, "created": "x", "sessions": []}
    assert [e for e in documents.check("run", manifest) if e[0].startswith("settings")] == []


def test_a_record_of_version_1_reads_with_the_defaults_of_what_it_lacks() -> None:
    old = {"limit": None, "anonymize_agents": False, "skip_invalid": False, "strict": False,
           "bootstrap_resamples": 300, "seed": 2, "concurrency": 4, "timeout": 10.0, "retries": 1,
           "risk_field": "false_consensus_risk"}  # fmt: skip
    read = manifest_settings(_manifest(old))
    assert (read.n_boot, read.seed, read.options.concurrency, read.options.retries) == (300, 2, 4, 1)
    assert (read.ece_bins, read.epochs, read.engine, read.options.backoff_initial) == (15, 1, "local", 0.5)


def test_text_forms_are_read_and_unknown_names_refused() -> None:
    base = EvalSettings(cases="c", detector=SPEC)
    got = with_settings(base, {"shard": "2/4", "risk_field": "a.b", "categories": ["x"], "detector": "http://h:1",
                               "concurrency": 5, "limit": None})  # fmt: skip
    assert (got.shard, got.options.risk_field, got.categories) == ((2, 4), ("a", "b"), ("x",))
    assert (got.detector.kind, got.options.concurrency, got.limit) == ("http", 5, None)
    with pytest.raises(TypeError, match="no setting 'concurency'"):
        with_settings(base, {"concurency": 5})


def test_every_key_of_a_suite_file_and_every_flag_of_fcb_eval_is_a_setting_by_its_name() -> None:
    for model in (SuiteDetector, SuiteDataset):
        assert set(model.model_fields) - NOT_SETTINGS <= SETTING_NAMES, model.__name__
    parser = argparse.ArgumentParser()
    eval_command.add_parser(parser.add_subparsers(dest="command"))
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    dests = {a.dest for a in sub.choices["eval"]._actions} - {"help"}
    assert dests - EVAL_FLAGS_NOT_SETTINGS <= SETTING_NAMES, dests - EVAL_FLAGS_NOT_SETTINGS - SETTING_NAMES
    # and a flag not given is None, so that the resumed run's or the config's value stands (no default restated)
    args = parser.parse_args(["eval"])
    assert all(getattr(args, d) is None for d in dests & SETTING_NAMES), vars(args)


@pytest.mark.parametrize(
    ("flag", "value", "named"),
    [("--seed", "-5", "seed"), ("--probe-seed", "-1", "probe_seed"), ("--seed", str(2**32), "seed"),
     ("--bootstrap", "2000000", "bootstrap_resamples"), ("--ece-bins", "100000", "ece_bins")],
)  # fmt: skip
def test_a_setting_out_of_range_is_refused_before_the_detector_is_called(
    tmp_path: Path, flag: str, value: str, named: str
) -> None:
    """Issue 45, item 14: these ran the detector, then ended in an internal error (exit 3) without metrics.json."""
    proc = run_cli("eval", "-d", "builtin:vote", flag, value, "-q", "--out", str(tmp_path / "run"))
    # a seed is checked by its flag's type (as every command's --seed), the others by EvalSettings
    said = f"argument {flag}: {value} is not a whole number from" if "seed" in flag else f"{named} {value}: a whole"
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert not (tmp_path / "run").exists()
