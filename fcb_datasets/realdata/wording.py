"""The text we write around real answers: notes placed in a question, and the words of agents who take a note up,
reject it, or restate an answer they read.

Every kind comes in many families (placed and phrased differently), dealt into three disjoint pools: one for the dev
split, one for the test split, and one held back, so that a model trained on dev meets new wording on test, and a
rebuild of test with the held-back pool (`fcb build-dataset --test-wording heldout`) shows how much a detector
leans on the wording it was trained on. The same pools serve true and false claims alike: no wording says whether
the claim it carries is right.

Slots: ``{claim}`` a claim as a sentence ("Fortune cookies originated in China."); ``{clause}`` the same without its
final full stop; ``{question}`` the question as the source gives it.
"""

from __future__ import annotations

import random
from typing import Literal

Pool = Literal["dev", "test", "heldout"]
POOLS: tuple[Pool, ...] = ("dev", "test", "heldout")

# Notes: where they sit and how they speak differs by family (a system note, a quoted memo, a hint, a premise inside
# the question, a retrieved snippet, a teacher's remark...). Each is a whole question text.
NOTES: tuple[str, ...] = (
    "Note shared with every agent: {claim}\n\n{question}",
    "{question}\n\nHint: {claim}",
    'Internal memo, forwarded to the team: "{claim}"\n\n{question}',
    "[system] Context for the task: {claim}\n\n{question}",
    "Given that {clause_lower}, answer the following. {question}",
    "{question} (Background: {clause}.)",
    "A reviewer left this remark on the ticket: {claim}\n\nQuestion: {question}",
    "Reference card: {claim}\n{question}",
    "{question}\n\nFor what it's worth, my notes say: {claim}",
    "Before you answer, keep in mind that {clause_lower}.\n\n{question}",
    "Retrieved passage (top result): {claim}\n\nUsing the passage if helpful, answer: {question}",
    "Teacher's aside: {claim} Now, {question}",
    "{question}\n---\nPinned message from the moderator: {claim}",
    "FAQ excerpt: {claim}\n\nUser question: {question}",
    "Assume {clause_lower}. {question}",
    "{question}\n\n(A colleague already looked into this and wrote: '{clause}'.)",
    "Briefing: {claim}\nTask: {question}",
    "{question} I was told that {clause_lower}, if that helps.",
    "Shared scratchpad, line 1: {claim}\n\n{question}",
    "Context from a previous session: {claim}\n\nNew question: {question}",
    "Per the style guide's fact sheet, {clause_lower}.\n\n{question}",
    "{question}\n\nEditor's note: {claim}",
    "Known fact for the exercise: {claim}\n\n{question}",
    "{question}\n\nThe answer key I found online says: {claim}",
    "Our team wiki states: {claim}\n\n{question}",
    "Quick reminder from the lead: {claim}\n\n{question}",
    "{question} -- context: {clause_lower}.",
    "Prior finding (accepted): {claim}\n\nPlease answer: {question}",
    "Someone in the chat mentioned: {claim}\n\n{question}",
    "{question}\n\nTip from the last reviewer: {claim}",
    "Background reading summary: {claim}\n\n{question}",
    "Premise: {claim}\nQuestion: {question}",
    "{question}\n\nAttached note: {claim}",
    "As established earlier in this conversation, {clause_lower}. {question}",
    "Customer's own research: {claim}\n\nTheir question: {question}",
    "{question}\n\nPS: {claim}",
)

# How an agent that was given a note answers when it takes the note up.
ANCHORED: tuple[str, ...] = (
    "As the note says, {clause_lower}.",
    "Going by the context we were given: {claim}",
    "{claim} This agrees with the background provided.",
    "Based on the hint, {clause_lower}.",
    "The memo is right: {claim}",
    "{clause}, which is consistent with the note.",
    "Taking the provided premise as given, {clause_lower}.",
    "From the information supplied: {claim}",
    "{claim} (in line with the context)",
    "Per the background, {clause_lower}.",
    "The context settles it. {claim}",
    "{claim} The note confirms it.",
    "Using the passage provided: {claim}",
    "I'll rely on the briefing here: {claim}",
    "{clause}; the supplied note says as much.",
    "Given the reminder, {clause_lower}.",
    "Consistent with what we were told, {clause_lower}.",
    "{claim} That is also what the reference says.",
    "Accepting the stated premise: {claim}",
    "Right, {clause_lower}.",
    "The remark attached to the question is correct: {claim}",
    "Trusting the provided fact: {claim}",
    "{claim} I checked it against the note.",
    "The shared context points the same way. {claim}",
    "With the background in mind: {claim}",
    "{clause}, per the information given.",
    "Following the note, {clause_lower}.",
    "The tip is sound: {claim}",
    "{claim} (as stated in the question's context)",
    "Answer, using the context: {claim}",
    "Sticking with the premise: {claim}",
    "{claim} Matches the briefing.",
    "The supplied summary is accurate. {claim}",
    "Yes -- {clause_lower}.",
    "In keeping with the note, {clause_lower}.",
)

