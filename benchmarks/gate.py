"""The noise-aware gate's false alarms and power (issue 30's target), measured with real runs and the real CLI.

A detector random on a share of its calls (tests/data/detectors/noisy.py, seeded per run by ``FCB_NOISY_SEED``),
``fcb eval --epochs 5`` on the embedded set:

- ``--pairs`` pairs of runs of identical code (30% random, every run its own seed): how many times ``fcb compare``
  exits 1 (target: at most 3 of 30);
- ``--change-pairs`` pairs of a 30% run against a 70% run: how many times it exits 1 (target: at least 4 of 5).

    python benchmarks/gate.py --out results/bench/gate [--pairs 30] [--change-pairs 5] [--bootstrap 1000]

Prints the counts and writes ``gate.json`` into ``--out``. ``--simulate`` measures instead, without the CLI, the
gate's figures on every epoch's verdict against those on mode-reduced verdicts (`simulate`):

    python benchmarks/gate.py --simulate --out results/bench/gate-sim --pairs 200 --change-pairs 40 --bootstrap 500
 Every run is reproducible (``--concurrency 1``, fixed
seeds): the slow test tests/leaderboard/test_gate_e2e.py runs a reduced version.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DETECTOR = f"{ROOT / 'tests' / 'data' / 'detectors' / 'noisy.py'}:assess"


def evaluate(out: Path, *, seed: int, share: float, epochs: int) -> Path:
    """One ``fcb eval`` of the noisy detector into ``out``; its folder."""
    env = {**os.environ, "FCB_NOISY_SEED": str(seed), "FCB_NOISY_SHARE": str(share)}
    cmd = [sys.executable, "-m", "harness", "eval", "-d", DETECTOR, "--name", "noisy", "--epochs", str(epochs),
           "--concurrency", "1", "-q", "--bootstrap", "0", "--no-cache", "--out", str(out), "--overwrite"]  # fmt: skip
    subprocess.run(cmd, env=env, check=True, capture_output=True, cwd=ROOT)
    return out


def compare(base: Path, new: Path, *, n_boot: int, alpha: float) -> tuple[int, dict[str, Any]]:
    """``fcb compare --format json`` of two runs: its exit code and its document."""
    cmd = [sys.executable, "-m", "harness", "compare", str(base), str(new), "--format", "json",
           "--bootstrap", str(n_boot), "--alpha", str(alpha)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"fcb compare exited {done.returncode}: {done.stderr}")
    return done.returncode, json.loads(done.stdout)


def measure(out: Path, *, pairs: int, change_pairs: int, epochs: int, n_boot: int, alpha: float,
            share: float = 0.3, changed: float = 0.7) -> dict[str, Any]:  # fmt: skip
    """Run the experiment into ``out``: the exit codes and the metrics that failed, per pair."""
    null = [evaluate(out / f"same-{i}", seed=i, share=share, epochs=epochs) for i in range(2 * pairs)]
    moved = [evaluate(out / f"changed-{i}", seed=10_000 + i, share=changed, epochs=epochs) for i in range(change_pairs)]
    settings = {"pairs": pairs, "change_pairs": change_pairs, "epochs": epochs, "bootstrap": n_boot, "alpha": alpha,
                "share": share, "changed": changed}  # fmt: skip
    result: dict[str, Any] = {"settings": settings}
    for name, couples in (("same", list(zip(null[0::2], null[1::2], strict=True))),
                          ("changed", list(zip(null[:change_pairs], moved, strict=True)))):  # fmt: skip
        rows = []
        for base, new in couples:
            code, doc = compare(base, new, n_boot=n_boot, alpha=alpha)
            failed = [m for m, v in doc["metrics"].items() if v["regression"]]
            rows.append({"base": base.name, "new": new.name, "exit": code, "failed": failed})
        result[name] = {"pairs": rows, "exit_1": sum(r["exit"] == 1 for r in rows)}
    return result


def simulate(out: Path, *, pairs: int, change_pairs: int, epochs: int, n_boot: int, alpha: float,
             share: float = 0.3, changed: float = 0.7, seed: int = 2) -> dict[str, dict[str, int]]:  # fmt: skip
    """The gate's two possible figures on simulated runs, without the CLI: the heuristic's verdicts on the embedded
    set (one run with no random calls), a share of each (case, epoch) verdict replaced by a uniform one; how many
    pairs fail with the figures on every epoch's verdict (what fcb compare does) and on the mode-reduced ones."""
    import numpy as np

    from harness.leaderboard.noise import POOLED, hierarchical_headline, holm, regression_p
    from harness.leaderboard.runs import read_run
    from harness.metrics import HEADLINE_METRICS

    run = read_run(evaluate(out / "rule", seed=0, share=0.0, epochs=1))
    y_true, rule = run.y_true, run.y_pred
    rng = np.random.default_rng(seed)

    def verdicts(p: float) -> np.ndarray:
        random = rng.random((len(y_true), epochs)) < p
        return np.where(random, rng.integers(0, 3, (len(y_true), epochs)), rule[:, None])

    def fails(base: np.ndarray, new: np.ndarray, reducer: str) -> bool:
        _, boot = hierarchical_headline(y_true, [base, new], reducers=[reducer] * 2, n_boot=n_boot, seed=0)
        pvalues = {}
        for name, higher_better in HEADLINE_METRICS.items():
            change = boot[name][1] - boot[name][0]
            if (
                np.any(change[np.isfinite(change)] != 0)
                and (p := regression_p(-change if higher_better else change)) is not None
            ):
                pvalues[name] = p
        return any(p < alpha for p in holm(pvalues).values())

    counts = {}
    for reducer in (POOLED, "mode"):
        same = sum(fails(verdicts(share), verdicts(share), reducer) for _ in range(pairs))
        moved = sum(fails(verdicts(share), verdicts(changed), reducer) for _ in range(change_pairs))
        counts[reducer] = {"same": same, "changed": moved}
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "gate")
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--change-pairs", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--simulate", action="store_true", help="simulated verdicts instead of runs (see simulate)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.simulate:
        counts = simulate(args.out, pairs=args.pairs, change_pairs=args.change_pairs, epochs=args.epochs,
                          n_boot=args.bootstrap, alpha=args.alpha)  # fmt: skip
        for reducer, c in counts.items():
            print(f"{reducer}: identical {c['same']} of {args.pairs} fail; changed {c['changed']} of "
                  f"{args.change_pairs} caught")  # fmt: skip
        return 0
    result = measure(args.out, pairs=args.pairs, change_pairs=args.change_pairs, epochs=args.epochs,
                     n_boot=args.bootstrap, alpha=args.alpha)  # fmt: skip
    (args.out / "gate.json").write_text(json.dumps(result, indent=2))
    same, moved = result["same"], result["changed"]
    print(f"identical code: fcb compare exited 1 in {same['exit_1']} of {len(same['pairs'])} pairs")
    print(f"30% -> 70% random: fcb compare exited 1 in {moved['exit_1']} of {len(moved['pairs'])} pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
