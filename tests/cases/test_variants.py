"""The probes' variants (`harness.cases.variants`): the same fields of the request, permuted or renamed, never the
identity where another order exists, the same variant for the same item, and none where none can differ."""

from __future__ import annotations

import random
from itertools import permutations

import pytest

from harness.cases.variants import derive, evidence_variant, names_variant, order_variant
from harness.types import Request


def request(*texts: str, ids: tuple[str, ...] | None = None, evidence: list[str] | None = None) -> Request:
    ids = ids or tuple(f"a{i}" for i in range(len(texts)))
    req: Request = {"task": "Q?", "answers": [{"agent_id": i, "text": t} for i, t in zip(ids, texts, strict=True)]}
    if evidence is not None:
        req["evidence"] = evidence
    return req


@pytest.mark.parametrize("seed", range(40))
def test_an_order_variant_permutes_the_answers_and_never_leaves_the_texts_as_they_were(seed: int) -> None:
    req = request("x", "x", "y")  # two of the six orders leave the texts as they are: x, x, y
    variant = order_variant(req, random.Random(seed))
    assert variant is not None
    new, perm = variant
    assert perm is not None and sorted(perm) == [0, 1, 2]
    assert new["answers"] == [req["answers"][i] for i in perm]  # ids travel with their texts
    assert [a["text"] for a in new["answers"]] != ["x", "x", "y"]
    assert set(new) == {"task", "answers"} and new["task"] == "Q?"


def test_the_fallback_rotation_changes_every_sequence_that_is_not_constant() -> None:
    # a generator whose shuffle leaves the list as it is: the variant must still differ
    class Still(random.Random):
        def shuffle(self, x: list) -> None:  # type: ignore[override]
            return None

    for texts in [("a", "b"), ("a", "a", "b"), ("a", "b", "a", "b"), ("b", "a", "a")]:
        variant = order_variant(request(*texts), Still())
        assert variant is not None
        assert [a["text"] for a in variant[0]["answers"]] != list(texts)


def test_no_order_variant_when_every_answer_says_the_same_or_there_is_one() -> None:
    assert order_variant(request("same", "same", "same"), random.Random(1)) is None
    assert order_variant(request("alone"), random.Random(1)) is None


def test_every_order_is_reached_over_seeds() -> None:
    texts = ("a", "b", "c")
    seen = {tuple(a["text"] for a in order_variant(request(*texts), random.Random(s))[0]["answers"])  # type: ignore[index]
            for s in range(300)}  # fmt: skip
    assert seen == set(permutations(texts)) - {texts}


def test_a_names_variant_renames_every_id_consistently_and_keeps_places_and_texts() -> None:
    req = request("p", "q", "r", ids=("alice", "bob", "carol"), evidence=["e1"])
    new, perm = names_variant(req, random.Random(3))  # type: ignore[misc]
    assert perm is None
    ids = [a["agent_id"] for a in new["answers"]]
    assert sorted(ids) == ["member-1", "member-2", "member-3"]
    assert [a["text"] for a in new["answers"]] == ["p", "q", "r"]
    assert new["evidence"] == ["e1"] and new["task"] == "Q?"
    assert not set(ids) & {"alice", "bob", "carol"}


def test_names_take_a_prefix_none_of_the_request_s_ids_begins_with() -> None:
    req = request("p", "q", ids=("member-1", "member-2"))
    new, _ = names_variant(req, random.Random(0))  # type: ignore[misc]
    assert all(a["agent_id"].startswith("voice-") for a in new["answers"])


def test_an_evidence_order_variant_needs_two_different_passages() -> None:
    assert evidence_variant(request("a", "b"), random.Random(0)) is None
    assert evidence_variant(request("a", "b", evidence=["only"]), random.Random(0)) is None
    assert evidence_variant(request("a", "b", evidence=["same", "same"]), random.Random(0)) is None
    new, perm = evidence_variant(request("a", "b", evidence=["e1", "e2"]), random.Random(0))  # type: ignore[misc]
    assert new["evidence"] == ["e2", "e1"] and perm == [1, 0]  # two passages: one other order
    assert new["answers"] == request("a", "b")["answers"]


def test_the_same_item_gets_the_same_variant_and_another_epoch_its_own() -> None:
    req = request(*"abcdefgh")
    first = derive(req, "order", 5, "FCB-1", 1)
    assert first == derive(req, "order", 5, "FCB-1", 1)
    others = {tuple(derive(req, "order", 5, "FCB-1", e)[1]) for e in range(2, 8)}  # type: ignore[index,arg-type]
    assert len(others | {tuple(first[1])}) > 1  # type: ignore[index,arg-type]
    assert derive(req, "order", 6, "FCB-1", 1) != first  # another --probe-seed, another order (8! orders)


def test_a_variant_never_changes_the_request_it_came_from() -> None:
    req = request("a", "b", "c", evidence=["e1", "e2"])
    before = repr(req)
    for probe in ("order", "names", "evidence-order"):
        derive(req, probe, 0, "X", 1)
    assert repr(req) == before


