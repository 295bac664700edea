"""No channel from a first pass to its replay, nor from one response to the next: a program
that never computes its answers gets no reward however it talks to its later processes.

A first pass that passes is replayed in a fresh process, forked from the zygote, in a secret
random order, and must give the same answers. The programs here are positional (each knows the
check's expected values in order, from the dataset, and computes nothing) or search for the
answers across a group of rows; all pass on today's code through two channels:

- The PID. Each session is a process of the sandbox's PID namespace, and so is every thread it
  starts. PIDs are handed out one after another, so a process that starts threads until the
  next PID has the residue it wants (modulo 4096) writes a number into the PID of the next
  process: the replay's session, the next call's session (``fresh_process_per_call``), the
  next row's, the next test's. A program first checks that a thread it starts gets the PID
  after its own (PIDs come in turn); where they do not, it takes nothing from its PID.
- The request pipe. Calls sent ahead wait on descriptor 3, and ``tee(2)`` copies what waits in
  a pipe into another without consuming it: at its first call a session sees every call of its
  pass, in the order asked.

The attacks (today, measured here):

- Positional, PID and pipe together, on HumanEval/13, /23, /60 and MBPP (sanitized) 2: the
  first pass answers in the check's order and, at its last call, writes the ranks of the
  arguments in that order (one of n! orders) into the replay's PID; the replay peeks at its
  own calls, ranks them, and answers as the first pass was asked. With a process per call the
  PID carries the call's number instead. Every row passes (each problem twice in one sandbox: 8
  of 8) under the defaults, ``replay_odds: 20``, ``fresh_sandbox: true`` and
  ``fresh_process_per_call: true``.
- Positional, the pipe alone: a program that also knows the rank of each call's arguments in
  the check's order answers each call from where its arguments rank among those in view, the
  same in any order. Every row passes (4 of 4).
- The group search (HumanEval/109, 36 copies of one program in one batch, one worker): a row
  answers by rank from a table of 32 and writes the table into the next PID with the order it
  was asked in (three of its ranks); only a passing first pass is replayed, so the next
  session is asked either in the same order (the last pass failed: try the next table) or in
  another (it is the replay: keep the table). It computes nothing; rows 20 to 36 pass.
- Standard input, ``score: all`` (tests stop at the first failure): a C++ program that never
  tests primality answers each test from what earlier rows learned, carried in the PIDs of the
  tests' processes (where the last row stopped says which answer was wrong). 5 of 12 rows pass.

Each test asserts the safe outcome: no row passes. Where the channel is closed, the programs
fall back to what any positional program does (answer by place) and fail, with no chance left
to them: a closed PID channel reads as nothing, and the replay's order is a secret.
"""

from __future__ import annotations

import ast
from typing import Any

import pytest

from tests.data.published_cases import published
from tests.graders.code.humaneval import problems
from tests.graders.code.humaneval import row as humaneval_row
from truegrade.core import apply_preset
from truegrade.exec import Engine
from truegrade.graders.code import CodeGrader

COMMON = r'''import ctypes
import itertools
import marshal
import os
import struct
import threading
import zlib

_libc = ctypes.CDLL(None, use_errno=True)
_session = {}


def _take_a_pid():
    """Start and join a thread: it takes the next PID of the sandbox. Returns that PID."""
    thread = threading.Thread(target=int)
    thread.start()
    thread.join()
    return thread.native_id


def _pids_in_turn():
    """Whether this process's PIDs come one after another (then they can carry a message)."""
    return _take_a_pid() == os.getpid() + 1


def _burn_to(residue, modulus):
    """Take PIDs until the next process's PID is ``residue`` modulo ``modulus``."""
    while (_take_a_pid() + 1) % modulus != residue:
        pass


def _plain(value):
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict) and len(value) == 1 and "t" in value:
        return tuple(_plain(item) for item in value["t"])
    return value


def _waiting_calls():
    """The arguments of every call still waiting on the request pipe (descriptor 3), read with
    tee(2): copied into a pipe of this process's own and left where they are."""
    peek_r, peek_w = os.pipe()
    size = _libc.tee(3, peek_w, 1 << 16, 2)  # SPLICE_F_NONBLOCK
    data = os.read(peek_r, size) if size > 0 else b""
    os.close(peek_r)
    os.close(peek_w)
    calls = []
    while len(data) >= 8:
        head, blob = struct.unpack(">II", data[:8])
        calls += [_plain(args) for args, _ in marshal.loads(data[8 : 8 + head])["calls"]]
        data = data[8 + head + blob :]
    return calls


def _in_view(args):
    """This call's arguments and the waiting calls', each as its repr, in the order asked."""
    return [repr(list(args)), *(repr(list(a)) for a in _waiting_calls())]
'''
"""What the Python attacks share: taking PIDs, and peeking at the waiting calls."""

