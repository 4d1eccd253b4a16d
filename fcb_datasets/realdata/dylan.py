"""DyLAN: real multi-agent debates on MATH problems (``../shared/data/dylan``), as they ran.

Reader: gzipped JSON lines, one debate per line (``math_cot.jsonl.gz``, ``math_complex.jsonl.gz``): each agent's chat
history, one assistant turn per round it took part in. An agent's value in a round is its last ``\\boxed{}`` or "The
answer is ...", else the value that ends its last sentence (`final_answer.debate_final`), compared with the gold
answer by math-verify. Every agent is gpt-3.5-turbo-0301.

Cases, the debate as it ran (``origin_natural``):
- a debate that went past round 1: each agent's round-1 answer (written alone, ``saw_other_answers`` false) and the
  final-round answers (written after reading the others' solutions, ``saw_other_answers`` true), rounds in order,
  agents shuffled within them alike. When the final round is unanimous on a value that an agent gave in round 1 and
  at least one agent switched to it: ``echo_cascade`` if it is wrong; if it is right, ``correct_but_unsupported``
  when fewer than 60% of the round-1 answers had it (one agent of three, or of the two kept: the others adopted it,
  nothing independent behind the consensus) and ``genuine_agreement_correct`` when 60% or more reached it alone.
  Final agents who all held the value already in round 1 agreed independently: ``genuine_agreement_correct``, or a
  wrong consensus. A final round with no value at 60%: ``genuine_disagreement``; one correct agent holding out
  against a wrong 60% majority: ``lone_correct_dissenter``.
- a debate that stopped after round 1 (three or four agents agreed): the round-1 answers, independent, categorised as
  a panel's (`panels.panel_category`); these are a source of their own (`ROUND_ONE`), with their own sizes.
Every case must then meet the label scheme over all the answers it holds, or it is left out. Pruned agents (the
ranker kept two of four after round 2; the other two are not stored) appear only as the solutions quoted in the
prompts, never as answers. Debates whose stored turns do not say which agent answered which round are left out: the
eleven math_complex debates stored from round 2 on, and the 49 whose round-3 turns were appended to agents 0 and 1
whatever agents the ranker kept.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from fcb_datasets.realdata import errata
from fcb_datasets.realdata.cases import NATURAL, Candidate, Source, answer, make_case
from fcb_datasets.realdata.grading import Gold, one_of_several
from fcb_datasets.realdata.models import DYLAN_MODEL
from fcb_datasets.realdata.panels import Reading, meets, panel_category, too_unreadable
from fcb_datasets.realdata.sourcefile import Record, lines
from harness.errors import SourceDataError
from harness.final_answer import debate_final, plain_number

SOURCE = Source(
    "dylan",
    "DyLAN multi-agent debates on MATH",
    "MIT",
    "Liu et al. (2023), Dynamic LLM-Agent Network: An LLM-agent Collaboration Framework with Agent Team "
    "Optimization, arXiv:2310.02170; problems: Hendrycks et al. (2021), MATH",
    "https://github.com/SALT-NLP/DyLAN",
)
ROUND_ONE = Source(
    "dylan_round1",
    "DyLAN round-1 answers on MATH (debates that stopped after round 1)",
    SOURCE.license,
    SOURCE.citation,
    SOURCE.url,
)
"""A debate that stopped after round 1 holds no exchange: its answers are three or four independent samples of one
model, a case of another kind than a debate, with its own sizes (`ROUND_ONE_SIZES`)."""
FILES = ("math_cot.jsonl.gz", "math_complex.jsonl.gz")
SIZES = {6: 1.0}
"""The share of each number of answers, the same for every category: six, which a three-agent debate of two rounds
has and a debate of the two agents the ranker kept over three rounds. Two-round debates of two or four agents (four
and eight answers) end in too few of the categories a debate shows to be shared out alike."""
ROUND_ONE_SIZES = {3: 0.5, 4: 0.5}
_QUOTED = "One agent solution"  # how a round-2 or round-3 prompt quotes the other agents
_QUOTE = re.compile(r"One agent(?:'s)? solution: ```(.*?)```", re.S)


@dataclass(frozen=True, slots=True)
class Turn:
    text: str
    key: str | None
    correct: bool
    route: str | None  # where the value was read (harness.final_answer.debate_final); None: unreadable


@dataclass(frozen=True)
class Debate:
    """One debate, graded: per stored agent, its turns in round order; and every round-1 solution, the stored agents'
    and those of agents not stored (pruned, or not called after round 1), as the round-2 prompt quotes them."""

    problem_id: str
    problem: str
    gold: str
    run: str  # cot | complex
    agents: tuple[tuple[Turn, ...], ...]
    readable_gold: bool
    whole: bool  # every stored turn's round is known
    first_round: tuple[Turn, ...] = ()  # every round-1 solution, stored or only quoted (debates past round 1)
    level: int = 0  # MATH's level, 1-5 (0: not given)

    @property
    def difficulty(self) -> str:
        """MATH's level, levels 1 and 2 taken together (`sampling.matched`); empty when the record gives none."""
        return str(max(self.level, 2)) if self.level else ""


