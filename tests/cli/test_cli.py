"""The fcb command as a user runs it: validation gates, skipped cases, error gates, callables, secrets."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

CALLABLES = """
import asyncio, time

def sync_detector(request):
    return "high" if len(request["answers"]) > 4 else {"false_consensus_risk": "low", "risk_score": 0.2, "why": "x"}

async def async_detector(request):
    await asyncio.sleep(0)
    return {"false_consensus_risk": "medium"}

def broken(request):
    if len(request["answers"]) == 3:
        raise RuntimeError("detector bug")
    return "low"

def slow(request):
    time.sleep(5 if len(request["answers"]) == 3 else 0)
    return "low"

def self_referencing(request):
    reply = {"false_consensus_risk": "low"}
    reply["self"] = reply
    return reply

def huge(request):
    return {"false_consensus_risk": "low", "blob": "x" * 5_000_000}

def garbage(request):
    return ["not", "a", "dict"] if len(request["answers"]) == 3 else "critical"
"""


def _metrics(run_dir: Path) -> dict:
    return json.loads((run_dir / "metrics.json").read_text())


def test_invalid_file_stops_the_run_before_anything_is_written(tmp_path: Path, detector_server) -> None:
    """The first case goes out as the preflight while the rest of the file is read (an HTTP detector); the broken
    lines 4 and 7 then stop the run: that one request at most (cancelled if it had not gone out), nothing written."""
    cases = write_cases(tmp_path / "cases.jsonl", 10)
    lines = cases.read_text().splitlines()
    bad = json.loads(lines[3])
    bad["answers"][0]["correct"] = "yes"
    lines[3] = json.dumps(bad)
    lines[6] = lines[6].replace('"expected_risk": "', '"expected_risk": "x')
    cases.write_text("\n".join(lines) + "\n")
    server = detector_server()

    proc = run_cli("eval", str(cases), "-d", server.url, "--out", str(tmp_path / "run"), "--quiet")
    assert proc.returncode == 1
    assert f"{cases}:4: answers[0].correct: 'yes' is not of type boolean" in proc.stderr
    assert f"{cases}:7: expected_risk: " in proc.stderr
    early = server.stats()["count"]
    assert early in (0, 1) and not (tmp_path / "run").exists()
    assert "the first case had gone out as the preflight, or was on its way" in proc.stderr

    proc = run_cli("eval", str(cases), "-d", server.url, "--out", str(tmp_path / "run"), "--quiet", "--skip-invalid")
    assert proc.returncode == 0, proc.stderr
    doc = _metrics(tmp_path / "run")
    assert doc["dataset"]["skipped_invalid"] == 2 and not doc["complete"]
    assert doc["metrics"]["n_cases"] == 8 and server.stats()["count"] == early + 8
    assert any(":4: answers[0].correct" in p for p in doc["dataset"]["problems"])
    assert "Problems in the cases file" in (tmp_path / "run" / "report.md").read_text()


def test_validate_and_stats_commands(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 24)
    ok = run_cli("validate", str(cases))
    assert ok.returncode == 0 and "24 valid case(s)" in ok.stdout and not ok.stderr
    (tmp_path / "bad.jsonl").write_text(cases.read_text().splitlines()[0] + "\n{broken\n")
    bad = run_cli("validate", str(tmp_path / "bad.jsonl"))
    assert bad.returncode == 1 and f"{tmp_path / 'bad.jsonl'}:2: (line): invalid JSON" in bad.stdout

    stats = run_cli("stats", str(cases), "--format", "json")
    counts = json.loads(stats.stdout)["counts"]
    assert counts["category"] == {c: 3 for c in counts["category"]} and len(counts["category"]) == 8
    assert sum(counts["answers"].values()) == 24
    assert counts["evidence"] == {"absent": 18, "present": 6}  # casegen puts evidence on every fourth case


def test_python_callables_sync_async_and_failures(tmp_path: Path) -> None:
    (tmp_path / "dets.py").write_text(CALLABLES)
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    expected = [c for c in read_jsonl(cases)]

    def run(name: str, *extra: str, code: int = 0) -> list[dict]:
        out = tmp_path / name
        proc = run_cli("eval", str(cases), "-d", f"{tmp_path / 'dets.py'}:{name}", "--out", str(out), "-q", *extra)
        assert proc.returncode == code, proc.stderr
        return read_jsonl(out / "predictions.jsonl")

    by_id = {r["id"]: r for r in run("sync_detector")}
    for case in expected:
        want = "high" if len(case["answers"]) > 4 else "low"
        assert by_id[case["id"]]["risk"] == want
    assert all(r["response"] == {"why": "x"} for r in by_id.values() if r["risk"] == "low")
    assert {r["risk"] for r in run("async_detector")} == {"medium"}

    broken = run("broken")
    three = {c["id"] for c in expected if len(c["answers"]) == 3}
    assert three and {r["id"] for r in broken if r["error"]} == three
    assert {r["error"]["kind"] for r in broken if r["error"]} == {"detector_exception"}

    # two workers, six hanging calls: a timed-out call must not hold up the cases after it
    slow = run("slow", "--timeout", "0.5", "--concurrency", "2")
    assert {r["id"] for r in slow if r["error"]} == three
    assert {r["error"]["kind"] for r in slow if r["error"]} == {"timeout"}

    # every case errors: the run goes on to the end without the consecutive-error stop, and exits 1
    for name in ("self_referencing", "huge"):
        replies = run(name, "--max-consecutive-errors", "0", code=1)
        assert len(replies) == 40 and {r["error"]["kind"] for r in replies} == {"invalid_response"}

    garbage = run("garbage", "--max-consecutive-errors", "0", code=1)
    assert all(r["error"]["kind"] == "invalid_response" for r in garbage)
    assert len(garbage) == 40  # never dropped from the counts


def test_fail_on_error_gate(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    server = detector_server("--garbage-every", "3")
    # no retries: the unreadable replies fail on every attempt, and the gate counts errors, not attempts
    args = ["eval", str(cases), "-d", server.url, "-q", "--results", str(tmp_path), "--retries", "0"]
    assert run_cli(*args, "--fail-on-error", "0.9").returncode == 0
    failed = run_cli(*args, "--fail-on-error", "0.01")
    assert failed.returncode == 1 and "exceeds --fail-on-error" in failed.stderr


def test_status_errors_retry_policy_and_retry_after(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 4)
    bad_request = detector_server("--status", "400")
    out = tmp_path / "r400"
    assert run_cli("eval", str(cases), "-d", bad_request.url, "--out", str(out), "-q").returncode == 1  # all errored
    records = read_jsonl(out / "predictions.jsonl")
    assert {(r["error"]["kind"], r["attempts"]) for r in records} == {("http_status", 1)}  # no retry on 4xx
    assert bad_request.stats()["count"] == 4

    unavailable = detector_server("--status", "503")
    out = tmp_path / "r503"
    args = ["--retries", "2", "--out", str(out), "-q"]
    assert run_cli("eval", str(cases), "-d", unavailable.url, *args).returncode == 1
    assert {r["attempts"] for r in read_jsonl(out / "predictions.jsonl")} == {3}
    assert unavailable.stats()["count"] == 12

    throttled = detector_server("--throttle-once", "1")
    out = tmp_path / "r429"
    assert run_cli("eval", str(cases), "-d", throttled.url, "--out", str(out), "-q").returncode == 0
    records = read_jsonl(out / "predictions.jsonl")
    assert all(r["error"] is None and r["attempts"] == 2 for r in records)
    # Retry-After: 1 is honoured, not replaced by the much shorter first backoff step
    assert min(r["latency_s"] for r in records) >= 1.0


def test_secrets_never_reach_results_and_agents_can_be_anonymised(tmp_path: Path, detector_server) -> None:
    token, other = "tok-SECRET-1234567890", "hdr-SECRET-0987654321"
    record = tmp_path / "seen.jsonl"
    server = detector_server("--echo-headers", "--record", str(record))
    cases = write_cases(tmp_path / "cases.jsonl", 12)
    out = tmp_path / "results" / "run"
    proc = run_cli(
        "eval",
        str(cases),
        "-d",
        server.url + "/v1/consensus?api_key=k-SECRET",
        "--out",
        str(out),
        "--header",
        "X-Extra=MY_EXTRA",
        "--anonymize-agents",
        env={"FCB_DETECTOR_TOKEN": token, "MY_EXTRA": other},
    )
    assert proc.returncode == 0, proc.stderr
    seen = read_jsonl(record)
    assert len(seen) == 12
    headers = [{k.lower(): v for k, v in r["headers"].items()} for r in seen]
    assert all(h["authorization"] == f"Bearer {token}" and h["x-extra"] == other for h in headers)
    for r in seen:
        ids = [a["agent_id"] for a in r["body"]["answers"]]
        assert ids == [f"agent-{i}" for i in range(1, len(ids) + 1)]
    assert "[REDACTED]" in (out / "predictions.jsonl").read_text()  # the echoed headers were scrubbed

    not_found = detector_server("--status", "404")
    out404 = tmp_path / "results" / "run404"
    url404 = not_found.url + "/v1/consensus?api_key=k-SECRET-404"
    proc404 = run_cli("eval", str(cases), "-d", url404, "--out", str(out404), "-q", "--no-preflight")
    assert proc404.returncode == 1, proc404.stderr  # every case errored
    assert "k-SECRET-404" not in (out404 / "predictions.jsonl").read_text()
    preflight = run_cli("eval", str(cases), "-d", url404, "--out", str(tmp_path / "results" / "pre404"), "-q")
    assert preflight.returncode == 2 and "HTTP 404" in preflight.stderr  # the preflight stops it at once...
    assert "k-SECRET-404" not in preflight.stderr  # ...and its message keeps the secret out too

    with_credentials = server.url.replace("http://", "http://user:pw-SECRET@")
    out2 = tmp_path / "results" / "run2"
    proc2 = run_cli("eval", str(cases), "-d", with_credentials, "--out", str(out2))
    assert proc2.returncode == 0, proc2.stderr
    last = {k.lower(): v for k, v in read_jsonl(record)[-1]["headers"].items()}
    assert last["authorization"].startswith("Basic ")
    written = "".join(p.read_text() for p in (tmp_path / "results").rglob("*") if p.is_file())
    assert "SECRET" not in written + proc.stdout + proc.stderr + proc2.stdout + proc2.stderr
    assert json.loads((out2 / "metrics.json").read_text())["detector"]["spec"].startswith("http://REDACTED@127.0.0.1")
    refused = run_cli("eval", "--resume", str(out2))  # the stored URL has no credentials left to reuse
    assert refused.returncode == 2 and "pass --detector again" in refused.stderr


def test_detector_config_file(tmp_path: Path, detector_server) -> None:
    server = detector_server("--status", "503")
    config = tmp_path / "det.toml"
    config.write_text(f'detector = "{server.url}"\nretries = 0\ntimeout = 5\nconcurrency = 2\n')
    cases = write_cases(tmp_path / "cases.jsonl", 3)
    out = tmp_path / "run"
    assert (
        run_cli("eval", str(cases), "--detector-config", str(config), "--out", str(out), "-q").returncode == 1
    )  # every case errored
    assert {r["attempts"] for r in read_jsonl(out / "predictions.jsonl")} == {1}
    config.write_text('detector = "builtin:agreement"\nretrys = 1\n')
    proc = run_cli("eval", str(cases), "--detector-config", str(config), "-q")
    assert proc.returncode == 2 and "unknown key 'retrys'" in proc.stderr
    config.write_text('detector = "builtin:agreement"\nbackoff_initial = 0\n')
    proc = run_cli("eval", str(cases), "--detector-config", str(config), "-q")
    assert proc.returncode == 2 and f"{config}: backoff_initial must be above 0" in proc.stderr


def test_a_config_s_backoff_is_used_and_kept_for_the_resume(tmp_path: Path, detector_server) -> None:
    server = detector_server("--status", "503")
    config = tmp_path / "det.toml"
    config.write_text(f'detector = "{server.url}"\nretries = 2\nbackoff_initial = 0.01\nbackoff_max = 5\n')
    cases = write_cases(tmp_path / "cases.jsonl", 2)
    out = tmp_path / "run"
    args = ["eval", str(cases), "--detector-config", str(config), "--out", str(out), "-q", "--no-preflight"]
    assert run_cli(*args).returncode == 1  # every case errored, after its retries
    assert {r["attempts"] for r in read_jsonl(out / "predictions.jsonl")} == {3}
    stored = json.loads((out / "run.json").read_text())["settings"]
    assert (stored["backoff_initial"], stored["backoff_max"]) == (0.01, 5)


def test_help_lists_every_detector_form_and_serve_defaults() -> None:
    eval_help = " ".join(run_cli("eval", "--help").stdout.split())
    assert "llm:MODEL@BASE_URL" in eval_help and "for replicas" in eval_help and "builtin:NAME" in eval_help
    serve_help = " ".join(run_cli("serve", "--help").stdout.split())
    for default in ("(default: builtin:agreement)", "(default: 127.0.0.1)", "(default: 8765)", "(default: 1048576)"):
        assert default in serve_help


def test_every_command_module_is_listed_once_and_registers_its_own_command() -> None:
    """A module added to harness/cli/ but left out of COMMANDS would be a command `fcb` never offers."""
    import argparse
    import pkgutil

    from harness import cli

    shared = {"common", "options"}
    modules = {m.name for m in pkgutil.iter_modules(cli.__path__)} - shared
    listed = [c.__name__.rsplit(".", 1)[1] for c in cli.COMMANDS]
    assert sorted(listed) == sorted(modules) and len(set(listed)) == len(listed)
    for command in cli.COMMANDS:
        sub = argparse.ArgumentParser().add_subparsers()
        command.add_parser(sub)
        # one command each, named as its module (build_dataset registers build-dataset), and the old names listed here
        old = {"cases": ["items"]}.get(command.__name__.rsplit(".", 1)[1], [])
        assert list(sub.choices) == [command.__name__.rsplit(".", 1)[1].replace("_", "-"), *old]
        if command is not cli.scenario:  # the scenario subcommands' actions live in harness.scenario.commands
            assert callable(command.run)


def test_option_values_that_are_no_number_say_what_was_wanted() -> None:
    """A value the shared types cannot read is named with what the option wants (argparse alone would print the
    function's name: "invalid positive_int value")."""
    expected = {
        ("--limit", "x"): "argument --limit: 'x' is not a whole number",
        ("--bootstrap", "1.5"): "argument --bootstrap: '1.5' is not a whole number",
        ("--fail-on-error", "z"): "argument --fail-on-error: 'z' is not a number",
        ("--limit", "0"): "argument --limit: 0 is not a whole number of 1 or more",
        ("--fail-on-error", "2"): "argument --fail-on-error: 2 is not a rate between 0 and 1",
    }
    for (option, value), message in expected.items():
        proc = run_cli("eval", "cases.jsonl", option, value)
        assert proc.returncode == 2 and f"fcb eval: error: {message}" in proc.stderr


def test_a_suggested_command_quotes_a_path_with_a_space(tmp_path: Path) -> None:
    """Issue 45, item 16: the --resume hint was printed with the path bare, which a shell splits at the space."""
    detector = tmp_path / "failing.py"
    detector.write_text("def assess(request):\n    raise RuntimeError('down for maintenance')\n")
    run = tmp_path / "my run"
    proc = run_cli("eval", "-d", f"{detector}:assess", "--limit", "3", "--no-preflight", "-q", "--out", str(run),
                   "--bootstrap", "0")  # fmt: skip
    assert f"fcb eval --resume '{run}' --retry-errors" in proc.stderr, proc.stderr
    words = shlex.split(proc.stderr.split("ask them again with: ")[1].splitlines()[0])
    assert words == ["fcb", "eval", "--resume", str(run), "--retry-errors"]  # a shell reads it back as one path


def test_errors_of_a_run_with_epochs_are_counted_as_answers_not_cases(tmp_path: Path) -> None:
    """Issue 45, item 15: an errored --epochs 3 run said "1513 case(s) ended in an error" on 240 cases."""
    detector = tmp_path / "failing.py"
    detector.write_text("def assess(request):\n    raise RuntimeError('down for maintenance')\n")
    proc = run_cli("eval", "-d", f"{detector}:assess", "--limit", "3", "--epochs", "3", "--no-preflight", "-q",
                   "--out", str(tmp_path / "run"), "--bootstrap", "0")  # fmt: skip
    # 3 cases x 3 epochs: 9 answers, every one an error
    assert "9 answer(s) (cases x epochs and probe variants) ended in an error" in proc.stderr, proc.stderr
    assert "every answer errored (9 of 9)" in proc.stderr and "case(s) ended" not in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("eval", "cases.jsonl", "--seed", "-5"),
        ("eval", "cases.jsonl", "--probe-seed", "4294967296"),
        ("board", "results", "--seed", "-5"),
        ("leaderboard", "results", "--seed", "1e20"),
        ("compare", "a", "b", "--seed", "-1"),
        ("audit-dataset", "bench", "--seed", "-5"),
        ("build-dataset", "--seed", "-5"),
    ],
)
def test_every_commands_seed_is_checked_before_any_work(args: tuple[str, ...]) -> None:
    """Issue 45, item 14: a seed out of range crashed a generator (exit 3) after the work was done; every command's
    --seed is now refused at once (exit 2), naming the range 0 .. 2**32 - 1."""
    proc = run_cli(*args)
    flag, value = args[-2], args[-1]
    wanted = f"is not a whole number from 0 to {2**32 - 1}" if value != "1e20" else "is not a whole number"
    assert proc.returncode == 2 and f"argument {flag}: " in proc.stderr and wanted in proc.stderr, proc.stderr


def test_the_summary_shows_the_natural_only_column_the_readme_names(tmp_path: Path) -> None:
    """Issue 45, item 16: fcb eval's second headline column said "natural + assembled" where the README's table says
    "natural only"; the summary now has both, in that order, after all cases."""
    from casegen import write_cases

    cases = write_cases(tmp_path / "cases.jsonl", 30, origins=True)
    proc = run_cli("eval", str(cases), "-d", "builtin:vote", "--bootstrap", "0", "--out", str(tmp_path / "run"))
    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if line.startswith("metric "))
    assert header.split("  ")[0] == "metric" and header.index("all cases") < header.index("natural + assembled")
    assert header.index("natural + assembled") < header.index("natural only")
