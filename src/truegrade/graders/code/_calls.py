"""Calls into a program's sessions for one response: in a secret random order, counted in CPU
time, and replayed where an order could still be learned.

The threat is a *positional* program: it answers the n-th call with the n-th expected value of
the dataset's tests, never computing anything, or otherwise answers from state. Two things stop
it, neither of which the program can see:

* Calls known before the tests run (every call case; the calls a check makes first with literal
  arguments) are sent as one request in an order drawn from the operating system's random
  source, so the session sees them in an order nobody wrote down; the harness hands each answer
  to the test that asked for it. The draw for call cases is one in which the expected answers
  come in a different order than the cases give them, whenever two differ: a program answering
  in the dataset's order fails every time, not by chance.
* Calls made as a check runs (a loop's, a call with another answer's value) arrive in the
  check's order, so when the check passes with any such call, all its calls are replayed in a
  fresh session in a new secret order, and the check is run again on those answers: it must
  pass again. The answers are judged as the check judges them, so a correct program whose answers
  vary (a random start for Newton's method, a dict filled in any order) passes.

Nothing about a replay can be learned by the session it checks: a session is forked from the
sandbox's root, whose memory holds no earlier task, with a random PID, under a filter that
leaves it no file, pipe, process, thread count or inode it could leave behind or peek through
(``truegrade.sandbox._zygote``).

Every limit is CPU time as the kernel counts it (``CallStream``), with the wall clock as the
backstop only: a loaded machine never turns an answer into a time-out.

What it must never do: send an expected value into the sandbox, or take an answer for a call
other than the one it was given for.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from truegrade._budgets import wall_backstop_s
from truegrade.sandbox import (
    CallResult,
    CallStream,
    PlainDataError,
    Program,
    decode_value,
    encode_value,
)

__all__ = [
    "UNKNOWN",
    "Budget",
    "Calls",
    "Logged",
    "SandboxBroke",
    "call_key",
    "replay_order",
    "replay_rounds",
]

SESSION_GOES_ON = frozenset({"ok", "raised", "bad_value"})
"""Call statuses after which the session still runs (any other ends it)."""

_SECRET = random.SystemRandom()


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()
"""An answer a test's call wants that is not known ahead (``Calls.send_ahead``)."""


class SandboxBroke(BaseException):
    """The sandbox itself failed mid-sample: the sample gets an error, not a fail (a
    BaseException, so that a check's ``except Exception`` does not take it for the program's)."""


def call_key(args: Any, kwargs: Any) -> str:
    """Encoded arguments as one text: ``True`` and ``1``, ``1.0`` and ``1`` stay apart."""
    return json.dumps([args, kwargs], separators=(",", ":"))


@dataclass
class Budget:
    """A response's time budget for its calls: CPU time of all its sessions together, with a
    wall-clock backstop for the whole (``wall_backstop_s``)."""

    cpu_s: float
    spent: float = 0.0
    wall_end: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.wall_end = time.monotonic() + wall_backstop_s(self.cpu_s)

    def left(self) -> float:
        """CPU time still to spend (0.0 once the wall-clock backstop has passed)."""
        if time.monotonic() >= self.wall_end:
            return 0.0
        return self.cpu_s - self.spent

    def spend(self, cpu_s: float) -> None:
        self.spent += cpu_s


@dataclass
class Logged:
    """One call as it was made: its arguments (as sent), answer and test."""

    args: list[Any]
    kwargs: dict[str, Any]
    key: str
    fingerprint: bytes
    tag: int
    live: bool
    """Made in the order the test made it, not in a shuffled request."""


class _Ahead:
    """Calls sent as one request in a secret order; each answer kept until a test asks for it."""

    def __init__(self, stream: CallStream, keys: list[str], budget: Budget) -> None:
        self.stream = stream
        self.keys = keys  # in the order sent
        self.budget = budget  # charged as each answer is read, whoever asks for it
        self.read = 0
        self.kept: dict[str, list[CallResult]] = {}
        self.pending = Counter(keys)
        self.closed = False

    def take(self, key: str) -> CallResult | None:
        """The answer to a call with ``key``, read from the stream as far as needed; None when
        no such call is pending, or the session ended (or was closed) before it was answered."""
        kept = self.kept.get(key)
        if kept:
            return kept.pop(0)
        if self.closed or not self.pending[key]:
            return None
        while self.read < len(self.keys):
            result = self.stream.next()
            if result is None:
                return None
            self.budget.spend(result.cpu_s)
            sent = self.keys[self.read]
            self.read += 1
            self.pending[sent] -= 1
            if sent == key:
                return result
            self.kept.setdefault(sent, []).append(result)
            if result.status not in SESSION_GOES_ON:
                return None  # the session ended on that call: what follows was never answered
        return None

    @property
    def done(self) -> bool:
        return self.closed or self.read >= len(self.keys)

    def close(self) -> None:
        """Read no more (the session ends if it owes answers); what was read is still taken."""
        self.closed = True
        self.stream.close()


