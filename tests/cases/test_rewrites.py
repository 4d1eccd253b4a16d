"""The probes that rewrite the answers' text (`harness.cases.rewrites`): each one's stated properties, checked on
hand-written answers and over the embedded cases, its determinism, and the journal's check of the ``rewrite`` field
a variant's line carries. Every expected value here is worked out by hand from the probe's documented rule."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from typing import Any

import pytest
from conftest import EMBEDDED

from harness.cases.request import build_request
from harness.cases.rewrites import (
    CONFIDENT,
    DUPLICATES,
    FILLER,
    FORMATS,
    HEDGING,
    INJECTIONS,
    MAX_ANSWERS,
    MAX_TEXT,
    REWRITES,
    STYLES,
    TONES,
    duplicate_variant,
    format_variant,
    fresh_id,
    inject_variant,
    length_variant,
    majority,
    restate_variant,
    style_of,
    tone_variant,
)
from harness.cases.variants import derive
from harness.final_answer import final_value
from harness.runfolder.journal import record, record_problem
from harness.types import Prediction, Request
from tests.runfolder.test_journal import labels

CASES = [json.loads(line) for line in EMBEDDED.read_text().splitlines() if line.strip()]
REQUESTS = [(case["id"], build_request(case)) for case in CASES]
EPOCHS = (1, 2)


def request(*texts: str, ids: tuple[str, ...] | None = None) -> Request:
    ids = ids or tuple(f"agent-{i}" for i in range(1, len(texts) + 1))
    return {"task": "Q?", "answers": [{"agent_id": i, "text": t} for i, t in zip(ids, texts, strict=True)]}


def texts(req: Request) -> list[str]:
    return [a["text"] for a in req["answers"]]


def key(text: str) -> str | None:
    value = final_value(text)
    return None if value is None else value.key


def variants(probe: str) -> list[tuple[str, Request, Request, dict[str, Any]]]:
    """(case id, request, variant, rewrite) of every embedded case that has a variant of ``probe``, epochs 1 and 2."""
    found = []
    for case_id, req in REQUESTS:
        for epoch in EPOCHS:
            derived = derive(req, probe, 0, case_id, epoch)
            if derived is not None:
                assert derived.permutation is None and derived.rewrite is not None
                found.append((case_id, req, derived.request, derived.rewrite))
    return found


# Hand-written answers for format and restate: thousands separators, a box, lists, blank lines, sentences.
HAND = (
    "We counted 12,500 apples in total.",
    "The population grew to 1234567 by 2020.",
    "Multiply 6 by 7.\n\n\\boxed{42}",
    "Steps:\n- add 2\n- add 3\n\nThe answer is 5.",
    "1. Start with 10.\n2. Double it.\n\n\nFinal answer: 20",
    "* first point\n* second point\n\nSo it is 7.",
    "Answer: Paris. It is the capital.",
    "The value of pi is about 3.14159, so 12500.5 rounds up.",
)


# ------------------------------------------------------------------ determinism


@pytest.mark.parametrize("probe", list(REWRITES))
def test_the_same_item_gets_the_same_variant(probe: str) -> None:
    for case_id, req in REQUESTS[::7]:
        for epoch in EPOCHS:
            assert derive(req, probe, 3, case_id, epoch) == derive(req, probe, 3, case_id, epoch)
    for seed in range(5):
        req = request(*HAND)
        assert REWRITES[probe](req, random.Random(seed), None) == REWRITES[probe](req, random.Random(seed), None)


@pytest.mark.parametrize("probe", ["tone", "inject"])
def test_a_case_follows_one_style_in_every_epoch_drawn_from_the_seed_and_case_alone(probe: str) -> None:
    drawn = Counter()
    for case_id, req in REQUESTS:
        style = style_of(0, probe, case_id)
        assert style in STYLES[probe]
        assert style == style_of(0, probe, case_id)
        kinds = {d.rewrite["kind"] for e in (1, 2, 3) if (d := derive(req, probe, 0, case_id, e)) and d.rewrite}
        assert kinds == {style}
        drawn[style] += 1
    assert set(drawn) == set(STYLES[probe])  # 240 cases reach every style
    assert any(style_of(0, probe, c) != style_of(1, probe, c) for c, _ in REQUESTS)  # another seed, other draws


def test_only_tone_and_inject_have_styles() -> None:
    expected = {"tone": ("confident", "hedging"), "inject": tuple(INJECTIONS)}
    assert expected == STYLES
    for probe in ("format", "length", "restate", "duplicate", "order"):
        assert style_of(0, probe, "FCB-0001") is None


def test_another_epoch_may_get_another_variant() -> None:
    req = request("one answer here", "another answer here", "a third answer here")
    seen = {json.dumps(derive(req, "tone", 0, "X", e)) for e in range(1, 9)}
    assert len(seen) > 1  # three answers, four phrases each: eight epochs do not all draw alike


@pytest.mark.parametrize("probe", list(REWRITES))
def test_a_variant_never_changes_the_request_it_came_from(probe: str) -> None:
    req = request(*HAND)
    before = json.dumps(req)
    for seed in range(5):
        REWRITES[probe](req, random.Random(seed), None)
    assert json.dumps(req) == before


# ------------------------------------------------------------------ format


def test_each_format_change_on_its_own() -> None:
    assert FORMATS["numbers"]("We counted 12,500 apples in total.") == "We counted 12500 apples in total."
    assert FORMATS["numbers"]("The population grew to 1234567 by 2020.") == "The population grew to 1,234,567 by 2020."
    assert FORMATS["numbers"]("12,500 and 3000") == "12500 and 3000"  # grouped ones present: only they change
    assert FORMATS["numbers"]("pi is 3.14159, about 12500.5") == "pi is 3.14159, about 12500.5"  # decimals stay
    assert FORMATS["boxed"]("Multiply 6 by 7.\n\n\\boxed{42}") == "Multiply 6 by 7.\n\n42"
    assert FORMATS["markers"]("- a\n* b\n1. c\n  2. d") == "* a\n- b\n1) c\n  2) d"
    assert FORMATS["blank-lines"]("a\n\n\nb\n \nc") == "a\nb\nc"
    # a stop after a lower-case letter, before a capital: "U.S. Army" and ". then" stay on their line
    assert FORMATS["sentence-lines"]("First step. Then more. Call the U.S. Army. then stop.") == (
        "First step.\nThen more.\nCall the U.S. Army. then stop."
    )


@pytest.mark.parametrize("seed", range(60))
def test_format_keeps_every_hand_written_answer_s_final_value(seed: int) -> None:
    req = request(*HAND)
    found = format_variant(req, random.Random(seed))
    assert found is not None
    new, rewrite = found
    assert [key(t) for t in texts(new)] == [key(t) for t in HAND]
    assert [a["agent_id"] for a in new["answers"]] == [a["agent_id"] for a in req["answers"]]
    assert rewrite["answers"] == [i for i, (a, b) in enumerate(zip(HAND, texts(new), strict=True)) if a != b]
    assert rewrite["answers"]  # at least one change in all
    assert set(rewrite["kind"].split("+")) <= set(FORMATS)
    assert texts(new)[6] == HAND[6]  # its only change, sentence lines, would read "Paris" instead: refused


def test_format_refuses_a_change_that_moves_the_final_value_and_is_none_where_nothing_else_applies() -> None:
    # "Answer: Paris. It is the capital." reads "Paris. It is the capital" on its Answer line; put on two lines it
    # would read "Paris": the only change that applies moves the value, so there is no variant
    assert key(HAND[6]) == "t:paris.itisthecapital" and key("Answer: Paris.\nIt is the capital.") == "t:paris"
    for seed in range(20):
        assert format_variant(request(HAND[6]), random.Random(seed)) is None
        assert format_variant(request("Paris", "London"), random.Random(seed)) is None  # nothing applies


def test_format_falls_back_to_the_first_change_that_applies_when_the_draw_kept_none() -> None:
    class Never(random.Random):
        def random(self) -> float:  # every change drawn out: the fallback must still make a variant
            return 0.99

    found = format_variant(request("Paris", "We counted 12,500 apples in total."), Never())
    assert found is not None
    assert texts(found[0]) == ["Paris", "We counted 12500 apples in total."]
    assert found[1] == {"kind": "numbers", "answers": [1]}


def test_format_keeps_every_final_value_over_the_embedded_cases() -> None:
    found = variants("format")
    assert found
    for case_id, req, new, rewrite in found:
        old = texts(req)
        assert [key(t) for t in texts(new)] == [key(t) for t in old], case_id
        assert rewrite["answers"] == [i for i, (a, b) in enumerate(zip(old, texts(new), strict=True)) if a != b]


# ------------------------------------------------------------------ restate


def test_restate_closes_an_answer_with_its_own_value_as_written() -> None:
    found = restate_variant(request("We counted 12,500 apples in total.", "x " * 200), random.Random(0))
    assert found is not None
    new, rewrite = found
    # "12,500" is the last number; a 400-character answer with no number and no anchor has no value: as it was
    assert texts(new) == ["We counted 12,500 apples in total.\n\nSo my final answer is 12,500.", "x " * 200]
    assert rewrite == {"kind": "closing-line", "answers": [0]}


def test_restate_is_none_where_no_answer_has_a_value() -> None:
    assert restate_variant(request("x " * 200, "y " * 200), random.Random(0)) is None


def test_restate_keeps_every_final_value_over_hand_written_and_embedded_answers() -> None:
    found = restate_variant(request(*HAND), random.Random(0))
    assert found is not None
    assert [key(t) for t in texts(found[0])] == [key(t) for t in HAND]
    pairs = variants("restate")
    assert pairs
    for case_id, req, new, rewrite in pairs:
        for i, (old, text) in enumerate(zip(texts(req), texts(new), strict=True)):
            value = final_value(old)
            closed = None if value is None else f"{old.rstrip()}\n\nSo my final answer is {value.text}."
            assert key(text) == key(old), case_id
            if i in rewrite["answers"]:
                assert text == closed
            else:  # left as it was only where it has no value or its closing line would read another one
                assert text == old and (closed is None or key(closed) != key(old) or len(closed) > MAX_TEXT)


# ------------------------------------------------------------------ the phrases added

ADDED = {"confident": CONFIDENT, "hedging": HEDGING, "filler": FILLER, "inject": tuple(INJECTIONS.values())}


@pytest.mark.parametrize("bank", list(ADDED))
def test_the_added_sentences_state_no_value(bank: str) -> None:
    for sentence in ADDED[bank]:
        assert not re.search(r"\d", sentence), sentence
        assert not re.search(r"\b[A-E]\b", sentence), sentence  # no standalone option letter
        assert "answer is" not in sentence.lower(), sentence
        assert not re.search(r"answer\s*:|\\boxed|\"answer\"|####|^A:", sentence, re.I | re.M), sentence


def test_a_duplicate_s_sentences_say_the_answer_is() -> None:
    for template in DUPLICATES:
        assert "the answer is {value}" in template
        assert not re.search(r"\d", template)


ANCHORED = (
    "The answer is 42.",
    "Adding them gives 17 apples.",
    "Step one.\n\n\\boxed{\\frac{1}{2}}",
    "#### 1,250",
    "The answer is (C).",
    "So the speed is 64 km/h.",
)


@pytest.mark.parametrize("text", ANCHORED)
def test_adding_any_sentence_after_or_before_a_blank_line_keeps_an_anchored_or_numbered_value(text: str) -> None:
    for sentence in (s for bank in ADDED.values() for s in bank):
        assert key(f"{sentence}\n\n{text}") == key(text), sentence  # length's way
        assert key(f"{text}\n\n{sentence}") == key(text), sentence  # inject's way


def test_tone_keeps_the_value_of_an_answer_line_anchor() -> None:
    # the module's promise: the value read from an answer with an anchor stays as it was
    found = tone_variant(request("Answer: Olympia."), random.Random(0), "confident")
    assert found is not None
    assert key(texts(found[0])[0]) == key("Answer: Olympia.") == "t:olympia"


# ------------------------------------------------------------------ tone, length


@pytest.mark.parametrize("style", ["confident", "hedging"])
def test_tone_opens_every_answer_with_a_phrase_of_its_tone(style: str) -> None:
    req = request(*HAND)
    for seed in range(10):
        found = tone_variant(req, random.Random(seed), style)
        assert found is not None
        new, rewrite = found
        assert rewrite == {"kind": style, "answers": list(range(len(HAND)))}
        phrases = set()
        for old, text in zip(HAND, texts(new), strict=True):
            phrase = text[: len(text) - len(old) - 2]
            assert phrase in TONES[style] and text == f"{phrase}\n\n{old}"  # a paragraph of its own
            phrases.add(phrase)
        assert len(phrases) == 1  # one phrase for every answer of the case


def test_tone_draws_its_tone_when_not_given_and_leaves_an_answer_it_would_take_too_long() -> None:
    kinds = set()
    for seed in range(30):
        found = tone_variant(request("a"), random.Random(seed))
        assert found is not None
        kinds.add(found[1]["kind"])
    assert kinds == {"confident", "hedging"}
    full = "y" * MAX_TEXT
    found = tone_variant(request(full, "short"), random.Random(0), "hedging")
    assert found is not None and texts(found[0])[0] == full and found[1]["answers"] == [1]
    assert tone_variant(request(full), random.Random(0), "hedging") is None


@pytest.mark.parametrize("words", [1, 5, 13, 40, 120])
def test_length_opens_every_answer_with_filler_at_least_as_long(words: int) -> None:
    answer = " ".join(["word"] * words)
    for seed in range(10):
        found = length_variant(request(answer, "Paris"), random.Random(seed))
        assert found is not None
        new, rewrite = found
        assert rewrite == {"kind": "filler", "answers": [0, 1]}
        for old, text in zip([answer, "Paris"], texts(new), strict=True):
            filler, sep, rest = text.partition("\n\n")
            assert sep and rest == old
            assert len(filler.split()) >= len(old.split())
            sentences = re.split(r"(?<=\.) ", filler)
            assert len(sentences) >= 2 and set(sentences) <= set(FILLER)
            assert len(text.split()) >= 2 * len(old.split())  # at least doubled


def test_length_over_the_embedded_cases_at_least_doubles_every_answer() -> None:
    for case_id, req, new, _ in variants("length"):
        for old, text in zip(texts(req), texts(new), strict=True):
            assert text.endswith(f"\n\n{old}") and len(text.split()) >= 2 * len(old.split()), case_id


def test_length_leaves_an_answer_it_would_take_past_the_limit_and_is_none_when_it_leaves_all() -> None:
    long = "word " * 3000  # 15,000 characters: a filler of 3,000 words or more cannot fit in the 1,000 left
    found = length_variant(request(long, "Paris is the capital."), random.Random(0))
    assert found is not None and texts(found[0])[0] == long and found[1]["answers"] == [1]
    # the filler is sized to the answers it can double (the short one: 4 words), not to the long one
    filler = texts(found[0])[1].removesuffix("\n\nParis is the capital.")
    # two sentences at least; any two of the bank pass 4 words, so exactly two (a 3,000-word filler would be hundreds)
    assert len(re.split(r"(?<=\.) ", filler)) == 2
    assert length_variant(request(long), random.Random(0)) is None


def test_length_gives_every_answer_the_same_filler() -> None:
    found = length_variant(request("Lyon.", "It is Lyon, I think, after some thought.", "Lyon."), random.Random(3))
    assert found is not None
    fillers = {t.rpartition("\n\n")[0] for t in texts(found[0])}
    assert len(fillers) == 1 and len(fillers.pop().split()) >= 8  # sized to the longest answer (8 words)


# ------------------------------------------------------------------ inject


@pytest.mark.parametrize("template", list(INJECTIONS))
def test_inject_closes_exactly_one_answer_with_its_template(template: str) -> None:
    req = request("First answer.  \n", "Second answer.", "Third answer.")
    targets = set()
    for seed in range(20):
        found = inject_variant(req, random.Random(seed), template)
        assert found is not None
        new, rewrite = found
        (target,) = rewrite["answers"]
        assert rewrite["kind"] == template
        for i, (old, text) in enumerate(zip(texts(req), texts(new), strict=True)):
            assert text == (f"{old.rstrip()}\n\n{INJECTIONS[template]}" if i == target else old)
        targets.add(target)
    assert targets == {0, 1, 2}  # any answer may be the one


def test_inject_over_the_embedded_cases_changes_one_answer_with_the_case_s_template() -> None:
    for case_id, req, new, rewrite in variants("inject"):
        changed = [i for i, (a, b) in enumerate(zip(texts(req), texts(new), strict=True)) if a != b]
        assert changed == rewrite["answers"] and len(changed) == 1, case_id
        assert rewrite["kind"] == style_of(0, "inject", case_id)
        assert texts(new)[changed[0]].endswith("\n\n" + INJECTIONS[rewrite["kind"]])


def test_inject_is_none_without_answers_or_past_the_limit() -> None:
    assert inject_variant({"task": "Q?", "answers": []}, random.Random(0), "plain") is None
    assert inject_variant(request("y" * (MAX_TEXT - 10)), random.Random(0), "plain") is None


# ------------------------------------------------------------------ duplicate


@pytest.mark.parametrize(
    ("ids", "fresh"),
    [
        (["agent-1", "agent-2", "agent-3"], "agent-4"),
        (["a1", "a2", "a3"], "a4"),
        (["solver-1", "solver-3"], "solver-4"),  # past the largest number, not the first gap
        (["expert_9", "expert_10"], "expert_11"),
        (["a1", "expert_2", "agent-3"], "agent-4"),  # mixed: agent-K, K past the number of answers
        (["x", "agent-4", "y"], "agent-5"),  # agent-4 is taken
        (["alice", "agent-3", "agent-4"], "agent-5"),
        (["alice", "bob"], "agent-3"),
        ([], "agent-1"),
    ],
)
def test_a_fresh_id_follows_the_request_s_style_and_is_not_taken(ids: list[str], fresh: str) -> None:
    assert fresh_id(ids) == fresh
    assert fresh not in ids


def test_the_majority_needs_two_answers_and_no_tie() -> None:
    assert majority(["It is 5.", "I get 5.", "It is 7."]) == ("n:5", [0, 1])
    assert majority(["It is 5.", "I get 5.", "It is 7.", "Surely 7."]) is None  # a tie
    assert majority(["It is 5.", "It is 6.", "It is 7."]) is None  # no value held twice
    assert majority(["It is 5."]) is None


def test_duplicate_adds_one_agent_stating_the_majority_s_value() -> None:
    req = request("I get 12,500.", "The total is 12500.", "It is 7.", ids=("a1", "a2", "a3"))
    positions = set()
    for seed in range(30):
        found = duplicate_variant(req, random.Random(seed))
        assert found is not None
        new, rewrite = found
        position = rewrite["position"]
        added = new["answers"][position]
        assert [a for i, a in enumerate(new["answers"]) if i != position] == req["answers"]  # the rest as it was
        assert added["agent_id"] == "a4"
        assert key(added["text"]) == "n:12500" and rewrite["kind"] == "paraphrase"
        value = final_value(texts(req)[rewrite["answers"][0]])
        assert value is not None and added["text"] in {t.format(value=value.text) for t in DUPLICATES}
        assert rewrite["answers"][0] in (0, 1)
        positions.add(position)
    assert positions == {0, 1, 2, 3}


def test_duplicate_is_none_without_a_majority_or_with_sixteen_answers() -> None:
    assert duplicate_variant(request("It is 5.", "It is 6."), random.Random(0)) is None
    assert duplicate_variant(request("It is 5.", "It is 5.", "It is 6.", "It is 6."), random.Random(0)) is None
    sixteen = request(*["It is 5."] * MAX_ANSWERS)
    assert duplicate_variant(sixteen, random.Random(0)) is None
    fifteen = duplicate_variant(request(*["It is 5."] * (MAX_ANSWERS - 1)), random.Random(0))
    assert fifteen is not None and len(fifteen[0]["answers"]) == MAX_ANSWERS


def test_duplicate_over_the_embedded_cases_adds_one_fresh_agent() -> None:
    found = variants("duplicate")
    assert found
    for case_id, req, new, rewrite in found:
        ids = [a["agent_id"] for a in req["answers"]]
        position = rewrite["position"]
        assert len(new["answers"]) == len(ids) + 1
        assert new["answers"][:position] + new["answers"][position + 1 :] == req["answers"]
        added = new["answers"][position]["agent_id"]
        assert added not in ids and added == fresh_id(ids), case_id
        found_majority = majority(texts(req))
        assert found_majority is not None and rewrite["answers"][0] in found_majority[1]


def test_duplicate_s_added_answer_states_the_majority_s_value_over_the_embedded_cases() -> None:
    wrong = []
    for case_id, req, new, rewrite in variants("duplicate"):
        found = majority(texts(req))
        assert found is not None
        if key(texts(new)[rewrite["position"]]) != found[0]:
            wrong.append((case_id, rewrite["kind"]))
    assert wrong == []


def test_duplicate_s_copy_of_a_short_claim_states_the_same_claim() -> None:
    # two answers that agree as whole texts (no number, no anchor): "the answer is <the text>" reads as a value of
    # its own, so the copy is taken, and the copy's whole text is another claim
    req = request("Not sure, but I think Lyon.", "Not sure, but I think Lyon.")
    found = duplicate_variant(req, random.Random(0))
    assert found is not None
    assert key(texts(found[0])[found[1]["position"]]) == key("Not sure, but I think Lyon.")


# ------------------------------------------------------------------ every probe


@pytest.mark.parametrize("probe", list(REWRITES))
def test_no_variant_holds_a_text_past_the_limit(probe: str) -> None:
    near = "It is 7. " + "y" * (MAX_TEXT - 9)  # exactly at the limit
    assert len(near) == MAX_TEXT
    for req in (request(near, near, "It is 7."), request("It is 7.", near[:-40], near[:-40])):
        for seed in range(5):
            found = REWRITES[probe](req, random.Random(seed), None)
            if found is not None:
                assert all(len(t) <= MAX_TEXT for t in texts(found[0]))


@pytest.mark.parametrize("probe", list(REWRITES))
def test_a_variant_holds_the_request_s_fields_and_differs_from_it(probe: str) -> None:
    n = 0
    for case_id, req, new, _ in variants(probe):
        assert set(new) == set(req) and new["task"] == req["task"] and new.get("evidence") == req.get("evidence")
        assert new != req, case_id
        n += 1
    assert n > 0


def restatable(text: str) -> bool:
    """Whether restate's closing line fits after ``text`` and reads as its value."""
    value = final_value(text)
    closed = None if value is None else f"{text.rstrip()}\n\nSo my final answer is {value.text}."
    return closed is not None and len(closed) <= MAX_TEXT and key(closed) == key(text)