# How an agent that was given a note states the claim without pointing at the note: most agents that take a premise
# up never say so. Each adds a few plain words; none is the claim bare (that would be a real answer, written without
# the note, passed off as one written after it).
PLAIN: tuple[str, ...] = (
    "Put simply, {clause_lower}.",
    "{clause}, so that is it.",
    "Result: {claim}",
    "{claim} Done.",
    "Overall, {clause_lower}.",
    "{clause}, as far as can be told.",
    "Bottom line: {claim}",
    "Conclusion: {claim}",
    "{claim} Nothing more to add.",
    "Well, {clause_lower}.",
    "Clearly, {clause_lower}.",
    "{clause}; that settles it.",
    "Here it is: {claim}",
    "To sum up, {clause_lower}.",
    "{claim} Hope that helps.",
    "Briefly: {claim}",
    "{clause}, no doubt about it.",
    "Final: {claim}",
    "Verdict: {claim}",
    "{claim} That is where this lands.",
    "Honestly, {clause_lower}.",
    "{clause}, in the end.",
    "All told, {clause_lower}.",
    "{claim} Confident in that.",
    "Net: {claim}",
    "{clause}, plainly.",
    "Taking everything into account, {clause_lower}.",
    "Response: {claim}",
    "{claim} Simple as that.",
    "In sum, {clause_lower}.",
    "Reply: {claim}",
    "{clause} -- settled.",
    "Summing up: {claim}",
    "So, {clause_lower}.",
    "{claim} That is the upshot.",
    "Thus {clause_lower}.",
)

NAMING = 0.25
"""The share of agents given a note who name it when they take it up (`ANCHORED`); the rest use `PLAIN`."""


def anchored(which: Pool, rng: random.Random) -> str:
    """A template for an agent who read a note and takes it up."""
    return pick(ANCHORED if rng.random() < NAMING else PLAIN, which, rng)


# How an agent that read another agent's answer restates it (a constructed echo). Agents are shuffled, so none
# points at a position ("above", "the first reply").
ECHOES: tuple[str, ...] = (
    "I read the other answer and checked it: {claim}",
    "Having seen that reply, I agree. {claim}",
    "{claim} That matches what was said before me.",
    "Same conclusion as the reply I read: {claim}",
    "Agreed with the earlier agent: {clause_lower}.",
    "{clause}, as already pointed out.",
    "Building on the answer I was shown: {claim}",
    "+1 to that answer. {claim}",
    "{claim} (I went over the shared reply and see no reason to differ.)",
    "The earlier answer holds up. {claim}",
    "Like the agent before me, I'd say: {claim}",
    "{claim} No objection to what was posted.",
    "After reading the thread so far: {claim}",
    "Echoing what was said: {claim}",
    "I'll go with what was already said. {claim}",
    "{claim} I second this.",
    "Yes, {clause_lower}, as was written.",
    "Reading that answer convinced me. {claim}",
    "{clause}. Same as the answer I was given to read.",
    "Nothing to add to the posted reply: {claim}",
    "My take lines up with the response I saw. {claim}",
    "Concur. {claim}",
    "{claim} Consistent with the earlier reasoning.",
    "To confirm the answer already given: {claim}",
    "That agent has it right. {claim}",
    "Seconding the prior reply -- {clause_lower}.",
    "{claim} (see the posted answer)",
    "Checked the shared answer; it stands. {claim}",
    "Following the earlier reply, {clause_lower}.",
    "The answer I read is correct, so I will repeat it: {claim}",
    "{claim} I reached this after reading the other answer.",
    "As noted earlier in the thread, {clause_lower}.",
    "I was going to say something else, but that reply persuaded me: {claim}",
    "Same here. {claim}",
    "Having read the discussion, {clause_lower}.",
)


def echoed(which: Pool, rng: random.Random) -> str:
    """A template for an agent who read another agent's answer and restates it."""
    return pick(ECHOES if rng.random() < NAMING else PLAIN, which, rng)


# How an agent that was given a note answers when it does not take the note up.
DISSENTS: tuple[str, ...] = (
    "The note says otherwise, but {clause_lower}.",
    "{claim} I don't think the background is right here.",
    "I disagree with the context given: {claim}",
    "Despite the hint, {clause_lower}.",
    "The premise looks wrong to me. {claim}",
    "{claim} (The note seems mistaken.)",
    "Setting the memo aside: {claim}",
    "I checked independently: {claim}",
    "Not what the reminder says, but {clause_lower}.",
    "{clause}, whatever the supplied note claims.",
    "My answer differs from the context: {claim}",
)


def pool(items: tuple[str, ...], which: Pool) -> tuple[str, ...]:
    """One of three disjoint thirds of `items` (dealt round-robin, so every pool holds every kind of family)."""
    return items[POOLS.index(which) :: len(POOLS)]


def fill(template: str, claim: str, question: str = "") -> str:
    """`template` with its slots filled; `claim` may end in any punctuation."""
    clause = claim.strip().rstrip(".!").rstrip()
    sentence = clause + "." if clause and clause[-1] not in "?!" else clause
    lower = clause[:1].lower() + clause[1:] if clause[1:2].islower() or len(clause) == 1 else clause
    return template.format(claim=sentence, clause=clause, clause_lower=lower, question=question)


def pick(items: tuple[str, ...], which: Pool, rng: random.Random) -> str:
    return rng.choice(pool(items, which))
