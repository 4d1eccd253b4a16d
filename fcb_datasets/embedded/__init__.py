"""The embedded false-consensus benchmark: original cases built from fact tables and templates.

Every case is written by this package (``"source": "original"``); no text comes from an external data set.
A seeded ``random.Random`` picks the questions, panel sizes, phrasings and provenance metadata, so the same seed
always yields byte-identical output.  Arithmetic, date and code answers are computed here, never typed in.

Label scheme (checked for every case before it is emitted):

* ``majority_correct`` is true when at least 60% of answers are correct, false when one wrong answer is held
  by at least 60%, and null when no single answer reaches 60%.
* High risk (a wrong answer is the consensus): majority_wrong_fact, echo_cascade, anchoring_injected_premise,
  lone_correct_dissenter, numeric_consensus_error.  Low: genuine_agreement_correct.  Medium:
  genuine_disagreement (no consensus) and correct_but_unsupported (right, but nothing independent behind it).

The set is a smoke test and a demonstration of every label edge, not a measure of a detector's quality; it is built
so that its surface (answer counts, agent order, wording, the shape of a panel) says nothing of a case's risk, and
passes ``fcb audit-dataset harness/data/embedded_cases.jsonl --split-by source-item`` (``plans`` says how).

Modules (this one holds the entry points, ``generate``, ``write`` and ``main``, and the balance of categories):
- ``questions``: the Question (its text, its truth, plausible wrong answers) and the matching rule
- ``facts``: the fact tables
- ``computed``: the questions whose answers are computed
- ``wording``: the answer templates and notes, each construct in several families shared by every category
- ``plans``: who answers what, in which mode, for each category (its framings)
- ``assembly``: panel sizes, agent order, provenance metadata, rendering and labels
- ``__main__``: ``python -m fcb_datasets.embedded``

Run ``python -m fcb_datasets.embedded [--out PATH] [--seed N]`` to regenerate the shipped JSONL file.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from fcb_datasets.embedded.assembly import SIZES_PER_CATEGORY, Deck, assemble, category_slots
from fcb_datasets.embedded.computed import NON_NUMERIC_GENERATORS, NUMERIC_GENERATORS, draw_question
from fcb_datasets.embedded.facts import FACT_QUESTIONS, check_fact_tables
from fcb_datasets.embedded.plans import BUILDERS

DEFAULT_SEED = 20261130
CASES_PER_CATEGORY = len(SIZES_PER_CATEGORY)  # 30
MINIMUM_ANSWERS = {"lone_correct_dissenter": 3}  # one right against at least 60% wrong
# where harness ships it (package data): found by name, so a checkout and an installed wheel both resolve it
DEFAULT_OUT = Path(str(resources.files("harness") / "data" / "embedded_cases.jsonl"))


def generate(seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """All embedded cases for ``seed``, in id order; the same seed always gives the same cases."""
    check_fact_tables()
    rng = random.Random(seed)
    facts = Deck(rng, FACT_QUESTIONS)
    computed = Deck(rng, (*NUMERIC_GENERATORS, *NON_NUMERIC_GENERATORS))
    numeric = Deck(rng, NUMERIC_GENERATORS)
    slots = {c: category_slots(rng, MINIMUM_ANSWERS.get(c, 2)) for c in BUILDERS}
    plan = [c for c in BUILDERS for _ in range(CASES_PER_CATEGORY)]
    rng.shuffle(plan)  # interleave categories so that ids reveal nothing
    cases = []
    for number, category in enumerate(plan, start=1):
        builder, source = BUILDERS[category]
        if source == "mixed":
            source = "fact" if rng.random() < 0.5 else "computed"
        item = (
            facts.deal()
            if source == "fact"
            else draw_question(rng, (numeric if source == "numeric" else computed).deal())
        )
        draft = builder(rng, item, slots[category].pop())
        cases.append(assemble(rng, number, category, item, draft))
    return cases


def dumps(case: dict[str, Any]) -> str:
    """One compact, ASCII-only JSON line; key order is the insertion order fixed by ``assemble``."""
    return json.dumps(case, ensure_ascii=True, separators=(",", ":"))


def write(path: Path | str = DEFAULT_OUT, seed: int = DEFAULT_SEED) -> int:
    """Write the cases for ``seed`` to ``path`` as JSONL and return how many were written."""
    cases = generate(seed)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(dumps(case) + "\n" for case in cases)
    return len(cases)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fcb_datasets.embedded", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output JSONL (default: {DEFAULT_OUT})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default: {DEFAULT_SEED})")
    args = parser.parse_args(argv)
    count = write(args.out, args.seed)
    print(f"wrote {count} cases to {args.out}")
    return 0