@dataclass
class Calls:
    """Calls into the sandbox for one pass of a response's tests: the budget, the shuffled
    request of calls known ahead, a log for the replay, and what the tests must not swallow.

    ``answers``, when given (a replay's), answers calls before anything goes to the sandbox.
    """

    program: Program
    budget: Budget
    call_timeout_s: float
    fresh_process: bool
    replay_odds: int = 0
    limits: dict[int, float] = field(default_factory=dict)  # per test, CPU seconds
    cap: int | None = None  # the largest answer accepted (an expected answer may be large)
    answers: dict[str, list[CallResult]] | None = None
    log: list[Logged] = field(default_factory=list)
    failures: list[CallResult] = field(default_factory=list)
    raised: list[BaseException] = field(default_factory=list)
    count: int = 0
    broken: str | None = None  # the sandbox failed: no verdict is possible
    unsendable: str | None = None  # the check passed an argument that cannot cross
    ahead: _Ahead | None = None
    sent: list[str] = field(default_factory=list)  # the keys of the shuffled request, in order
    order: list[int] = field(default_factory=list)  # which call of ``send_ahead`` each key is
    known: dict[int, tuple[tuple[Any, Any], str]] = field(default_factory=dict)
    """The encoded arguments and key of each tagged call sent ahead, until the call is made."""

    def timeout(self, tag: int = -1) -> float | None:
        """The CPU time the next call may use, or None when the budget has none left."""
        left = self.budget.left()
        if left < 0.01:
            return None
        return min(self.limits.get(tag, self.call_timeout_s), left)

    def send_ahead(
        self,
        calls: list[tuple[list[Any], dict[str, Any]]],
        tags: list[int] | None = None,
        expected: list[Any] | None = None,
    ) -> None:
        """Send calls the tests will make as one request, in a secret order: the session answers
        each while the harness checks the previous one, and ``call`` takes the answer to its
        arguments from here. With ``expected`` (the tests' answers, in the tests' order) the
        order is one that moves an answer, when any two differ."""
        if self.fresh_process or len(calls) < 2 or self.answers is not None:
            return
        if self.timeout() is None:
            return
        try:
            encoded = [(encode_value(list(a)), encode_value(k)) for a, k in calls]
        except PlainDataError:
            return
        keys = [call_key(*pair) for pair in encoded]
        if expected is not None:
            try:  # where an answer is not known ahead, its call stands for it
                wanted = [
                    key if e is UNKNOWN else call_key(encode_value(e), None)
                    for key, e in zip(keys, expected, strict=True)
                ]
            except PlainDataError:
                wanted = keys
        else:
            wanted = keys  # an order that moves a call; whether it moved an answer is seen after
        order = replay_order(wanted, differ=True)
        per_call = [self.limits.get(tags[i] if tags else -1, self.call_timeout_s) for i in order]
        stream = self.program.stream(
            [calls[i] for i in order],
            timeout_s=self.call_timeout_s,
            budget_s=self.budget.left(),
            cap=self.cap,
            limits=per_call,
        )
        self.sent = [keys[i] for i in order]
        self.order = order
        if tags is not None and len(set(tags)) == len(tags):  # a call by its tag: encoded once
            self.known = {
                tag: (pair, key) for tag, pair, key in zip(tags, encoded, keys, strict=True)
            }
        self.ahead = _Ahead(stream, self.sent, self.budget)

    def stop_ahead(self) -> None:
        """Stop taking answers from the shuffled request (its session ends if it owes any)."""
        if self.ahead is not None:
            self.ahead.close()
            self.ahead = None

    def _go_live(self) -> None:
        """The tests asked for a call the request does not hold next: its session ends (the
        answers already read are still taken), and the call goes to a session of its own."""
        if self.ahead is not None and not self.ahead.done:
            self.ahead.close()

    def call(self, args: Any, kwargs: Any, tag: int = -1) -> CallResult:
        self.count += 1
        known = self.known.pop(tag, None) if tag >= 0 else None
        if known is not None:  # sent ahead with this tag (the same arguments, already encoded)
            encoded, key = known
        else:
            try:
                encoded = encode_value(list(args)), encode_value(kwargs)
            except PlainDataError as exc:
                self.unsendable = str(exc)
                raise
            key = call_key(*encoded)
        snapshot = decode_value(encoded[0]), decode_value(encoded[1])
        result, live = self._taken(key), False
        if result is None:
            timeout_s = self.timeout(tag)
            if timeout_s is None:
                return CallResult("timeout", error="the program's time budget ran out")
            self._go_live()
            if self.fresh_process:
                self.program.reset()
            result = self.program.call_many(
                [(args, kwargs)], timeout_s=timeout_s, budget_s=timeout_s, cap=self.cap
            )[0]
            live = True
            self.budget.spend(result.cpu_s)
        if result.status == "sandbox_error":
            self.broken = result.error
            raise SandboxBroke(result.error)
        if result.fingerprint:
            self.log.append(Logged(*snapshot, key, result.fingerprint, tag, live))
        return result

    def _taken(self, key: str) -> CallResult | None:
        if self.answers is not None:
            kept = self.answers.get(key)
            if kept:
                return kept.pop(0)
        if self.ahead is not None:
            return self.ahead.take(key)
        return None

    def rounds(self) -> int:
        """How many replays the pass needs: none when every call was answered in a secret order
        that moved an answer (and ``replay_odds`` asks no more), else enough for the odds."""
        if self.fresh_process or len(self.log) < 2 or self.answers is not None:
            return 0
        fingerprints = [entry.fingerprint for entry in self.log]
        wanted = replay_rounds(fingerprints, self.replay_odds)
        shuffled = not any(entry.live for entry in self.log) and self._moved(fingerprints)
        return max(0, wanted - 1) if shuffled else wanted

    def _moved(self, fingerprints: list[bytes]) -> bool:
        """Whether the shuffled request put some answer where the tests' own order has another
        (when every answer is the same, there is no order to learn)."""
        if len(set(fingerprints)) < 2:
            return True
        sent = self._sent_order()
        return sent is not None and [fingerprints[i] for i in sent] != fingerprints

    def _sent_order(self) -> list[int] | None:
        """The log's entries in the order their calls were sent, or None when that is not known
        (a call answered from elsewhere)."""
        positions: dict[str, list[int]] = {}
        for place, key in enumerate(self.sent):
            positions.setdefault(key, []).append(place)
        placed = []
        for index, entry in enumerate(self.log):
            slots = positions.get(entry.key)
            if not slots:
                return None
            placed.append((slots.pop(0), index))
        return [index for _, index in sorted(placed)]

    def replay(self) -> tuple[dict[str, list[CallResult]], CallResult | None]:
        """Every logged call again, in a fresh session and a secret order in which some answer
        the log has moves: the answers by key (for the tests to be run again on), and the
        failure that ended the replay's session early, if one did."""
        fingerprints = [entry.fingerprint for entry in self.log]
        order = replay_order(fingerprints, differ=True)
        self.program.reset()
        replayed = [self.log[i] for i in order]
        left = self.budget.left()
        per_call = [self.limits.get(entry.tag, self.call_timeout_s) for entry in replayed]
        results = []
        if left >= 0.01:
            results = self.program.call_many(
                [(entry.args, entry.kwargs) for entry in replayed],
                timeout_s=self.call_timeout_s,
                budget_s=left,
                cap=self.cap,
                limits=per_call,
            )
        answers: dict[str, list[CallResult]] = {}
        ended = None
        for entry, result in zip(replayed, results, strict=False):
            self.budget.spend(result.cpu_s)
            answers.setdefault(entry.key, []).append(result)
            if result.status not in SESSION_GOES_ON:
                ended = result
        if len(results) < len(replayed) and ended is None:
            ended = CallResult("timeout", error="the program's time budget ran out")
        return answers, ended

    def again(self, answers: dict[str, list[CallResult]]) -> Calls:
        """A pass that takes its answers from a replay first (and makes any other call live)."""
        return Calls(
            self.program,
            self.budget,
            self.call_timeout_s,
            self.fresh_process,
            limits=self.limits,
            cap=self.cap,
            answers=answers,
        )


