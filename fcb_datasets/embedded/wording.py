"""The words of the embedded set: answer templates, notes placed in a question, and the rendering of one answer.

Each construct (an answer stated plainly, with a reason, hedged or bare; an agent restating an answer it read or
disagreeing with one; a note in the question, taken up or rejected) comes in several families, and every category
that uses a construct draws from the same families with the same odds, whether the value is right or wrong. So no
word marks a category or a risk: what tells a false consensus from a sound one is whether the shared value is true,
which takes knowledge, and how the answers came about (copied, anchored on a note, reached alone).

Templates carry no digits and no answer terms, so a rendered answer states exactly one value (checked on assembly).
What a case's agents call its note and the answer they read (``{src}``) is chosen once per case, so the templates a
case uses agree with each other and with its question.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from fcb_datasets.embedded.questions import Question, stated

# Independent answers.
PLAIN = (
    "{Claim}.",
    "The answer is {value}.",
    "I'm fairly confident {claim}.",
    "I believe {claim}.",
    "{Claim}, as far as I can tell.",
    "My answer is {value}.",
    "As I understand it, {claim}.",
    "Final answer: {value}.",
    "{Claim}; that is my answer.",
    "To my knowledge, {claim}.",
)
REASONED = (
    "{Claim}, because {reason}.",
    "Since {reason}, {claim}.",
    "{Reason}, so {claim}.",
    "{Claim}. Reasoning: {reason}.",
    "{Reason}; therefore {claim}.",
    "I worked it through: {reason}, which means {claim}.",
    "{Claim} -- {reason}.",
    "Given that {reason}, {claim}.",
)
HEDGED = (
    "Not completely sure, but I think {claim}.",
    "My best guess is {value}.",
    "Possibly {value}, though I have not double-checked.",
    "I think {claim}, but treat that as tentative.",
    "Probably {value}.",
    "If I had to pick: {value}.",
    "{Claim}, I believe, though I may be wrong.",
)
BARE = (
    "{Value}.",
    "{Claim}.",
    "It's {value}.",
    "Answer: {value}.",
    "{Value}, no question.",
    "Simply {value}.",
    "{Value}. Final.",
    "Clearly {value}.",
)
# Reasons that fit any value and any item, used now and then (and when an item has none).
GENERIC_REASONS = (
    "each step checks out",
    "a careful check gives that result",
    "the usual method leads there",
    "going over it again gives the same result",
    "that is what the question's own terms give",
)

# An agent taking up a source it read (``{src}``: another agent's answer, or a note in the question), or disagreeing
# with one. The same templates serve both sources, so the words of copying and of anchoring are shared by every
# category that has either; ``{core}`` is a whole sentence.
TAKE_UP = (
    "Agreeing with {src}: {core}",
    "{Src} looks right to me. {core}",
    "I read {src} and concur; {claim}.",
    "Building on {src}, {claim}.",
    "Seconding {src}. {core}",
    "Consistent with {src}, {claim}.",
    "Per {src}, {claim}.",
    "Going by {src}, {value}.",
    "As {src} says, {claim}.",
    "Taking {src} at face value: {value}.",
    "{Src} settles it: {claim}.",
    "Given {src}, {claim}.",
    "{Claim}, in line with {src}.",
    "{Claim}. {Src} confirms it.",
    "Same as {src}. {core}",
    "After reading {src}: {core}",
)
DISAGREE = (
    "I read {src} but I disagree. {core}",
    "Respectfully, {src} looks wrong. {core}",
    "{Src} looks mistaken. {core}",
    "I don't think {src} is right. {core}",
    "Setting {src} aside and checking independently: {core}",
    "Despite {src}, {claim}.",
    "{Src} does not hold up. {core}",
    "Having read {src}, I still say: {core}",
    "Unlike {src}, I find that {claim}.",
    "I checked {src} and it does not hold. {core}",
)
# What an agent calls the answer it read.
REFS = (
    "the earlier answer",
    "the other reply",
    "the answer I was shown",
    "the posted answer",
    "the previous response",
    "the answer in the thread",
)

# A note in the question: what agents call it, and its frame. True and false claims get the same frames.
NOTE_FRAMES = (
    ("the note", "Note from the team: {Claim}."),
    ("the hint", "Hint: {Claim}."),
    ("the memo", 'Internal memo: "{Claim}."'),
    ("the context given", "Context for the task: {Claim}."),
    ("the background", "Background: {Claim}."),
    ("the reminder", "Reminder from the reviewer: {Claim}."),
    ("the reviewer's comment", "A reviewer's comment on this task: {Claim}."),
    ("the project brief", "From the project brief: {Claim}."),
)
GENERIC_SHARE = 0.2
ADOPT_NAMING = 0.75
"""The share of agents who take a note up and say so; the rest state the claim plainly."""

# mode -> (templates, the source it names: "ref" or "note")
TEMPLATES: dict[str, tuple[tuple[str, ...], str]] = {
    "plain": (PLAIN, ""),
    "reasoned": (REASONED, ""),
    "hedged": (HEDGED, ""),
    "bare": (BARE, ""),
    "echo": (TAKE_UP, "ref"),
    "adopt": (TAKE_UP, "note"),
    "dissent": (DISAGREE, "ref"),
    "reject": (DISAGREE, "note"),
}
# The sentence a template's ``{core}`` holds, by mode: one of these modes, drawn at random.
CORES = {"echo": ("plain", "bare"), "adopt": ("plain", "bare"), "dissent": ("reasoned", "plain"),
         "reject": ("reasoned", "plain")}  # fmt: skip


@dataclass(frozen=True)
class Voice:
    """The per-case choices that the templates of one case share: what the note and the answer read are called."""

    note: str
    ref: str


def pick_voice(rng: random.Random) -> tuple[Voice, str]:
    """A case's voice and its note frame (used only when the case has a note)."""
    noun, frame = rng.choice(NOTE_FRAMES)
    return Voice(note=noun, ref=rng.choice(REFS)), frame


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def note_question(rng: random.Random, item: Question, value: str, frame: str) -> str:
    """The item's question with a note stating ``value`` (true or false alike), before it or after it."""
    note = frame.format(Claim=cap(item.say(value)))
    return f"{note}\n\n{item.question}" if rng.random() < 0.6 else f"{item.question}\n\n{note}"