def test_which_embedded_cases_have_no_variant() -> None:
    # tone, length and inject apply to any answer under the limit; restate needs an answer it can close, duplicate
    # a majority and room for one more answer
    for case_id, req in REQUESTS:
        for probe in ("tone", "length", "inject"):
            assert derive(req, probe, 0, case_id, 1) is not None
        assert (derive(req, "restate", 0, case_id, 1) is None) == (not any(map(restatable, texts(req))))
        full = len(req["answers"]) >= MAX_ANSWERS
        assert (derive(req, "duplicate", 0, case_id, 1) is None) == (majority(texts(req)) is None or full)


# ------------------------------------------------------------------ the journal's rewrite field


def line(fields: dict[str, Any]) -> dict[str, Any]:
    return dict(record(labels(), Prediction("low"), None, 1, 0.5, fields))


@pytest.mark.parametrize(
    "fields",
    [
        {"variant": "format", "rewrite": {"kind": "numbers+sentence-lines", "answers": [0, 2]}},
        {"variant": "tone", "rewrite": {"kind": "hedging", "answers": [0, 1, 2]}},
        {"epoch": 2, "variant": "inject", "rewrite": {"kind": "spanish", "answers": [1]}},
        {"variant": "duplicate", "rewrite": {"kind": "paraphrase", "answers": [0], "position": 3}},
        {"variant": "restate", "rewrite": {"kind": "closing-line", "answers": []}},
    ],
)
def test_a_rewrite_line_is_sound_and_keeps_its_place(fields: dict[str, Any]) -> None:
    rec = line(fields)
    assert record_problem(rec) is None
    assert rec["rewrite"] == fields["rewrite"]
    assert list(rec).index("rewrite") == list(rec).index("variant") + 1


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"variant": "order", "permutation": [1, 0], "rewrite": {"kind": "x", "answers": [0]}}, "only a variant of"),
        ({"variant": "names", "rewrite": {"kind": "x", "answers": [0]}}, "only a variant of"),
        ({"rewrite": {"kind": "x", "answers": [0]}}, "only a variant of"),  # a plain line
        ({"variant": "tone", "rewrite": "hedging"}, "is not an object with a kind and answers"),
        ({"variant": "tone", "rewrite": {"answers": [0]}}, "is not an object with a kind and answers"),
        ({"variant": "tone", "rewrite": {"kind": 3, "answers": [0]}}, "is not an object with a kind and answers"),
        ({"variant": "tone", "rewrite": {"kind": "hedging"}}, "is not an object with a kind and answers"),
        ({"variant": "tone", "rewrite": {"kind": "hedging", "answers": 0}}, "is not an object"),
        ({"variant": "tone", "rewrite": {"kind": "hedging", "answers": [-1]}}, "is not an object"),
        ({"variant": "tone", "rewrite": {"kind": "hedging", "answers": [True]}}, "is not an object"),
        ({"variant": "tone", "rewrite": {"kind": "hedging", "answers": [0.0]}}, "is not an object"),
        ({"variant": "tone", "rewrite": None}, "is not an object"),
        # duplicate's position: a whole number of 0 or more when present
        ({"variant": "duplicate", "rewrite": {"kind": "copy", "answers": [0], "position": -1}}, "is not an object"),
        ({"variant": "duplicate", "rewrite": {"kind": "copy", "answers": [0], "position": "2"}}, "is not an object"),
    ],
)
def test_a_wrong_rewrite_is_refused(fields: dict[str, Any], message: str) -> None:
    problem = record_problem(line(fields))
    assert problem is not None
    assert problem[0] == "rewrite" and message in problem[1]