def replay_order(answers: list[Any], *, differ: bool = False) -> list[int]:
    """Which call goes at each step: each once, in an order drawn from the operating system's
    random source, never seen by the sandbox but as the calls themselves.

    With ``differ``, the draw is one in which the answers at some step differ from those of
    ``answers`` (in their own order), when any two differ: a program that answers by its place
    in the session (a counter, or a memo of the arguments in the order they came) then fails
    every time, not by chance. A positional program would still have to guess which of the
    arrangements of the answers the draw is.
    """
    order = list(range(len(answers)))
    while True:
        _SECRET.shuffle(order)
        if not differ or [answers[i] for i in order] != answers or len(set(answers)) < 2:
            return order


def replay_rounds(answers: list[Any], odds: int = 0) -> int:
    """How many rounds, each in a fresh process and a new order, make a guess of every round's
    arrangement of ``answers`` right at most once in ``odds`` tries (the ``replay_odds``
    option; 0 or 1: one round). A program that knew which answer each call wanted would still
    have to guess the order: the first round is one of M - 1 arrangements (M, the distinct
    arrangements of the answers: n! for n different ones), each later one of M. With odds of
    20: one from 21 arrangements up, two from 6, three for 4 and 5, four for 3, six for 2."""
    arrangements = _arrangements(answers, cap=odds)
    if odds < 2 or arrangements < 2:
        return 1
    rounds, chances = 1, arrangements - 1
    while chances < odds:
        rounds, chances = rounds + 1, chances * arrangements
    return rounds


def _arrangements(answers: list[Any], cap: int) -> int:
    """The number of distinct orders of ``answers`` (the multinomial coefficient), or ``cap + 1``
    once it is larger (it is never computed whole for a long pass)."""
    total, count = 0, 1
    for repeats in Counter(answers).values():
        total += repeats
        if repeats < total:
            if total > cap:
                return cap + 1
            count *= math.comb(total, repeats)
            if count > cap:
                return cap + 1
    return count
