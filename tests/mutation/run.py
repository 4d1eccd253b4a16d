"""``make mutation``: plant one small fault at a time in the modules that compute what we report, and count the
faults the tests catch.

Each module in ``[tool.fcb-mutation.modules]`` of pyproject.toml is mutated by mutmut against the test files listed
beside it, in its own work folder under ``build/mutation/`` (a copy of ``harness/``, ``fcb_datasets/`` and ``tests/``),
two modules side by side (``--jobs``), their test processes two in all. mutmut credits a
test with the functions it calls, and a call made while a shared fixture is set up goes to the first test that uses
it, so every fault mutmut reports as missed, or as reached by no test, is run again with every test of the module's
files named for every function before it counts. A missed fault listed in ``tests/mutation/equivalent.txt`` (the
same behaviour by another route) counts apart. Prints per module: planted, caught, missed, equivalent, reached by no
test, and the score caught / (planted - equivalent); exits 1 when a module is below the target, a fault is reached by
no test, a module's equivalents pass 10% of its faults, or an equivalents line matches no surviving fault.

    python tests/mutation/run.py [--module harness/metrics.py ...] [--again] [--jobs 1|2]

``--again`` skips mutmut and runs the faults missed last time against the tests as they are now (the quick loop
while writing a test). Missed faults are written, with their diffs, to ``build/mutation/missed.txt`` and, for each
module as soon as it is done, to ``missed.txt`` in its work folder.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "mutation"
EQUIVALENTS = Path(__file__).with_name("equivalent.txt")
MUTMUT = Path(sys.executable).with_name("mutmut")
TARGET = 0.95
MAX_EQUIVALENT_SHARE = 0.10
PACKAGES = ("harness", "fcb_datasets")  # both are copied (tests of one import the other); one module is mutated
WORKERS = 2  # never more than two test processes at once: the machines have two cores

# mutmut's exit codes (mutmut.stats.status_by_exit_code): 1 and 3 are a failing test, 33 and 5 no test ran.
CAUGHT_CODES = {1, 3, 24, 36, 152, 255, -24, -9, -11}  # a failing test, a time-out or a crash all catch the fault
NO_TEST_CODES = {5, 33}
# mutmut forks each fault's test run from one process; a BLAS or OpenMP pool started before the fork hangs in the
# child (the audit's scikit-learn fits timed out, counted as caught, until their pools were held to one thread)
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
SEP_WHY = "  # why: "
SEP_CHANGE = " ==> "


@dataclass
class Module:
    path: str  # harness/metrics.py
    tests: list[str]
    children: int = WORKERS  # test processes of its own; modules mutated side by side share the WORKERS

    @property
    def slug(self) -> str:
        return self.path.removeprefix("harness/").removesuffix(".py").replace("/", ".")

    @property
    def work(self) -> Path:
        return WORK / self.slug


@dataclass
class Outcome:
    module: Module
    planted: int = 0
    caught: int = 0
    equivalent: list[str] = field(default_factory=list)
    missed: dict[str, str] = field(default_factory=dict)  # mutant name -> diff
    no_tests: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        counted = self.planted - len(self.equivalent)
        return self.caught / counted if counted else 1.0


def load_modules(pyproject: Path = ROOT / "pyproject.toml") -> list[Module]:
    table = tomllib.loads(pyproject.read_text("utf-8"))["tool"]["fcb-mutation"]["modules"]
    return [Module(path, list(tests)) for path, tests in table.items()]


def load_equivalents(path: Path = EQUIVALENTS) -> dict[str, str]:
    """Key (``module::function: old ==> new``) -> reason, from the equivalents file; refuses a malformed line."""
    found: dict[str, str] = {}
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        key, sep, why = line.partition(SEP_WHY)
        if not sep or "::" not in key or SEP_CHANGE not in key or not why.strip():
            raise SystemExit(f"{path}:{number}: expected 'MODULE::FUNCTION: OLD ==> NEW{SEP_WHY}REASON'")
        found[key.strip()] = why.strip()
    return found


def change_key(module: str, mutant: str, diff: str) -> str:
    """A fault's name that survives edits elsewhere in the module: its function and the lines it changes."""
    function = mutant.rsplit("__mutmut_", 1)[0].rsplit(".", 1)[-1].removeprefix("x_").replace("ǁ", ".")
    removed = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    added = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return f"{module}::{function}: {' / '.join(removed)}{SEP_CHANGE}{' / '.join(added)}"


def write_settings(module: Module) -> None:
    """The work folder's pyproject: mutmut's settings from ours, narrowed to one module and its test files."""
    ours = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]
    settings = dict(ours.get("mutmut", {}))
    settings.update(
        source_paths=list(PACKAGES), only_mutate=[module.path], pytest_add_cli_args_test_selection=module.tests
    )
    pytest_settings = ours["pytest"]["ini_options"]
    # json.dumps writes strings, lists of strings, numbers and booleans as valid TOML
    lines = ["[tool.mutmut]", *(f"{k} = {json.dumps(v)}" for k, v in settings.items())]
    lines += ["", "[tool.pytest.ini_options]", *(f"{k} = {json.dumps(v)}" for k, v in pytest_settings.items())]
    (module.work / "pyproject.toml").write_text("\n".join(lines) + "\n", "utf-8")