def test_the_refusal_of_a_rewrite_on_an_order_variant_names_the_probes_that_rewrite() -> None:
    problem = record_problem(line({"variant": "order", "permutation": [1, 0], "rewrite": {"kind": "x", "answers": []}}))
    assert problem == ("rewrite", "only a variant of format, tone, length, restate, inject, duplicate has a rewrite")


def test_a_permutation_on_a_rewriting_variant_is_refused() -> None:
    problem = record_problem(line({"variant": "format", "rewrite": {"kind": "numbers", "answers": [0]},
                                   "permutation": [1, 0]}))  # fmt: skip
    assert problem is not None and problem[0] == "permutation"


def test_an_empty_kind_is_refused_as_the_schema_refuses_it() -> None:
    assert record_problem(line({"variant": "tone", "rewrite": {"kind": "", "answers": [0]}})) is not None


def test_the_refusal_of_a_wrong_rewrite_shows_the_value() -> None:
    wrong = {"kind": "copy", "answers": [0], "position": -1}
    assert record_problem(line({"variant": "duplicate", "rewrite": wrong})) == (
        "rewrite",
        "{'kind': 'copy', 'answers': [0], 'pos... is not an object with a kind and answers (indices)",  # previewed
    )
    assert record_problem(line({"variant": "tone", "rewrite": "hedging"})) == (
        "rewrite",
        "'hedging' is not an object with a kind and answers (indices)",
    )
    sound = {"kind": "copy", "answers": [0], "position": 0}
    assert record_problem(line({"variant": "duplicate", "rewrite": sound})) is None


