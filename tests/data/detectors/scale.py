"""Detectors for the engine and batching tests. Each answers by a fixed rule on the request alone, so a run gives
the same predictions wherever it runs. Tests copy this file into a temporary folder: the marker files that the
`Killer` and `Batched` leave go beside the copy."""

import ctypes
import dataclasses
import enum
import os
import signal
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RISKS = ("low", "medium", "high")


def rule(request: dict) -> dict:
    """A deterministic reply: the risk from the number of answers and distinct answer texts."""
    n, distinct = len(request["answers"]), len({a["text"] for a in request["answers"]})
    return {"false_consensus_risk": RISKS[(n + distinct) % 3], "risk_score": round(distinct / n, 6)}


def plain(request: dict) -> dict:
    return rule(request)


async def asynchronous(request: dict) -> dict:
    return rule(request)


def hangs_on_order_3(request: dict) -> dict:
    """Never returns (well, not for 60 s) on the case whose question names order 3; instant on the others."""
    if "(order 3)" in request["task"]:
        time.sleep(60)
        (HERE / "hung_call_returned").touch()  # only if the process lived until the call ended
    return rule(request)


def order(request: dict) -> int:
    return int(request["task"].split("(order ")[1].split(")")[0])


CRASHES_ON = (7, 23)


def crashes(request: dict) -> dict:
    """Ends its process on orders 7 (os._exit) and 23 (a segfault), whichever worker runs them; the rule elsewhere."""
    if order(request) == CRASHES_ON[0]:
        os._exit(3)
    if order(request) == CRASHES_ON[1]:
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    return rule(request)


def _claim(name: str) -> bool:
    """True for the first caller in any process: the marker file is created once."""
    try:
        os.close(os.open(HERE / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


class Killer:
    """Kills its own process with SIGKILL on its 4th call, once across all processes (the first to claim it)."""

    def __init__(self) -> None:
        self.calls = 0

    def assess(self, request: dict) -> dict:
        self.calls += 1
        if self.calls == 4 and _claim("killed.marker"):
            os.kill(os.getpid(), signal.SIGKILL)
        return rule(request)


class Batched:
    """Loads its "model" once in setup(); answers whole batches, noting each batch's size in batches.log."""

    def __init__(self) -> None:
        self.model = None

    def setup(self) -> None:
        self.model = rule
        with open(HERE / "setups.log", "a") as log:
            log.write(f"{os.getpid()}\n")

    def assess_batch(self, requests: list) -> list:
        with open(HERE / "batches.log", "a") as log:
            log.write(f"{len(requests)}\n")
        return [self.model(r) for r in requests]


class BatchFailures:
    """A batch holding order 5 raises; a batch holding order 9 comes back one reply short."""

    async def assess_batch(self, requests: list) -> list:
        tasks = " ".join(r["task"] for r in requests)
        with open(HERE / "failures.log", "a") as log:  # each batch's orders: the test derives its errors from them
            log.write(" ".join(r["task"].split("(order ")[1].split(")")[0] for r in requests) + "\n")
        if "(order 5)" in tasks:
            raise RuntimeError("the model ran out of memory")
        replies = [rule(r) for r in requests]
        return replies[:-1] if "(order 9)" in tasks else replies


class Level(str, enum.Enum):  # noqa: UP042 - a (str, Enum), whose str() is not its value
    LOW, MEDIUM, HIGH = "low", "medium", "high"


class Source(enum.Enum):
    RULE = "rule"


@dataclasses.dataclass
class Why:
    answers: int
    source: Source


def typed(request: dict) -> dict:
    """The rule's reply in this module's own types: a str enum for the risk, a dataclass holding an enum."""
    reply = rule(request)
    n = len(request["answers"])
    return {**reply, "false_consensus_risk": Level(reply["false_consensus_risk"]), "why": Why(n, Source.RULE)}


def busy_forever(request: dict) -> dict:
    """Notes its process id in busy.PID, then sleeps for ten minutes: a worker in the middle of a long call."""
    (HERE / f"busy.{os.getpid()}").touch()
    time.sleep(600)
    return rule(request)


def spins_when_stuck(request: dict) -> dict:
    """A CPU loop forever on a request whose task is "stuck"; else low, with the id of the process that answered."""
    while request["task"] == "stuck":
        pass
    return {"false_consensus_risk": "low", "pid": os.getpid()}