def read_lines(directory: str | Path) -> list[tuple[str, str, bytes]]:
    """(run, file:line, line) for every debate of both files, in file order."""
    out: list[tuple[str, str, bytes]] = []
    for name in FILES:
        path = Path(directory) / name
        if not path.exists():
            if name == FILES[0]:
                raise SourceDataError(f"{directory}: not a DyLAN folder (no {name})")
            continue
        run = name.removeprefix("math_").removesuffix(".jsonl.gz")
        out.extend((run, f"{path}:{number}", line) for number, line in lines(path, gz=True))
    return out


def grade_debates(batch: list[tuple[str, str, bytes]]) -> list[Debate]:
    """Debates graded, in order. Runs in a worker process."""
    return [_grade(run, where, line) for run, where, line in batch]


def _grade(run: str, where: str, line: bytes) -> Debate:
    try:
        row = Record(orjson.loads(line), where, "a DyLAN debate")
    except orjson.JSONDecodeError as exc:
        raise SourceDataError(f"{where}: not a DyLAN debate record: not JSON: {exc}") from exc
    histories = [[(m.text("role"), m.text("content")) for m in history] for history in row.nested("responses")]
    problem_id, problem, gt = row.text("problem_id"), row.text("problem"), row.text("gt")
    level = row.row.get("prob_level")
    gt = errata.gold(f"math:{problem_id}", gt)
    gold = Gold(gt)
    graded: dict[str, Turn] = {}

    def turn(text: str) -> Turn:
        key = " ".join(text.split())
        if key not in graded:
            graded[key] = Turn(text, *_value(gold, text))
        return graded[key]

    agents = []
    whole = True
    for history in histories:
        users = [content for role, content in history if role == "user"]
        whole &= bool(users) and _QUOTED not in users[0]  # the first stored turn is round 1
        agents.append(tuple(turn(content) for role, content in history if role == "assistant"))
    lengths = Counter(len(a) for a in agents)
    whole &= not (max(lengths, default=0) == 3 and len(agents) == 4)  # round 3 appended to agents 0 and 1 whoever
    first: tuple[Turn, ...] = ()
    if whole and agents and max(len(a) for a in agents) > 1:
        texts = _round_one_texts(histories[0])
        first = tuple(turn(t) for t in texts)
        stored = {" ".join(a[0].text.split())[:200] for a in agents}
        whole &= stored <= {" ".join(t.split())[:200] for t in texts}
    level = level if isinstance(level, int) and 1 <= level <= 5 else 0
    return Debate(problem_id, problem, gt, run, tuple(agents), gold.readable, whole, first, level)


def _round_one_texts(history: list[tuple[str, str]]) -> list[str]:
    """Every round-1 solution of a debate: those an agent's round-2 prompt quotes, and its own (math_cot quotes
    the others only, math_complex all)."""
    users = [content for role, content in history if role == "user"]
    own = next(content for role, content in history if role == "assistant")
    quoted = _QUOTE.findall(users[1]) if len(users) > 1 else []
    start = {" ".join(q.split())[:200] for q in quoted}
    return [*quoted, own] if " ".join(own.split())[:200] not in start else quoted


def _value(gold: Gold, text: str) -> tuple[str | None, bool, str | None]:
    if not gold.readable:
        return None, False, None
    value, correct = gold.grade(debate_final(text))
    return (value.key, correct, value.route) if value else (None, False, None)


def cases(debates: list[Debate], seed: int) -> Iterator[tuple[str, str, Candidate]]:
    """(item, problem, candidate) for every debate that gives one."""
    for d in debates:
        if not (d.readable_gold and d.whole and d.agents) or one_of_several(d.problem):
            continue
        item = f"math:{d.problem_id}"
        rng = random.Random(f"{seed}:dylan:{d.run}:{d.problem_id}")
        made = _round_one(d, item, rng) if max(len(a) for a in d.agents) == 1 else _debate(d, item, rng)
        if made is not None:
            yield item, d.problem, made


def numeric(gold: str) -> bool:
    """A gold answer that is a number, decimal or fraction ("18", "\\frac{1}{4}"): a wrong consensus on it is a
    numeric_consensus_error. The label scheme asks that category for a decimal ground_truth, so a wrong consensus
    on a fraction gives no case (`cases.valid`): majority_wrong_fact would call a number no number."""
    return plain_number(gold) is not None