def mutate(module: Module) -> None:
    shutil.rmtree(module.work, ignore_errors=True)
    module.work.mkdir(parents=True)
    for name in (*PACKAGES, "tests"):
        shutil.copytree(ROOT / name, module.work / name, ignore=shutil.ignore_patterns("__pycache__", "mutation"))
    write_settings(module)
    # the tests run in mutants/ and find ../shared (specs, public data) beside it, as in a checkout
    if (ROOT.parent / "shared").is_dir():
        (module.work / "shared").symlink_to(ROOT.parent / "shared", target_is_directory=True)
    with open(module.work / "mutmut.log", "wb") as log:
        done = subprocess.run(
            [str(MUTMUT), "run", "--max-children", str(module.children)],
            cwd=module.work,
            env={**os.environ, **ONE_THREAD},
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"mutmut failed on {module.path} (exit {done.returncode}); see {module.work / 'mutmut.log'}")


def mutmut_again(module: Module, names: list[str]) -> None:
    """Runs mutmut once more on ``names``, each against every test of the module's files: mutmut credits a call
    made while a shared fixture is set up to the first test using it, so its own choice can miss the test that
    would catch the fault. The stats file is rewritten to name every test for every function; mutmut forks each
    run from one collected session, so this costs far less than a pytest process per fault."""
    stats_path = module.work / "mutants" / "mutmut-stats.json"
    stats = json.loads(stats_path.read_text("utf-8"))
    every = sorted(stats["duration_by_test"])
    stats["tests_by_mangled_function_name"] = {
        name: every for name in {*stats["tests_by_mangled_function_name"], *(_mangled(n) for n in names)}
    }
    stats_path.write_text(json.dumps(stats), "utf-8")
    with open(module.work / "mutmut.log", "ab") as log:
        command = [str(MUTMUT), "run", "--max-children", str(module.children), *names]
        env = {**os.environ, **ONE_THREAD}
        done = subprocess.run(command, cwd=module.work, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"mutmut failed on {module.path} (exit {done.returncode}); see {module.work / 'mutmut.log'}")


def _mangled(mutant: str) -> str:
    return mutant.rsplit("__mutmut_", 1)[0]


def results(module: Module) -> dict[str, int | None]:
    meta = module.work / "mutants" / (module.path + ".meta")
    return dict(json.loads(meta.read_text("utf-8"))["exit_code_by_key"])


def diffs_of(module: Module, mutants: list[str]) -> dict[str, str]:
    """Each fault's diff, from mutmut; it reads its settings from the working folder when imported, so it runs there."""
    code = (
        "import json, sys; from mutmut.mutation.diff_apply import get_diff_for_mutant; names = json.load(sys.stdin); "
        "print(json.dumps({n: get_diff_for_mutant(n, path=sys.argv[1]) for n in names}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, module.path],
        cwd=module.work,
        input=json.dumps(mutants),
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout))


def caught_by_whole_files(module: Module, mutant: str) -> bool:
    """Runs the module's whole test files with the fault switched on; True when a test fails."""
    env = {**os.environ, **ONE_THREAD, "MUTANT_UNDER_TEST": mutant, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("CI", None)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "--timeout",
        "120",
        *module.tests,
    ]
    done = subprocess.run(command, cwd=module.work / "mutants", env=env, capture_output=True, check=False)
    if done.returncode in (0, 1):
        return done.returncode == 1
    tail = done.stdout.decode(errors="replace")[-2000:]
    raise SystemExit(f"pytest could not run {module.path} with {mutant} (exit {done.returncode}):\n{tail}")


def refresh_tests(module: Module) -> None:
    target = module.work / "mutants" / "tests"
    shutil.rmtree(target)
    shutil.copytree(ROOT / "tests", target, ignore=shutil.ignore_patterns("__pycache__", "mutation"))


def assess(module: Module, equivalents: dict[str, str], again: bool) -> Outcome:
    started = time.monotonic()
    if again:  # what was caught last time stays caught (the tests only grew): rerun last time's missed faults
        refresh_tests(module)
        first = results(module)
        doubtful = json.loads((module.work / "missed.json").read_text("utf-8"))
        with ThreadPoolExecutor(module.children) as pool:
            caught = pool.map(lambda name: caught_by_whole_files(module, name), doubtful)
            still = [name for name, hit in zip(doubtful, caught, strict=True) if not hit]
    else:
        mutate(module)
        first = results(module)
        doubtful = [name for name, code in first.items() if code not in CAUGHT_CODES]
        if doubtful:
            mutmut_again(module, doubtful)
        final = results(module)
        still = [name for name in doubtful if final[name] not in CAUGHT_CODES]
    unclear = [name for name in still if first[name] not in NO_TEST_CODES | {0}]
    if unclear:
        raise SystemExit(f"{module.path}: mutmut left faults unchecked or unclear: {unclear[:5]}")
    outcome = Outcome(module, planted=len(first), caught=len(first) - len(still))
    for name, diff in diffs_of(module, still).items():
        key = change_key(module.path, name, diff)
        if key in equivalents:
            outcome.equivalent.append(key)
        elif first[name] in NO_TEST_CODES:
            outcome.no_tests[name] = diff
        else:
            outcome.missed[name] = diff
    (module.work / "missed.json").write_text(json.dumps(still), "utf-8")
    # each module's own list as soon as it is done: runs of other modules (side by side, or later) overwrite the
    # shared one
    (module.work / "missed.txt").write_text(missed_text(outcome), "utf-8")
    outcome.seconds = time.monotonic() - started
    return outcome