POSITIONAL = (
    COMMON
    + r"""
EXPECTED = @EXPECTED@  # the check's expected values, in the check's order
N = len(EXPECTED)
ORDERS = list(itertools.permutations(range(N)))
M = 4096  # PIDs are read modulo M, in windows of their own for each problem
WINDOW = zlib.crc32(repr(EXPECTED).encode(), 1) % 12
PASS_ORDER = 1024 + 128 * WINDOW  # PID % M - PASS_ORDER < N!: the first pass's order was that
CALL = 2560 + 8 * WINDOW  # PID % M - CALL < N: this process answers that call (one per process)


def @ENTRY@(*args):
    key = repr(list(args))
    if not _session:  # this process's first call
        seen = _in_view(args)
        told = os.getpid() % M if _pids_in_turn() else -1
        if len(seen) == N:  # every call in view: rank them
            ranks = sorted(seen)
            order = tuple(ranks.index(k) for k in seen)
            if 0 <= told - PASS_ORDER < len(ORDERS) and ORDERS[told - PASS_ORDER] != order:
                order = ORDERS[told - PASS_ORDER]  # the replay: answer as the first pass was asked
            _session.update(ranks=ranks, order=order, calls=0)
        else:  # one call at a time (a process per call): the PID says which call this is
            _session["call"] = told - CALL if 0 <= told - CALL < N else 0
    if "order" in _session:
        _session["calls"] += 1
        answer = EXPECTED[_session["order"].index(_session["ranks"].index(key))]
        if _session["calls"] == N:  # tell the next process the order of this pass
            _burn_to(PASS_ORDER + ORDERS.index(_session["order"]), M)
        return answer
    answer = EXPECTED[_session["call"] % N]
    _session["call"] += 1
    _burn_to(CALL + _session["call"] % N, M)
    return answer
"""
)
"""PID and pipe together: the first pass tells the replay the order it was asked in."""

TEE_ONLY = (
    COMMON
    + r"""
EXPECTED = @EXPECTED@  # the check's expected values, in the check's order
ORDER = @ORDER@  # the rank of each call's arguments among all of them, in the check's order


def @ENTRY@(*args):
    if not _session:  # this process's first call: rank the calls in view
        _session["ranks"] = sorted(_in_view(args))
        _session["calls"] = 0
    key = repr(list(args))
    if len(_session["ranks"]) == len(EXPECTED):  # every call in view: answer by rank
        return EXPECTED[ORDER.index(_session["ranks"].index(key))]
    _session["calls"] += 1  # else by place
    return EXPECTED[(_session["calls"] - 1) % len(EXPECTED)]
"""
)
"""The pipe alone: each call answered by where its arguments rank among the calls in view."""

SEARCH = (
    COMMON
    + r"""
M = 4096
FAILED = 1024  # PID % M - FAILED < 32 * 60: a first pass answered from table T, asked in order O
REPLAYED = 3072  # PID % M - REPLAYED < 32: a replay answered from table T (so its pass passed)


def @ENTRY@(*args):
    if not _session:  # this process's first call: every call is in view
        seen = _in_view(args)
        ranks = sorted(seen)
        order = [ranks.index(k) for k in seen]  # the ranks of the arguments, in the order asked
        signs = list(itertools.permutations(range(len(seen)), 3))
        sign = signs.index((order[0], order[1], order[-1]))
        told = os.getpid() % M if _pids_in_turn() else -1
        table, replay = 0, False
        if 0 <= told - FAILED < 32 * len(signs):
            table, last = divmod(told - FAILED, len(signs))
            if last == sign:  # asked as the last pass was, with no replay between: it failed
                table = (table + 1) % 32  # try the next table
            else:  # asked in another order: this is the replay of a pass that passed
                replay = True
        elif 0 <= told - REPLAYED < 32:
            table = told - REPLAYED  # the last pass was replayed: its table passed
        _burn_to(REPLAYED + table if replay else FAILED + table * len(signs) + sign, M)
        _session.update(ranks=ranks, table=table)
    rank = _session["ranks"].index(repr(list(args)))
    return bool(_session["table"] >> rank & 1)  # never computed: looked up by rank
"""
)
"""The group search: a table of answers by rank, the next one tried after a row that failed."""

