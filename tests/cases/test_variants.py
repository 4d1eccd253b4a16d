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