def _reason(rng: random.Random, item: Question, value: str) -> str:
    """A justification for ``value``. Reasons that name no answer are the item's, not the value's: any of them backs
    any value, so a reason's style never says whether its answer is right (an agent can be right for a poor reason
    or wrong with a sound-sounding one). Reasons that name their value (a worked step) stay with it."""
    shared = [r for v in item.values for r in item.reasons.get(v, ()) if not stated(item, r)]
    own = [r for r in item.reasons.get(value, ()) if stated(item, r) == [value]]
    if own + shared and rng.random() >= GENERIC_SHARE:
        return rng.choice(own + shared)
    return rng.choice([r for r in GENERIC_REASONS if not stated(item, r)])  # none names an answer of this item


def render(rng: random.Random, item: Question, value: str, mode: str, voice: Voice) -> str:
    """One answer text stating ``value`` in the given mode."""
    if mode == "adopt" and rng.random() >= ADOPT_NAMING:
        mode = "plain"
    templates, source = TEMPLATES[mode]
    core = render(rng, item, value, rng.choice(CORES[mode]), voice) if mode in CORES else ""
    reason = _reason(rng, item, value) if mode == "reasoned" else ""
    src = {"ref": voice.ref, "note": voice.note}.get(source, "")
    claim = item.say(value)
    return rng.choice(templates).format(
        claim=claim,
        Claim=cap(claim),
        value=value,
        Value=cap(value),
        reason=reason,
        Reason=cap(reason),
        core=core,
        src=src,
        Src=cap(src),
    )