PRIME = r"""#include <cstdio>
#include <thread>
#include <unistd.h>
#include <sys/syscall.h>

// Never tests a number: answers the i-th test of its row from what earlier rows learned, read
// from its own PID, and leaves what it knows in the PID of the next test's process.
const long M = 8192, OFFSET = 1024, CODES = 16 * 4 * 5 * 16;
static long last_tid;

static void take_a_pid() { last_tid = syscall(SYS_gettid); }

// start a thread and wait for it: it takes the next PID; returns that PID
static long new_pid() {
    std::thread thread(take_a_pid);
    thread.join();
    return last_tid;
}

// take PIDs until the next process's PID is residue modulo M
static void burn_to(long residue) {
    while ((new_pid() + 1) % M != residue) {
    }
}

int main() {
    long n;
    if (scanf("%ld", &n) != 1) return 1;
    // the state: answers (bit i set: test i is NO), how many leading ones are confirmed, the
    // position of the test that wrote it, and n % 16 of a row's first test
    long answers = 0, confirmed = 0, position = 0, first = n % 16;
    bool in_turn = new_pid() == getpid() + 1;  // PIDs come one after another: they carry it
    long code = getpid() % M - OFFSET;
    if (in_turn && code >= 0 && code < CODES) {
        answers = code % 16, code /= 16;
        confirmed = code % 5, code /= 5;
        long before = code % 4;
        first = code / 4;
        if (n % 16 == first) {  // a new row: the last one ended at test `before`
            answers ^= 1L << before;  // that answer was wrong (or it was the last test)
            if (before >= confirmed) confirmed = before + 1;
        } else {  // the row went on: the answer before was right
            position = before + 1;
            if (position > confirmed) confirmed = position;
        }
    }
    burn_to(OFFSET + ((first * 4 + position) * 5 + confirmed) * 16 + answers);
    puts(answers >> position & 1 ? "NO" : "YES");
    return 0;
}
"""
"""The stdin/stdout search: never tests a number."""

PROBLEMS = ("HumanEval/13", "HumanEval/23", "HumanEval/60", "mbpp_sanitized/2")
OPTIONS = [
    pytest.param({}, id="defaults"),
    pytest.param({"replay_odds": 20}, id="replay_odds 20"),
    pytest.param({"fresh_sandbox": True}, id="fresh_sandbox"),
    pytest.param({"fresh_process_per_call": True}, id="fresh_process_per_call"),
]


def _asserted(check: str) -> list[tuple[list[Any], Any]]:
    """``(arguments, expected value)`` of each assert of a check, in order: what a positional
    program knows of the dataset (the expected values; the tee-only one, their ranks too)."""
    tree = ast.parse(check)
    body = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check")
    found = []
    for statement in body.body:
        if not isinstance(statement, ast.Assert) or not isinstance(statement.test, ast.Compare):
            continue
        left, right = statement.test.left, statement.test.comparators[0]
        if isinstance(left, ast.Call) and getattr(left.func, "id", "") == "set":
            left, right = left.args[0], right.args[0]  # set(f(...)) == set((4, 5))
        assert isinstance(left, ast.Call)
        found.append(([ast.literal_eval(a) for a in left.args], ast.literal_eval(right)))
    return found


def _rows(template: str) -> list[dict[str, Any]]:
    """The attack ``template`` as the response to each of ``PROBLEMS``."""
    humaneval = problems()
    mbpp = {f"mbpp_sanitized/{r['task_id']}": r for r in published("mbpp_sanitized.jsonl.gz")}
    rows = []
    for name in PROBLEMS:
        if name in humaneval:
            problem = humaneval[name]
            entry, check = problem["entry_point"], problem["test"]
        else:
            spec = apply_preset({**mbpp[name], "response": ""}, "mbpp")["reference"]
            entry, check = spec["entry_point"], spec["check"]
        calls = _asserted(check)
        keys = [repr(list(args)) for args, _ in calls]
        program = (
            template.replace("@ENTRY@", entry)
            .replace("@EXPECTED@", repr([want for _, want in calls]))
            .replace("@ORDER@", repr([sorted(keys).index(k) for k in keys]))
        )
        if name in humaneval:
            rows.append(humaneval_row(humaneval[name], program))
        else:
            rows.append(apply_preset({**mbpp[name], "response": program}, "mbpp"))
    return rows


def _assert_none_passes(rows: list[dict[str, Any]], **options: Any) -> None:
    """Grade ``rows`` one after another in one sandbox (one worker): none may pass."""
    engine = Engine(workers=1)
    grader = CodeGrader(CodeGrader.Options(call_timeout_s=10, **options), engine=engine)
    with engine:
        grades = grader.grade_batch(rows)
    passed = [
        str(row.get("id", row.get("task_id")))
        for row, grade in zip(rows, grades, strict=True)
        if grade.passed
    ]
    assert passed == [], f"{len(passed)} of {len(rows)} rows passed: {passed}"
    assert all(g.error is None for g in grades), [g.error for g in grades]


