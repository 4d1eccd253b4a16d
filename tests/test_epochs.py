"""The epoch reducer (`harness.epochs`): one outcome a case from its epochs, by the rules the module states."""

from __future__ import annotations

import pytest

from harness.epochs import reduce_items
from harness.types import Outcome


def out(case: str, epoch: int, risk: str | None, score: float | None = None, variant: str | None = None,
        attempts: int = 1) -> Outcome:  # fmt: skip
    kind = None if risk is not None else "timeout"
    return Outcome(case, "h", risk, score, kind, attempts, 0.5, error_message="slow" if kind else None,  # type: ignore[arg-type]
                   epoch=epoch, variant=variant)  # fmt: skip


def test_mode_takes_the_most_frequent_verdict_and_the_mean_score() -> None:
    items = [out("A", 1, "low", 0.2), out("A", 2, "high", 0.9), out("A", 3, "high", 0.7)]
    reduced = reduce_items(items)["A"]
    assert reduced.risk == "high"
    assert reduced.score == pytest.approx((0.2 + 0.9 + 0.7) / 3)  # all epochs' scores, not only the winners'
    assert (reduced.epoch, reduced.attempts, reduced.latency_s) == (0, 3, 1.5)


def test_a_tie_goes_to_the_earliest_epoch_s_verdict_whatever_the_order_given() -> None:
    # epochs 1..4: medium, high, high, medium -> 2 each; epoch 1 said medium
    items = [out("A", 4, "medium"), out("A", 2, "high"), out("A", 3, "high"), out("A", 1, "medium")]
    assert reduce_items(items)["A"].risk == "medium"
    items = [out("B", 1, "high"), out("B", 2, "low")]
    assert reduce_items(items)["B"].risk == "high"


def test_an_errored_epoch_is_left_out_of_the_vote_and_of_the_score() -> None:
    # errors 1 and 2 would outvote one answer if counted; the tie rule counts from the earliest answering epoch
    items = [out("A", 1, None), out("A", 2, None), out("A", 3, "low", 0.1)]
    reduced = reduce_items(items)["A"]
    assert (reduced.risk, reduced.score, reduced.error_kind, reduced.error_message) == ("low", 0.1, None, None)


def test_a_case_whose_epochs_all_errored_is_an_error() -> None:
    reduced = reduce_items([out("A", 2, None, attempts=3), out("A", 1, None, attempts=2)])["A"]
    assert (reduced.risk, reduced.error_kind, reduced.attempts) == (None, "timeout", 5)


def test_first_keeps_epoch_one_as_it_is_even_an_error() -> None:
    items = [out("A", 2, "high", 0.9), out("A", 1, "low", 0.3), out("A", 3, "high", 0.8), out("B", 1, None),
             out("B", 2, "low")]  # fmt: skip
    reduced = reduce_items(items, "first")
    assert (reduced["A"].risk, reduced["A"].score) == ("low", 0.3)
    assert (reduced["B"].risk, reduced["B"].error_kind) == (None, "timeout")


def test_variants_never_reach_the_reduced_outcome_and_one_epoch_is_kept_unchanged() -> None:
    plain = out("A", 1, "low", 0.3)
    items = [plain, out("A", 1, "high", 0.9, variant="order"), out("A", 1, "high", 0.9, variant="names")]
    assert reduce_items(items) == {"A": plain}


def test_an_unknown_reducer_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown epoch reducer 'mean'"):
        reduce_items([out("A", 1, "low")], "mean")


def test_a_reduced_outcome_sums_tokens_and_is_cached_only_when_every_epoch_was() -> None:
    def spent(epoch: int, prompt: int, completion: int, cached: bool, estimated: int = 0) -> Outcome:
        return Outcome("A", "h", "low", None, None, 1, 0.5, prompt_tokens=prompt, completion_tokens=completion,
                       cached=cached, epoch=epoch, estimated_tokens=estimated)  # fmt: skip

    for reducer in ("mode", "first"):
        mixed = reduce_items([spent(1, 10, 3, True, 4), spent(2, 20, 5, False, 7)], reducer)["A"]
        # 10 + 20 prompt and 3 + 5 completion tokens, 4 + 7 of them counted at their most; one epoch asked the
        # detector, so the case was not all replayed
        assert (mixed.prompt_tokens, mixed.completion_tokens, mixed.cached) == (30, 8, False)
        assert mixed.estimated_tokens == 11
        replayed = reduce_items([spent(1, 10, 3, True), spent(2, 20, 5, True)], reducer)["A"]
        assert replayed.cached is True


def test_an_unknown_reducer_is_refused_with_the_ones_there_are() -> None:
    with pytest.raises(ValueError, match=r"unknown epoch reducer 'median'; one of mode, first$"):
        reduce_items([out("A", 1, "low")], "median")