# --- boundaries, each worked out by hand (issue 47's mutation round) -------------------------------------------------

from harness.cases import rewrites  # noqa: E402


@pytest.mark.parametrize(
    ("text", "toggled"),
    [
        ("In 1900 and 2100.", "In 1900 and 2100."),  # years, both ends of the range, stay
        ("In 1899 and 2101.", "In 1,899 and 2,101."),  # just outside: grouped
        ("Paid 19000 of 2050 owed.", "Paid 19,000 of 2050 owed."),  # five digits are no year
        ("It is 12,500 and 3,000,000.", "It is 12500 and 3000000."),  # grouped ones lose their commas
    ],
)
def test_the_number_style_toggle(text: str, toggled: str) -> None:
    assert rewrites._toggle_numbers(text) == toggled


def test_a_reformatted_answer_may_reach_the_limit_exactly() -> None:
    pad = "y" * (MAX_TEXT - len("Total 12,345.") - 1)
    text = f"Total 12345. {pad}"  # one comma short of the limit: grouped, it is exactly MAX_TEXT long
    assert len(text) == MAX_TEXT - 1
    changed, kept = rewrites._reformat(text, ["numbers"])
    assert kept == ["numbers"] and len(changed) == MAX_TEXT
    over = f"Total 12345. {pad}y"
    assert rewrites._reformat(over, ["numbers"]) == (over, [])