def test_names_fall_back_to_agent_renamed_when_every_neutral_prefix_is_taken() -> None:
    # each of the four neutral prefixes begins one of the ids: none is free
    req = request("p", "q", "r", "s", ids=("member-1", "voice-x", "participant", "speaker-7"))
    new, perm = names_variant(req, random.Random(2))  # type: ignore[misc]
    assert perm is None
    ids = [a["agent_id"] for a in new["answers"]]
    assert sorted(ids) == ["agent-renamed-1", "agent-renamed-2", "agent-renamed-3", "agent-renamed-4"]
    assert [a["text"] for a in new["answers"]] == ["p", "q", "r", "s"]


@pytest.mark.parametrize(
    ("ids", "prefix"),
    [
        (("member-1", "voice-2", "x"), "participant"),  # the first two taken: the third
        (("participant-1", "voice-2", "member-3"), "speaker"),  # the first three taken (in any order): the fourth
        (("speakerX", "a", "b"), "member"),  # a later prefix taken does not move the choice off the first
    ],
)
def test_names_take_the_first_free_neutral_prefix(ids: tuple[str, ...], prefix: str) -> None:
    new, _ = names_variant(request("p", "q", "r", ids=ids), random.Random(0))  # type: ignore[misc]
    assert sorted(a["agent_id"] for a in new["answers"]) == [f"{prefix}-1", f"{prefix}-2", f"{prefix}-3"]


def test_names_are_numbered_in_the_generator_s_shuffled_order() -> None:
    req = request(*"abcdef", ids=tuple("uvwxyz"))
    new, _ = names_variant(req, random.Random(11))  # type: ignore[misc]
    numbers = [1, 2, 3, 4, 5, 6]
    random.Random(11).shuffle(numbers)  # the same draw, made here: answer j gets member-numbers[j]
    assert [a["agent_id"] for a in new["answers"]] == [f"member-{k}" for k in numbers]


def test_a_variant_depends_on_the_probe_and_on_the_case() -> None:
    # the same eight texts as answers and as passages: an order generator that ignored the probe's name would
    # permute both alike (two equal permutations by chance: 1 in 8! - 1)
    texts = list("abcdefgh")
    req = request(*texts, evidence=texts)
    by_answers = derive(req, "order", 5, "FCB-1", 1)
    by_passages = derive(req, "evidence-order", 5, "FCB-1", 1)
    assert by_answers is not None and by_passages is not None
    assert by_answers[1] != by_passages[1]
    # another case, the same seed, probe and epoch: another order
    other_case = derive(req, "order", 5, "FCB-2", 1)
    assert other_case is not None and other_case[1] != by_answers[1]


def test_derive_draws_from_the_item_s_own_seeded_generator() -> None:
    # the documented key of an item's generator: seed, probe, epoch and case
    req = request(*"abcdefgh")
    expected = order_variant(req, random.Random("probe:5:order:3:FCB-9"))
    assert expected is not None
    assert derive(req, "order", 5, "FCB-9", 3) == (*expected, None)  # a reordering: a permutation, no rewrite


# --- the probes that rewrite answers, through derive ----------------------------------------------------------------


def test_derive_hands_a_rewriting_probe_the_item_s_generator_and_the_case_s_style() -> None:
    from harness.cases.rewrites import INJECTIONS, inject_variant, style_of

    req = request("It is 4.", "It is 4.", "It is 5.")
    for epoch in (1, 2, 3):
        got = derive(req, "inject", 7, "FCB-3", epoch)
        assert got is not None
        style = style_of(7, "inject", "FCB-3")  # the case's template: drawn from the seed and the case alone
        assert style in INJECTIONS
        expected = inject_variant(req, random.Random(f"probe:7:inject:{epoch}:FCB-3"), style)
        assert expected is not None
        assert got == (expected[0], None, expected[1])  # a rewrite, no permutation
        assert got.rewrite is not None and got.rewrite["kind"] == style  # the same template in every epoch
    # the request is the one rewritten: its other answers and task as they were
    got = derive(req, "inject", 7, "FCB-3", 1)
    assert got is not None and got.request["task"] == "Q?" and len(got.request["answers"]) == 3
    assert sum(a != b for a, b in zip(req["answers"], got.request["answers"], strict=True)) == 1


def test_derive_is_none_where_a_rewriting_probe_has_no_variant() -> None:
    # no two answers share a final value: no majority to duplicate
    assert derive(request("It is 4.", "It is 5."), "duplicate", 0, "X", 1) is None
    assert derive(request("It is 4.", "It is 4."), "duplicate", 0, "X", 1) is not None


def test_derive_tells_the_probes_apart_by_name() -> None:
    req = request("It is 4.", "It is 4.")
    tone, length = derive(req, "tone", 0, "X", 1), derive(req, "length", 0, "X", 1)
    assert tone is not None and length is not None
    assert tone.rewrite is not None and tone.rewrite["kind"] in ("confident", "hedging")
    assert length.rewrite == {"kind": "filler", "answers": [0, 1]}


def test_derive_is_none_where_a_reordering_probe_has_no_variant() -> None:
    assert derive(request("same", "same"), "order", 0, "X", 1) is None
    assert derive(request("a", "b", evidence=["only"]), "evidence-order", 0, "X", 1) is None
