"""``fcb threshold DEV_RUN --miss-rate A``: a threshold on risk_score chosen on a dev run, with a promise on the share
of false consensus it misses on new cases (`harness.threshold`); ``fcb eval --threshold FILE`` checks it on a run."""

from __future__ import annotations

import argparse

from harness.cli.common import EXIT_OK
from harness.cli.options import fraction
from harness.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "threshold", help="choose a risk_score threshold on a dev run that keeps missed false consensus under a target"
    )
    p.add_argument("dev_run", metavar="DEV_RUN", help="a finished run folder on dev cases (labels from the same "
                   "population as the cases the threshold will serve)")  # fmt: skip
    p.add_argument("--miss-rate", type=fraction, required=True, metavar="A",
                   help="the largest share of false consensus (labelled high) the threshold may miss")  # fmt: skip
    p.add_argument("--confidence", type=fraction, default=0.9, metavar="C",
                   help="the probability that the promise holds over dev sets (default 0.9)")  # fmt: skip
    p.add_argument("--in-expectation", action="store_true",
                   help="promise the miss rate on average instead (conformal risk control): a lower threshold, a "
                   "weaker promise")  # fmt: skip
    p.add_argument("--out", metavar="FILE", help="where to write the threshold (default DEV_RUN/threshold.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np
    import orjson

    from harness.files import atomic_write
    from harness.leaderboard.runs import read_run
    from harness.threshold import calibrate

    if not 0 < args.miss_rate < 1:
        raise UsageError(f"--miss-rate {args.miss_rate}: a share between 0 and 1 (exclusive)")
    if not 0 < args.confidence < 1:
        raise UsageError(f"--confidence {args.confidence}: a probability between 0 and 1 (exclusive)")
    dev = read_run(args.dev_run)
    if dev.scores is None:
        raise UsageError(f"{args.dev_run}: a baseline file keeps no scores; give the run folder")
    scored = bool(np.isfinite(dev.scores).any())
    scores = dev.scores if scored else np.where(dev.y_pred < 3, dev.y_pred.astype(float), np.nan)
    doc = calibrate(
        dev.y_true, scores, target=args.miss_rate, method="expected" if args.in_expectation else "probable",
        confidence=args.confidence, basis="risk_score" if scored else "verdict", run=str(args.dev_run),
        dataset=dev.dataset["name"], sha256=dev.sha256, detector=dev.detector, fingerprint=dev.fingerprint_id,
    )  # fmt: skip
    out = args.out or str(dev.path / "threshold.json")
    atomic_write(out, orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    d = doc["dev"]
    print(f"{doc['promise']}.\nOn the dev run: {d['escalated']} of {d['n_cases']} cases escalated "
          f"({d['escalation_rate']:.1%}), {d['missed']} of {d['n_false_consensus']} false consensus missed.\n"
          f"threshold: {out}")  # fmt: skip
    return EXIT_OK