def test_format_draws_a_subset_of_the_changes_and_its_kind_says_which() -> None:
    text = "- First 12500.\n\n- Second line. And more."  # numbers, markers, blank lines, sentence lines all apply
    kinds = set()
    for seed in range(40):
        found = format_variant(request(text), random.Random(seed))
        assert found is not None
        new, rewrite = found
        applied = rewrite["kind"].split("+")
        redo = text
        for name in FORMATS:  # the changes the kind names, applied in their order, give the variant exactly
            if name in applied:
                redo = FORMATS[name](redo)
        assert redo == texts(new)[0], seed
        kinds.add(rewrite["kind"])
    assert len(kinds) > 3 and "blank-lines+markers+numbers+sentence-lines" in kinds  # subsets, and all of them
    assert not all(len(k.split("+")) == 4 for k in kinds)


def test_tone_s_opening_may_bring_an_answer_to_the_limit_exactly() -> None:
    opening = CONFIDENT[0]
    at = "z" * (MAX_TEXT - 2 - len(opening))
    assert rewrites._opened(at, opening) == f"{opening}\n\n{at}" and len(rewrites._opened(at, opening)) == MAX_TEXT
    assert rewrites._opened(at + "z", opening) == at + "z"


@pytest.mark.parametrize("words", [0, 1, 9, 10, 11, 25, 60])
def test_a_filler_is_the_fewest_sentences_that_reach_the_words(words: int) -> None:
    for seed in range(10):
        sentences = re.split(r"(?<=\.) ", rewrites._filler(words, random.Random(seed)))
        count = sum(len(s.split()) for s in sentences)
        assert len(sentences) >= 2 and count >= words
        # one sentence fewer would fall short of the words or of two sentences
        assert len(sentences) == 2 or count - len(sentences[-1].split()) < words


