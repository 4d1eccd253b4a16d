"""A seeded generator of valid synthetic cases, for tests and benchmarks that need many cases of a known shape.

Every case is valid under the schema and the label scheme; its text is arithmetic about two random numbers.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from harness.types import CATEGORY_RISK

CATEGORIES = CATEGORY_RISK  # category -> expected risk, in the label scheme's order


def _correct_flags(category: str, n: int, rng: random.Random) -> list[bool]:
    if category == "lone_correct_dissenter":
        flags = [False] * (n - 1) + [True]
    elif CATEGORIES[category] == "high":
        flags = [False] * n
    elif category == "genuine_disagreement":
        flags = [True] * ((n * 3 - 1) // 5) + [False] * (n - (n * 3 - 1) // 5)  # under 60% correct
    else:
        flags = [True] * n
    rng.shuffle(flags)
    return flags


ORIGIN_TAGS = ("origin_natural", "origin_assembled", "origin_constructed")


def make_case(i: int, rng: random.Random, origins: bool = False) -> dict:
    """Case ``i``; with ``origins``, also an origin tag, cycling through `ORIGIN_TAGS` every 8 cases (one of
    each category), so that every origin holds every category. The tag draws nothing from ``rng``."""
    category = list(CATEGORIES)[i % len(CATEGORIES)]
    n = rng.randint(3, 8)
    a, b = rng.randint(2, 99), rng.randint(2, 99)
    truth = a * b
    flags = _correct_flags(category, n, rng)
    answers = []
    for k, ok in enumerate(flags):
        value = truth if ok else truth + (1 if category != "genuine_disagreement" else k + 1)
        answers.append(
            {
                "agent_id": f"agent-{rng.randint(100, 999)}-{k}",
                "text": f"I computed {a} times {b} and got {value}.",
                "correct": ok,
                "metadata": {
                    "model_family": rng.choice(["family-a", "family-b", "family-c"]),
                    "saw_other_answers": category == "echo_cascade" and k > 0,
                    "shared_context": category == "anchoring_injected_premise",
                },
            }
        )
    case = {
        "id": f"FCB-{i + 1:04d}",
        "category": category,
        "question": f"Case {i}: what is {a} times {b}?",
        "answers": answers,
        "ground_truth": str(truth),
        "expected_risk": CATEGORIES[category],
        "majority_correct": {"high": False, "low": True}.get(
            CATEGORIES[category], None if category == "genuine_disagreement" else True
        ),
        "rationale": "synthetic test case",
        "source": "original",
        "tags": ["arithmetic", f"group_{i % 3}"],
    }
    if origins:
        case["tags"].append(ORIGIN_TAGS[(i // len(CATEGORIES)) % len(ORIGIN_TAGS)])
    if i % 4 == 0:
        case["evidence"] = [f"{a} times {b} is {truth}."]
    return case


def write_cases(path: Path, n: int, seed: int = 7, origins: bool = False) -> Path:
    """Write ``n`` cases; ``origins`` adds an origin tag to each and changes nothing else."""
    rng = random.Random(seed)
    path.write_text("".join(json.dumps(make_case(i, rng, origins)) + "\n" for i in range(n)))
    return path
