"""A seeded generator of valid synthetic cases, for tests and benchmarks that need many cases of a known shape.

Every case is valid under the schema and the label scheme; its text is arithmetic about two random numbers.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from harness.types import CATEGORIES, CATEGORY_RISK


def _correct_flags(category: str, n: int, rng: random.Random) -> list[bool]:
    if category == "lone_correct_dissenter":
        flags = [False] * (n - 1) + [True]
    elif CATEGORY_RISK[category] == "high":
        flags = [False] * n
    elif category == "genuine_disagreement":
        flags = [True] * ((n * 3 - 1) // 5) + [False] * (n - (n * 3 - 1) // 5)  # under 60% correct
    else:
        flags = [True] * n
    rng.shuffle(flags)
    return flags


ORIGIN_TAGS = ("origin_natural", "origin_assembled", "origin_constructed")


def make_case(i: int, rng: random.Random, origins: bool = False) -> dict[str, Any]:
    """Case ``i``; with ``origins``, also an origin tag, cycling through `ORIGIN_TAGS` every 8 cases (one of
    each category), so that every origin holds every category. The tag draws nothing from ``rng``."""
    category = CATEGORIES[i % len(CATEGORIES)]
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
    tags = ["arithmetic", f"group_{i % 3}"]
    if origins:
        tags.append(ORIGIN_TAGS[(i // len(CATEGORIES)) % len(ORIGIN_TAGS)])
    case: dict[str, Any] = {
        "id": f"FCB-{i + 1:04d}",
        "category": category,
        "question": f"Case {i}: what is {a} times {b}?",
        "answers": answers,
        "ground_truth": str(truth),
        "expected_risk": CATEGORY_RISK[category],
        "majority_correct": {"high": False, "low": True}.get(
            CATEGORY_RISK[category], None if category == "genuine_disagreement" else True
        ),
        "rationale": "synthetic test case",
        "source": "original",
        "tags": tags,
    }
    if i % 4 == 0:
        case["evidence"] = [f"{a} times {b} is {truth}."]
    return case


def write_cases(path: Path, n: int, seed: int = 7, origins: bool = False) -> Path:
    """Write ``n`` cases; ``origins`` adds an origin tag to each and changes nothing else."""
    rng = random.Random(seed)
    path.write_text("".join(json.dumps(make_case(i, rng, origins)) + "\n" for i in range(n)))
    return path


_OPENERS = ("Step by step:", "Agreed:", "Checked twice:", "I think")


def make_realistic_case(i: int, rng: random.Random) -> dict[str, Any]:
    """Case ``i`` shaped like the real-data benchmark's: 3 to 6 answers of a sentence each, about 890 bytes."""
    case = make_case(i, rng)
    n = rng.randint(3, 6)
    flags = _correct_flags(case["category"], n, rng)
    a, b = rng.randint(12, 99), rng.randint(12, 99)
    truth = a * b
    case["question"] = f"A shop packs {a} boxes of {b} items (order {i}). How many items are packed?"
    answers = []
    for k, ok in enumerate(flags):
        value = truth if ok else truth + (1 if case["category"] != "genuine_disagreement" else k + 1)
        opener = _OPENERS[rng.randrange(len(_OPENERS))]
        text = f"{opener} {a} boxes times {b} items gives {value}. Answer: {value}."
        metadata: dict[str, Any] = {"model_family": rng.choice(["family-a", "family-b"])} if k == 0 else {}
        if case["category"] == "echo_cascade" and k > 0:
            metadata["saw_other_answers"] = True
        if case["category"] == "anchoring_injected_premise":
            metadata["shared_context"] = True
        answers.append({"agent_id": f"agent-{k + 1}", "text": text, "correct": ok, "metadata": metadata})
    case["answers"] = answers
    case["ground_truth"] = str(truth)
    case["rationale"] = f"{sum(flags)} of {n} answers are right."
    if i % 3 == 0:
        case["evidence"] = [f"Each of the {a} boxes holds {b} items."]
    else:
        case.pop("evidence", None)
    return case


def write_realistic_cases(path: Path, n: int, seed: int = 7) -> Path:
    """Write ``n`` cases shaped like real ones (`make_realistic_case`), one compact JSON object a line."""
    rng = random.Random(seed)
    lines = (json.dumps(make_realistic_case(i, rng), separators=(",", ":")) + "\n" for i in range(n))
    path.write_text("".join(lines))
    return path
