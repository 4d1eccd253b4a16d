"""One verdict a case from the items of a run with ``--epochs N``: the reducer (``--epoch-reducer``), a pure function.

The rules, as docs/reports.md states them:

- Only the items of the request as it is (``variant`` None) are reduced; a probe's variants never reach the headline.
- ``first``: the case's outcome is its lowest epoch's outcome as it is, verdict, score and error alike, so that the
  headline equals that of a one-epoch run made of epoch 1.
- ``mode`` (the default): the most frequent verdict among the epochs that answered; an errored epoch is left out of
  the vote. A tie goes to the tied verdict that the earliest answering epoch gave. The score is the mean of the
  answering epochs' scores (of those that gave one; None when none did). A case whose epochs all errored is an
  error: the lowest epoch's error.
- A case with one epoch keeps its outcome unchanged. A reduced outcome of several epochs has ``epoch`` 0 and sums
  the epochs' attempts, latency and tokens; it is cached only when every epoch was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from harness.types import REDUCERS, Outcome

DEFAULT_REDUCER = "mode"


def epochs_by_case(items: Iterable[Outcome]) -> dict[str, list[Outcome]]:
    """The plain items (no variant) of each case, in epoch order."""
    cases: dict[str, list[Outcome]] = {}
    for o in items:
        if o.variant is None:
            cases.setdefault(o.case_id, []).append(o)
    for outs in cases.values():
        outs.sort(key=lambda o: o.epoch)
    return cases


def reduce_items(items: Iterable[Outcome], reducer: str = DEFAULT_REDUCER) -> dict[str, Outcome]:
    """One outcome a case, by case id, from a run's items (`harness.runfolder.journal.read_items` values)."""
    if reducer not in REDUCERS:
        raise ValueError(f"unknown epoch reducer {reducer!r}; one of {', '.join(REDUCERS)}")
    return {case_id: reduce_case(outs, reducer) for case_id, outs in epochs_by_case(items).items()}


def reduce_case(epochs: list[Outcome], reducer: str) -> Outcome:
    """One case's outcome from its plain items in epoch order (see the module's rules)."""
    if len(epochs) == 1:
        return epochs[0]
    first = epochs[0]
    if reducer == "first":
        return _totals(first, epochs)
    answered = [o for o in epochs if o.risk is not None]
    if not answered:
        return _totals(first, epochs)  # every epoch errored: the lowest epoch's error
    votes = Counter(o.risk for o in answered)
    top = max(votes.values())
    risk = next(o.risk for o in answered if votes[o.risk] == top)  # the earliest epoch among the tied verdicts
    scores = [o.score for o in answered if o.score is not None]
    score = sum(scores) / len(scores) if scores else None
    return replace(_totals(first, epochs), risk=risk, score=score, error_kind=None, error_message=None)


def _totals(base: Outcome, epochs: list[Outcome]) -> Outcome:
    return replace(
        base,
        epoch=0,
        attempts=sum(o.attempts for o in epochs),
        latency_s=sum(o.latency_s for o in epochs),
        prompt_tokens=sum(o.prompt_tokens for o in epochs),
        completion_tokens=sum(o.completion_tokens for o in epochs),
        estimated_tokens=sum(o.estimated_tokens for o in epochs),
        cached=all(o.cached for o in epochs),
    )
