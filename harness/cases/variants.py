"""The probes' variants of a request (``fcb eval --probe``): the same request with its answers in another order,
its agent ids renamed, or its evidence passages in another order; or its answers' text rewritten
(`harness.cases.rewrites`). Pure functions of the request and a seeded
generator: a variant holds exactly the request's fields, permuted or renamed, and nothing else of the case.

Each returns None where no variant differs from the request: one answer, or every answer's text the same (order);
fewer than two passages, or all the same (evidence-order). A variant is never the identity where another order
is possible: a random permutation that leaves the texts as they were is replaced by a rotation by one place, which
changes any sequence that is not constant.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import NamedTuple

from harness.cases.rewrites import REWRITES, Rewrite, style_of
from harness.types import Request

NEUTRAL_PREFIXES = ("member", "voice", "participant", "speaker")
"""Fresh agent ids are PREFIX-K for the first of these that begins none of the request's own ids."""

Variant = tuple[Request, list[int] | None]
"""A variant request and, for an order variant, the request's index of each answer (passage) in the order sent."""


def _reordering(values: Sequence[str], rng: random.Random) -> list[int] | None:
    """A permutation of ``values``' indices that changes the sequence, or None when none can (all the same)."""
    if len(set(values)) < 2:
        return None
    order = list(range(len(values)))
    rng.shuffle(order)
    if [values[i] for i in order] == list(values):
        order = [*range(1, len(values)), 0]  # a rotation: a non-constant sequence never equals its own rotation
    return order


def order_variant(request: Request, rng: random.Random) -> Variant | None:
    """The answers in another order (ids travel with their texts)."""
    answers = request["answers"]
    order = _reordering([a["text"] for a in answers], rng)
    if order is None:
        return None
    variant: Request = {**request, "answers": [answers[i] for i in order]}
    return variant, order


def evidence_variant(request: Request, rng: random.Random) -> Variant | None:
    """The evidence passages in another order; None for fewer than two passages."""
    passages = request.get("evidence") or []
    order = _reordering(passages, rng)
    if order is None:
        return None
    variant: Request = {**request, "evidence": [passages[i] for i in order]}
    return variant, order


def names_variant(request: Request, rng: random.Random) -> Variant | None:
    """Every agent id replaced by a fresh neutral one (PREFIX-1..n, assigned in a random order), consistently: an
    answer keeps its place and text. None only when there is no answer."""
    answers = request["answers"]
    if not answers:
        return None
    own = [a["agent_id"] for a in answers]
    prefix = next((p for p in NEUTRAL_PREFIXES if not any(i.startswith(p) for i in own)), "agent-renamed")
    numbers = list(range(1, len(answers) + 1))
    rng.shuffle(numbers)
    variant: Request = {
        **request,
        "answers": [{"agent_id": f"{prefix}-{numbers[j]}", "text": a["text"]} for j, a in enumerate(answers)],
    }
    return variant, None


VARIANTS: dict[str, Callable[[Request, random.Random], Variant | None]] = {
    "order": order_variant,
    "names": names_variant,
    "evidence-order": evidence_variant,
}
"""The probes that reorder or rename, and the function that derives each one's variant; the probes that rewrite the
answers' text are in `harness.cases.rewrites`."""


class Derived(NamedTuple):
    """A probe's variant of a request, and what was done to make it: a permutation (order, evidence-order) or a
    `Rewrite` (the probes of `harness.cases.rewrites`), journaled with the item."""

    request: Request
    permutation: list[int] | None = None
    rewrite: Rewrite | None = None


def variant_rng(seed: int, probe: str, case_id: str, epoch: int) -> random.Random:
    """The generator of one item's variant: the same item gets the same variant in a resumed run, and each epoch
    its own."""
    return random.Random(f"probe:{seed}:{probe}:{epoch}:{case_id}")


def derive(request: Request, probe: str, seed: int, case_id: str, epoch: int) -> Derived | None:
    """The variant of ``request`` that probe ``probe`` asks for the item (case, epoch); None where none differs."""
    rng = variant_rng(seed, probe, case_id, epoch)
    if probe in REWRITES:
        rewritten = REWRITES[probe](request, rng, style_of(seed, probe, case_id))
        return None if rewritten is None else Derived(rewritten[0], rewrite=rewritten[1])
    variant = VARIANTS[probe](request, rng)
    return None if variant is None else Derived(*variant)