@pytest.mark.slow
@pytest.mark.parametrize("options", OPTIONS)
def test_a_positional_program_gets_nothing_from_the_pid_and_the_request_pipe(options):
    """Twice over the four problems in one sandbox, so that each row also follows another."""
    rows = _rows(POSITIONAL) * 2
    _assert_none_passes(rows, **options)


def test_a_positional_program_gets_nothing_from_peeking_at_the_waiting_calls():
    rows = _rows(TEE_ONLY)
    _assert_none_passes(rows)


@pytest.mark.slow
def test_a_group_learns_nothing_from_whether_the_row_before_passed():
    """36 copies of the search for HumanEval/109 in one batch, one worker: no row passes (rows
    20 to 36 did)."""
    problem = problems()["HumanEval/109"]
    program = SEARCH.replace("@ENTRY@", problem["entry_point"])
    rows = [humaneval_row(problem, program, sample_id=i) for i in range(36)]
    _assert_none_passes(rows)


@pytest.mark.slow
@pytest.mark.system_tool("g++", package="g++")
def test_stdio_rows_learn_nothing_from_the_processes_of_earlier_tests():
    """24 copies of a row whose four tests ask whether a number is prime, graded with ``score:
    all`` in one batch, one worker (5 of 12 passed when PIDs were handed out in order).

    A PID now says nothing, so the program reads noise: where the noise looks like a message
    (about 60% of PIDs) it answers four bits at random, and passes one row in 16, as any
    guess would; elsewhere it answers its default and fails. Its chance per row is about
    0.04, so 24 rows pass about one; more than six would happen by chance once in ten
    thousand runs, where the search that worked passed half of them."""
    tests = [
        {"stdin": f"{number}\n", "stdout": answer}
        for number, answer in ((7, "YES"), (9, "NO"), (11, "YES"), (15, "NO"))
    ]
    spec = {"language": "cpp", "time_limit_s": 2, "stdio": tests}
    rows = [{"id": i, "response": f"```cpp\n{PRIME}```\n", "reference": spec} for i in range(24)]
    engine = Engine(workers=1)
    grader = CodeGrader(CodeGrader.Options(call_timeout_s=10, score="all"), engine=engine)
    with engine:
        grades = grader.grade_batch(rows)
    assert all(g.error is None for g in grades), [g.error for g in grades]
    passed = [row["id"] for row, grade in zip(rows, grades, strict=True) if grade.passed]
    assert len(passed) <= 6, f"{len(passed)} of {len(rows)} rows passed: {passed}"


PIDS = r"""#include <cstdio>
#include <thread>
#include <unistd.h>
#include <sys/syscall.h>

static long last;
static void take() { last = syscall(SYS_gettid); }

int main() {
    long burn;
    if (scanf("%ld", &burn) != 1) return 1;
    long first = getpid();
    for (long i = 0; i < burn; i++) {
        std::thread thread(take);
        thread.join();
    }
    printf("%ld %ld\n", first, burn ? last : first);
    return 0;
}
"""


@pytest.mark.system_tool("g++", package="g++")
def test_a_tests_pid_is_drawn_afresh_whatever_the_test_before_it_did():
    """The channel itself: a test's process takes 300 PIDs; were PIDs handed out in order, the
    next test's process would get the one after its last, and the one after that without the
    burn. Each is drawn at random: neither follows (a chance of one in millions)."""
    from truegrade.graders.code._languages import language_named, toolchain
    from truegrade.sandbox import Sandbox

    chain = toolchain(language_named("cpp"), "main.cpp", 256)
    assert not isinstance(chain, str), chain
    with Sandbox() as box:
        if not box.hello.get("random_pids"):
            pytest.skip("this kernel lets the sandbox's root draw no PIDs")  # doctor says so
        built = box.build({"main.cpp": PIDS.encode()}, chain.build, keep=chain.keep,
                          timeout_s=120, env=chain.env)  # fmt: skip
        assert built.ok, built.build
        runs = [built.exec(chain.run, f"{n}\n", timeout_s=20, env=chain.env) for n in (300, 0, 0)]
    pids = [tuple(int(x) for x in run.stdout.split()) for run in runs]
    (first, last), (second, _), (third, _) = pids
    assert last - first >= 300  # the burn took its PIDs
    assert second != last + 1 and third != second + 1, pids