def _round_one(d: Debate, item: str, rng: random.Random) -> Candidate | None:
    turns = [a[0] for a in d.agents]
    readings = [Reading(DYLAN_MODEL, t.text, t.key, t.correct) for t in turns]
    if too_unreadable(readings):
        return None
    category = panel_category(readings, numeric(d.gold))
    if category is None:
        return None
    answers = [answer(t.text, t.correct, DYLAN_MODEL) for t in turns]
    how = (f"The round-1 answers of a DyLAN debate ({d.run} prompt) that stopped after round 1, each written alone, "
           "unchanged.")  # fmt: skip
    return make_case(
        ROUND_ONE,
        category,
        d.problem,
        answers,
        d.gold,
        item,
        how,
        NATURAL,
        str(len(answers)),
        rng,
        difficulty=d.difficulty,
    )


def debate_category(
    first: list[Turn], final: list[Turn], finalists: list[int], is_numeric: bool, middle: list[Turn] | None = None,
    everyone: list[Turn] | None = None,
) -> str | None:  # fmt: skip
    """The category of a debate from its stored round-1 turns, final turns (of agents ``finalists``), any turns in
    between and every round-1 solution (``everyone``, stored or only quoted). None when it fits none (module
    docstring), when a final answer or any round-1 solution cannot be read, or when the final value is right and an
    agent the case does not hold (pruned, or not called after round 1) gave it in round 1: whether one agent alone
    held it, which tells correct_but_unsupported from genuine_agreement_correct, is then not in the case. (A wrong
    final value is an echo cascade however many held it.)"""
    everyone = first if everyone is None else everyone
    values = [t.key for t in final]
    if any(v is None for v in values) or any(t.key is None for t in everyone):
        return None
    answers = [*first, *(middle or []), *final]
    right = all(t.correct for t in final)
    if len(set(values)) == 1 or right:
        value = values[0]

        def holds(t: Turn) -> bool:  # the right value by equivalence (1/sqrt(3) is sqrt(3)/3), a wrong one by key
            return t.correct if right else t.key == value

        held = sum(map(holds, first))
        switched = any(not holds(first[a]) for a in finalists)
        if not held:
            return None  # the final agents all moved to a value nobody gave in round 1
        if not right:
            return "echo_cascade" if switched else ("numeric_consensus_error" if is_numeric else "majority_wrong_fact")
        if not switched:
            return "genuine_agreement_correct"  # every final agent had it alone in round 1
        # Adopted after a split: independent support only if a 60% majority held it alone in round 1; counted over
        # the round-1 answers the case holds and over every round-1 solution, which must agree.
        backed = meets(held, len(first))
        if backed != meets(sum(map(holds, everyone)), len(everyone)):
            return None  # agents the case does not hold would change the verdict
        return "genuine_agreement_correct" if backed else "correct_but_unsupported"
    _, count = Counter(values).most_common(1)[0]
    if not meets(count, len(values)):
        return "genuine_disagreement"
    correct = sum(t.correct for t in answers)
    wrong_top = Counter(t.key for t in answers if t.key is not None and not t.correct).most_common(1)
    if correct == 1 and wrong_top and meets(wrong_top[0][1], len(answers)):
        return "lone_correct_dissenter"
    return None


def _debate(d: Debate, item: str, rng: random.Random) -> Candidate | None:
    last = max(len(a) for a in d.agents)
    finalists = [i for i, a in enumerate(d.agents) if len(a) == last]
    first = [a[0] for a in d.agents]
    final = [d.agents[i][-1] for i in finalists]
    pruned = len(d.agents) == 2  # the ranker kept two of four; the other two appear only as quoted text
    # the two agents the ranker kept, in a three-round debate: their round-2 answers too, so that the case shows
    # every turn they took
    middle = [d.agents[i][1] for i in finalists] if last == 3 and pruned else []
    if too_unreadable([Reading(DYLAN_MODEL, t.text, t.key, t.correct) for t in [*first, *middle, *final]]):
        return None
    category = debate_category(first, final, finalists, numeric(d.gold), middle, list(d.first_round))
    if category is None:
        return None
    answers = [answer(t.text, t.correct, DYLAN_MODEL) for t in first]
    answers += [answer(t.text, t.correct, DYLAN_MODEL, saw=True) for t in [*middle, *final]]
    seats = [(1, i) for i in range(len(first))] + [(2, i) for i in finalists if middle] + [(last, i) for i in finalists]
    rounds = f"rounds 2 and {last}" if middle else f"round-{last}"
    how = (
        f"A DyLAN debate ({d.run} prompt) as it ran: each agent's round-1 answer, written alone, and the "
        f"{rounds} answers, written after reading the other agents' solutions, unchanged"
        + ("; the two agents the ranker pruned after round 2 are not stored." if pruned else ".")
    )
    return make_case(SOURCE, category, d.problem, answers, d.gold, item, how, NATURAL, str(len(answers)), rng,
                     seats=seats, difficulty=d.difficulty)  # fmt: skip