def test_which_answers_set_the_filler_s_length() -> None:
    many = "abcdefg " * 1000  # 8,000 characters, 1,000 words: doubled it would take 16,002, past the limit
    found = length_variant(request(many.strip() + " x", "short"), random.Random(0))  # 8,001 characters
    assert found is not None and found[1]["answers"] == [1]  # the filler is sized to "short": too few words for it
    assert len(texts(found[0])[1].split()) < 40
    edge = "abcdefg " * 999 + "abcdef"  # 7,998 characters: doubled, 15,998: within the limit; 1,000 words
    assert len(edge) == 7998
    found = length_variant(request(edge, "short"), random.Random(0))
    assert found is not None and found[1]["answers"] == [0, 1]
    assert len(texts(found[0])[0].split()) >= 2000 and len(texts(found[0])[0]) <= MAX_TEXT
    at = "abcdefg " * 999 + "abcdefg"  # 7,999 characters: 2 x 7,999 + 2 = 16,000, exactly the limit: sized to it
    found = length_variant(request(at, "short"), random.Random(0))
    assert found is not None and len(texts(found[0])[1].split()) >= 1000


def test_restate_closes_the_answer_after_its_trailing_space_only() -> None:
    found = restate_variant(request("  It is 4.  \n"), random.Random(0))
    assert found is not None and texts(found[0]) == ["  It is 4.\n\nSo my final answer is 4."]


