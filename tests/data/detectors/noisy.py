"""A detector that answers at random on a share of its calls, for the noise-aware gate (`fcb compare` of runs with
``--epochs``) and its measurement (benchmarks/gate.py).

Otherwise it gives `builtin:heuristic`'s verdict and score. Each call draws from its own generator, seeded by
(``FCB_NOISY_SEED``, the request's digest, how many times this process was already asked that request), so a run
(``--concurrency 1``) is reproducible, the epochs of a case differ, and two runs with other seeds differ.
``FCB_NOISY_SHARE`` (default 0.3) is the share of calls answered at random: a uniform verdict and a uniform score.
"""

import hashlib
import json
import os
import random
import threading

from harness.detectors.heuristic import features, rule

RISKS = ("low", "medium", "high")
_asked: dict[str, int] = {}
_lock = threading.Lock()


def assess(request: dict) -> dict:
    digest = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
    with _lock:
        count = _asked.get(digest, 0)
        _asked[digest] = count + 1
    rng = random.Random(f"{os.environ.get('FCB_NOISY_SEED', '0')}:{digest}:{count}")
    if rng.random() < float(os.environ.get("FCB_NOISY_SHARE", "0.3")):
        return {"false_consensus_risk": rng.choice(RISKS), "risk_score": round(rng.random(), 4)}
    risk, score, _ = rule(features(request))
    return {"false_consensus_risk": risk, "risk_score": round(score, 4)}