def unplanted(module: Module) -> list[str]:
    """The module's functions mutmut plants no fault in: every decorated one but a lone staticmethod or classmethod
    (mutmut 3 leaves them alone, a decorator runs when the function is defined). Their logic is held by tests
    written for it and checked by faults planted by hand (docs/development.md)."""
    tree = ast.parse((ROOT / module.path).read_text("utf-8"))
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.decorator_list
        and [ast.unparse(d) for d in node.decorator_list] not in (["staticmethod"], ["classmethod"])
    ]


def missed_text(outcome: Outcome) -> str:
    faults = {**outcome.no_tests, **outcome.missed}
    return "".join(f"## {n}\n{change_key(outcome.module.path, n, d)}\n{d}\n\n" for n, d in faults.items())


def report(outcomes: list[Outcome], equivalents: dict[str, str]) -> int:
    header = (
        f"{'module':<34} {'planted':>7} {'caught':>7} {'missed':>7} {'equiv.':>7} {'no test':>7} {'score':>7} "
        f"{'decor.':>7}"
    )
    print(header)
    problems: list[str] = []
    for o in outcomes:
        print(
            f"{o.module.path:<34} {o.planted:>7} {o.caught:>7} {len(o.missed):>7} {len(o.equivalent):>7} "
            f"{len(o.no_tests):>7} {o.score:>7.1%} {len(unplanted(o.module)):>7}   ({o.seconds:.0f} s)"
        )
        if o.score < TARGET:
            problems.append(f"{o.module.path}: {o.score:.1%} caught, below {TARGET:.0%}")
        if o.no_tests:
            problems.append(f"{o.module.path}: {len(o.no_tests)} faults reached by no test")
        if len(o.equivalent) > MAX_EQUIVALENT_SHARE * o.planted:
            problems.append(f"{o.module.path}: {len(o.equivalent)} equivalents, over 10% of {o.planted} faults")
    used = {key for o in outcomes for key in o.equivalent}
    checked = {o.module.path for o in outcomes}
    stale = [key for key in equivalents if key.split("::")[0] in checked and key not in used]
    problems += [f"{EQUIVALENTS.name}: no surviving fault matches: {key}" for key in stale]
    with open(WORK / "missed.txt", "w", encoding="utf-8") as out:
        for o in outcomes:
            out.write(missed_text(o))
    print(f"missed faults with their diffs: {WORK / 'missed.txt'} (and missed.txt in each module's folder)")
    decorated = {o.module.path: unplanted(o.module) for o in outcomes}
    if any(decorated.values()):
        print("decor.: decorated functions, where mutmut plants no fault (held by tests of their own):")
        for path, names in decorated.items():
            if names:
                print(f"  {path}: {', '.join(names)}")
    for problem in problems:
        print("FAIL", problem)
    return 1 if problems else 0


def progress(outcome: Outcome, started: float) -> Outcome:
    done = time.monotonic() - started
    print(f"[{done:5.0f} s] {outcome.module.path}: {outcome.score:.1%} of {outcome.planted} faults", flush=True)
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", help="only this module (repeatable), as listed in pyproject.toml")
    parser.add_argument("--again", action="store_true", help="rerun last time's missed faults against today's tests")
    parser.add_argument(
        "--jobs",
        type=int,
        choices=range(1, WORKERS + 1),
        default=WORKERS,
        help=f"modules mutated side by side (default {WORKERS}); their test processes share {WORKERS} in all",
    )
    args = parser.parse_args(argv)
    modules = load_modules()
    if args.module:
        unknown = set(args.module) - {m.path for m in modules}
        if unknown:
            parser.error(f"not in [tool.fcb-mutation.modules]: {', '.join(sorted(unknown))}")
        modules = [m for m in modules if m.path in args.module]
    equivalents = load_equivalents()
    started = time.monotonic()
    jobs = min(args.jobs, len(modules))
    for module in modules:
        module.children = WORKERS // jobs
    # side by side, one module's single-process steps (copying, mutmut's first pass over the tests, the diffs)
    # overlap another's faults being tested
    with ThreadPoolExecutor(jobs) as pool:
        outcomes = list(pool.map(lambda m: progress(assess(m, equivalents, args.again), started), modules))
    code = report(outcomes, equivalents)
    print(f"{time.monotonic() - started:.0f} s in all")
    return code


if __name__ == "__main__":
    sys.exit(main())