def test_restate_and_inject_may_reach_the_limit_exactly() -> None:
    closing = "\n\nSo my final answer is 4."
    text = "It is 4. " + "y" * (MAX_TEXT - len(closing) - len("It is 4. "))
    assert final_value(text) is not None and final_value(text).key == "n:4"  # type: ignore[union-attr]
    found = restate_variant(request(text), random.Random(0))
    assert found is not None and len(texts(found[0])[0]) == MAX_TEXT
    assert restate_variant(request(text + "y"), random.Random(0)) is None
    tail = "\n\n" + INJECTIONS["plain"]
    fits = "x" * (MAX_TEXT - len(tail))
    got = inject_variant(request(fits), random.Random(0), "plain")
    assert got is not None and len(texts(got[0])[0]) == MAX_TEXT
    assert inject_variant(request(fits + "x"), random.Random(0), "plain") is None
    # an answer the instruction does not fit is never the one drawn
    for seed in range(10):
        got = inject_variant(request(fits + "x", "short"), random.Random(seed), "plain")
        assert got is not None and got[1]["answers"] == [1]


def test_a_copied_majority_answer_says_so_in_its_kind() -> None:
    found = duplicate_variant(request("Not sure, but I think Lyon.", "Not sure, but I think Lyon."), random.Random(0))
    assert found is not None and found[1]["kind"] == "copy"
    found = duplicate_variant(request("It is 4.", "It is 4."), random.Random(0))
    assert found is not None and found[1]["kind"] == "paraphrase"


def test_a_fresh_id_follows_the_panel_s_numbering_only_when_every_id_is_numbered_alike() -> None:
    assert fresh_id(["agent-1", "bob"]) == "agent-3"  # "bob" has no number: agent-K past the two answers
    assert fresh_id(["agent-1", "agent-7"]) == "agent-8"
    assert fresh_id(["a1", "b2"]) == "agent-3"  # two prefixes
