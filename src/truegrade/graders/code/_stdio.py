"""Stdin/stdout programs in any supported language: build once, run every test, judge each.

The program is built once in the sandbox's scratch directory (a compiler, or a syntax check for
a script), with its own wall-clock, CPU and memory bounds; a failed build is ``compile_error``
for every test, with the compiler's message (truncated). Each test is then one ``exec`` of what
the build made, in a fresh process, on the test's stdin, with the per-test time limit (wall
clock and CPU) and memory limit, killed at the deadline. The expected output never enters the
program's sandbox: stdout comes back and is compared here, or by a special judge (a checker
program, sandboxed too, in a sandbox of its own, so the program's sandbox never holds an
expected output).

A special judge that fails to give a verdict on the program's output (it crashes, is killed,
runs past its bounds, or exits with a status that is no verdict) fails that test, flagged
``checker_failed``: the program chose that output, and an error, which a trainer skips, must not
be something a program can choose. It is the dataset's fault instead (``CheckerFailed``) only
when the judge fails on the test's own expected output too, which no program's output changes.

Per-test verdicts: ``accepted``, ``wrong_answer``, ``time_limit``, ``memory_limit``,
``runtime_error``, ``output_limit`` (more output than the cap), ``compile_error``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from truegrade._budgets import WALL_FACTOR, wall_backstop_s
from truegrade.graders.code._compile import BUILD_CACHE, with_pch
from truegrade.graders.code._conventions import kattis_compare, parse_kattis_flags
from truegrade.graders.code._languages import Language, language_named, toolchain
from truegrade.graders.code._program import extract_code
from truegrade.graders.code._spec import CheckerProgram, StdioCase
from truegrade.sandbox import ExecLimits, Executable, RunResult, Sandbox, SandboxError

__all__ = [
    "OUTPUT_BYTES",
    "VERDICTS",
    "CheckerFailed",
    "StdioSettings",
    "TestVerdict",
    "judged_text",
    "normalize_stdout",
    "outputs_match",
    "run_stdio_program",
    "source_of",
    "stdio_bound_s",
]

VERDICTS = (
    "accepted",
    "wrong_answer",
    "time_limit",
    "idle_limit",
    "memory_limit",
    "runtime_error",
    "output_limit",
    "compile_error",
    "budget_exhausted",
    "not_run",
)
"""The per-test verdicts, as judges name them, and three of ours: ``idle_limit``, a test stopped
by its wall-clock backstop before it used its CPU-time limit (it waited); ``budget_exhausted``,
a test the response's time budget left no time for (not run, or stopped before its own limit);
``not_run``, a test after the first failure when the grader stops there (``score: all``)."""

_MESSAGE_CHARS = 2000
_OUT_OF_MEMORY = (
    "MemoryError",  # Python
    "std::bad_alloc",  # C++
    "java.lang.OutOfMemoryError",
    "runtime: out of memory",  # Go
    "runtime: cannot allocate memory",  # Go, when the kernel refuses a new arena
    "heap out of memory",  # V8
    "memory allocation of",  # Rust's allocation failure
)


class CheckerFailed(Exception):
    """The special judge cannot judge the test itself: it does not build, or it fails on the
    test's own expected output. Nothing the program printed brings this about, so the row is an
    error (the dataset's fault), never a fail of the program.

    ``message`` says what failed; ``str()`` adds what the judge said, which may quote the
    test's expected output."""

    def __init__(self, message: str, said: str = "") -> None:
        super().__init__(f"{message}: {said}" if said else message)
        self.message = message


OUTPUT_BYTES = 8 << 20
"""The default cap of a test's stdout, as Kattis sets it (8 MiB)."""


@dataclass(frozen=True)
class StdioSettings:
    """The limits and comparison of one program's tests.

    Attributes:
        time_limit_s: Per test, CPU time (user + system, of the whole process tree), as judges
            measure it: a loaded machine does not change it.
        memory_mb: Per test (the language's rule applies, see ``_languages``).
        stack_mb: The main thread's stack (0: unlimited, bounded by the memory limit).
        compile_timeout_s / compile_memory_mb: The build's bounds.
        compare: ``lines``, ``tokens``, ``tokens_ci``, ``exact`` or ``kattis``.
        abs_tol / rel_tol: Float tolerance of numeric tokens (0: exact text).
        validator_flags: The Kattis default validator's flags (``compare == "kattis"``), or
            those a Kattis output validator is given.
        wall_factor: The wall-clock backstop of a test, as a multiple of its time limit (plus
            ``truegrade._budgets.WALL_EXTRA_S``); a test that reaches it having used less CPU
            time than its limit is ``idle_limit`` (it waited, slept or starved), never
            ``time_limit``.
        output_bytes: Cap of a test's stdout (and of its stderr).
        verdict_names: ``truegrade``, ``kattis`` or ``domjudge`` (``_conventions``).
    """

    time_limit_s: float
    memory_mb: int
    stack_mb: int
    compile_timeout_s: float
    compile_memory_mb: int
    compare: str
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    validator_flags: str = ""
    wall_factor: float = WALL_FACTOR
    output_bytes: int = OUTPUT_BYTES
    verdict_names: str = "truegrade"

    @property
    def wall_s(self) -> float:
        """The wall-clock backstop of one test."""
        return wall_backstop_s(self.time_limit_s, self.wall_factor)

    @property
    def checker_s(self) -> float:
        """The CPU-time limit of one run of a special judge."""
        return max(10.0, self.time_limit_s)

    @property
    def checker_wall_s(self) -> float:
        """The wall-clock backstop of one run of a special judge (the tests' rule)."""
        return wall_backstop_s(self.checker_s, self.wall_factor)


def stdio_bound_s(tests: int, settings: StdioSettings, checker: bool) -> float:
    """The longest a response's tests can take when no budget cuts them: the build, each test's
    wall-clock backstop, and a special judge's runs (on the output, and once on the expected
    output). The grader's per-row hard deadline is set above it."""
    per_test = settings.wall_s + (2 * settings.checker_wall_s if checker else 0.0)
    build = settings.compile_timeout_s * (2 if checker else 1)
    return build + tests * per_test


@dataclass(frozen=True)
class TestVerdict:
    """One test's verdict, with a reason and the flag it raises (None when accepted)."""

    name: str
    verdict: str
    reason: str = ""
    flag: str | None = None
    cpu_s: float | None = None
    """The CPU time its run used (None: not run)."""

    @property
    def passed(self) -> bool:
        return self.verdict == "accepted"


def source_of(response: str, language: Language) -> str:
    """The program text: the last fenced block labelled with one of the language's names."""
    return extract_code(response, frozenset((language.name, *language.aliases, *language.fences)))


def _tokens_match(actual: list[str], expected: list[str], abs_tol: float, rel_tol: float) -> bool:
    if len(actual) != len(expected):
        return False
    for a, e in zip(actual, expected, strict=True):
        if a == e:
            continue
        try:
            x, y = float(a), float(e)
        except ValueError:
            return False
        if not (math.isfinite(x) and math.isfinite(y)):
            return False
        if not math.isclose(x, y, rel_tol=rel_tol, abs_tol=abs_tol):
            return False
    return True


def normalize_stdout(text: str, compare: str) -> Any:
    """The form stdout is compared in.

    ``lines``: newlines normalized (``\\r\\n`` and ``\\r`` become ``\\n``), trailing whitespace
    of each line and trailing empty lines ignored, leading whitespace significant; ``tokens``:
    the whitespace-separated tokens; ``tokens_ci``: the tokens with their letters lowered, as
    the Kattis and DOMjudge default validators compare (``NaN`` is ``nan``, ``YES`` is ``yes``);
    ``exact``: the text as is.
    """
    if compare == "exact":
        return text
    if compare == "tokens":
        return text.split()
    if compare == "tokens_ci":
        return text.lower().split()
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def outputs_match(
    actual: str, expected: str, compare: str, abs_tol: float = 0.0, rel_tol: float = 0.0
) -> bool:
    """Whether a program's stdout matches the expected one.

    ``exact``: byte for byte; ``lines``: line by line, trailing whitespace of each line and
    trailing empty lines ignored (leading whitespace counts); ``tokens``: the whitespace-
    separated tokens; ``tokens_ci``: the same, letters compared without case. With a tolerance
    (``lines`` or the tokens), two tokens that differ as text still match when both are finite
    numbers within it: ``0.3333333`` matches ``0.33333334`` under ``abs_tol=1e-6``, ``nan``
    only matches ``nan`` as text.
    """
    if compare == "exact":
        return actual == expected
    a, e = normalize_stdout(actual, compare), normalize_stdout(expected, compare)
    if not (abs_tol or rel_tol):
        return bool(a == e)
    if compare in ("tokens", "tokens_ci"):
        return _tokens_match(a, e, abs_tol, rel_tol)
    return len(a) == len(e) and all(
        _tokens_match(x.split(), y.split(), abs_tol, rel_tol) for x, y in zip(a, e, strict=True)
    )


def _clip(text: str, limit: int = _MESSAGE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 15] + " ... (truncated)"


def _short(text: str, limit: int = 80) -> str:
    shown = repr(text[: limit + 1])  # a stdout of megabytes: only its start can show
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _build(
    box: Sandbox, language: Language, source: str, settings: StdioSettings, extra: dict[str, str]
) -> tuple[Executable | None, list[str], dict[str, str], str]:
    """Build ``source``: (the executable, its run command, its environment, why it failed).

    C++ gets the precompiled ``bits/stdc++.h`` when one is ready, and every language the
    process's build cache (``_compile``): both only save the compiler's time: what the
    program does is the same."""
    chain = toolchain(language, source, settings.memory_mb)
    if isinstance(chain, str):
        raise SandboxError(chain)  # the machine lacks the compiler: not the program's fault
    name = language.source_name(source)
    files = {name: source.encode("utf-8"), **{k: v.encode("utf-8") for k, v in extra.items()}}
    built = box.build(
        files,
        with_pch(language, chain.build, box.config),
        keep=chain.keep,
        timeout_s=settings.compile_timeout_s,
        env=chain.env,  # a compiler reserves address space too: its data is what is capped
        limits=ExecLimits(
            data_mb=settings.compile_memory_mb,
            stack_mb=None if language.own_stack else settings.stack_mb,
        ),
        cache=BUILD_CACHE,  # an identical build (a group's repeated answer) is not run again
    )
    if built.ok:
        return built, chain.run, chain.env, ""
    result = built.build
    if result.status == "timeout":
        why = f"the build ran past its {settings.compile_timeout_s:g} s limit"
    elif result.status != "exited":
        why = f"the build failed: {result.error}"
    elif result.exit_code == 0:
        why = result.error or "the build made nothing to run"
    else:
        why = f"exit status {result.exit_code}"
    message = _clip(result.stderr or result.stdout)
    return None, [], {}, why + (f":\n{message}" if message else "")


def _failure(run: RunResult, language: Language, settings: StdioSettings) -> tuple[str, str, str]:
    """(verdict, flag, reason) of a run that did not exit cleanly."""
    limit = settings.time_limit_s
    if run.status == "cpu_limit" or (run.status in ("crashed", "timeout") and run.cpu_s >= limit):
        # a timeout too, once the exact count at the end shows the limit used: CPU time that
        # the program's own processes reaped is seen only then (``Zygote.tree_cpu``)
        return "time_limit", "timeout", f"used its {limit:g} s of CPU time and was killed"
    if run.status == "timeout":
        return (
            "idle_limit",
            "idle_limit",
            f"still running after {settings.wall_s:g} s of wall-clock time (the backstop) with "
            f"only {run.cpu_s:.2f} s of its {limit:g} s of CPU time used: it waited, and was "
            "killed",
        )
    stderr = run.stderr
    over = run.maxrss_kb > settings.memory_mb * 1024
    if run.status == "memory" or over or any(tell in stderr for tell in _OUT_OF_MEMORY):
        return "memory_limit", "memory_limit", f"ran out of its {settings.memory_mb} MB"
    if run.status == "output_limit":  # judges name it apart from a crash (Kattis: OLE)
        reason = f"wrote more than its {settings.output_bytes} bytes of output and was killed"
        return "output_limit", "output_limit", reason
    if run.status == "violation":
        return "runtime_error", "sandbox_violation", run.error
    tail = stderr.strip().splitlines()[-1:] if stderr.strip() else []
    detail = run.error or f"exited with status {run.exit_code}"
    if tail:
        detail += f": {tail[0][:200]}"
    flag = "exit_status" if run.status == "exited" else "program_crashed"
    return "runtime_error", flag, detail


def _flags_of(test: StdioCase, settings: StdioSettings) -> str:
    """The validator flags a test is judged with: its own (a package's test group sets them),
    else the spec's."""
    return settings.validator_flags if test.validator_flags is None else test.validator_flags


def judged_text(test: StdioCase, stdout: str, settings: StdioSettings) -> str:
    """Without a special judge: "" when ``stdout`` is the test's answer, else why not (the
    settings' ``compare``, tolerances and validator flags: the test's own, when it has them)."""
    if settings.compare == "kattis":
        flags = parse_kattis_flags(_flags_of(test, settings))
        if not flags.floats and (settings.abs_tol or settings.rel_tol):
            flags = replace(flags, abs_tol=settings.abs_tol, rel_tol=settings.rel_tol)
        return kattis_compare(stdout, test.stdout, flags)
    if outputs_match(stdout, test.stdout, settings.compare, settings.abs_tol, settings.rel_tol):
        return ""
    return f"expected stdout {_short(test.stdout)}, got {_short(stdout)}"


@dataclass
class _Judge:
    """A special judge, built in its own sandbox and kept built while the checker is the same."""

    box: Sandbox
    checker: CheckerProgram
    settings: StdioSettings
    built: tuple[Executable, list[str], dict[str, str]] | None = None

    @functools.cached_property
    def digest(self) -> str:
        """The checker's identity: its build is kept, and its tests' expected outputs are known
        to be judged, under it."""
        return hashlib.sha256(repr(self.checker).encode()).hexdigest()

    def ready(self) -> tuple[Executable, list[str], dict[str, str]]:
        language = language_named(self.checker.language)
        assert language is not None  # checked when the spec was parsed
        cached = _JUDGES.get(id(self.box))
        if cached is not None and cached[0] == self.digest and cached[1][0].current:
            return cached[1]
        executable, run, env, why = _build(
            self.box, language, self.checker.source, self.settings, self.checker.files
        )
        if executable is None:
            raise CheckerFailed(f"the checker does not build ({why})")
        _JUDGES[id(self.box)] = (self.digest, (executable, run, env))
        return executable, run, env

    def judge(self, name: str, test: StdioCase, output: str) -> tuple[str, str]:
        """The checker's verdict on ``output``: (``accepted``, ``rejected`` or ``failed``, what
        it said). ``failed`` (no verdict) is the output's doing: the checker judges the test's
        expected output, checked here once per checker and test.

        Raises:
            CheckerFailed: it gives no verdict on the expected output either.
        """
        verdict, said = self._run(test, output)
        if verdict == "failed" and not self._judges_expected(test):
            raise CheckerFailed(f"the checker fails on the expected output of {name}", said)
        return verdict, said

    def _judges_expected(self, test: StdioCase) -> bool:
        """Whether the checker gives a verdict (any) on the test's expected output given as the
        program's. Only a verdict is kept (``_JUDGED``): a failure, maybe a loaded machine's
        deadline, is tried again next time."""
        text = json.dumps([self.digest, _flags_of(test, self.settings), test.stdin, test.stdout])
        key = hashlib.sha256(text.encode()).hexdigest()
        if key in _JUDGED:
            _JUDGED.move_to_end(key)
            return True
        if self._run(test, test.stdout)[0] == "failed":
            return False
        _JUDGED[key] = None
        while len(_JUDGED) > _JUDGED_TESTS:
            _JUDGED.popitem(last=False)
        return True

    def _run(self, test: StdioCase, output: str) -> tuple[str, str]:
        """One run of the checker, bounded as every sandboxed run is: a CPU-time limit with its
        wall-clock backstop (the tests' rule, so a loaded machine does not fail the checker), a
        memory cap, the sandbox's output cap.

        testlib's protocol: ``checker input output answer``, exit 0 accepts, 1 or 2 rejects.
        Kattis's: ``validator input answer feedback_dir flags`` with the output on stdin, 42
        accepts, 43 rejects; its feedback directory is its own scratch directory, emptied after
        the run (what it wrote there is not read back)."""
        executable, run, env = self.ready()
        files = {"input.txt": test.stdin.encode("utf-8"), "answer.txt": test.stdout.encode("utf-8")}
        stdin = ""
        accepts: tuple[int, ...]
        rejects: tuple[int, ...]
        if self.checker.protocol == "kattis":
            flags = _flags_of(test, self.settings).split()
            argv = [*run, "input.txt", "answer.txt", "./", *flags]
            stdin, accepts, rejects = output, (42,), (43,)
        else:
            files["output.txt"] = output.encode("utf-8")
            argv = [*run, "input.txt", "output.txt", "answer.txt"]
            accepts, rejects = (0,), (1, 2)
        language = language_named(self.checker.language)
        assert language is not None
        result = executable.exec(
            argv,
            stdin,
            timeout_s=self.settings.checker_wall_s,
            cpu_s=self.settings.checker_s,
            env=env,
            limits=language.limits(max(1024, self.settings.memory_mb), self.settings.stack_mb),
            files=files,
        )
        if result.status == "sandbox_error":
            raise SandboxError(f"the checker's sandbox: {result.error}")
        said = _clip(result.stderr or result.stdout, 300)
        if result.status == "exited" and result.exit_code in accepts:
            return "accepted", said
        if result.status == "exited" and result.exit_code in rejects:
            return "rejected", said
        why = result.error or result.status
        return "failed", f"{why}: {said}" if said else why


_JUDGES: dict[int, tuple[str, tuple[Executable, list[str], dict[str, str]]]] = {}

_JUDGED_TESTS = 4096
"""Entries of ``_JUDGED``: a test enters only when some program's output made its checker fail,
so a few problems' worth of such tests fit, and a GRPO group's hostile outputs check each test's
expected output once."""
_JUDGED: OrderedDict[str, None] = OrderedDict()
"""The tests (by a hash of checker, input and expected output) whose expected output the checker
judges, the least recently used dropped first."""


def run_stdio_program(
    box: Sandbox,
    judge_box: Callable[[], Sandbox],
    language: Language,
    source: str,
    tests: list[StdioCase],
    settings: StdioSettings,
    deadline: float | None,
    checker: CheckerProgram | None = None,
    *,
    stop_at_failure: bool = False,
) -> list[TestVerdict]:
    """Build ``source`` and run it on every test; one verdict per test.

    ``deadline`` (a ``time.monotonic`` instant) is the response's time budget, when the user
    set one: a test it leaves no time for is ``budget_exhausted``. Without one, each test runs
    to its own limits (``stdio_bound_s`` bounds the whole).

    ``stop_at_failure``: the tests after the first that fails are not run (``not_run``), as
    judges stop; for a score that only counts a program passing every test.

    Raises:
        CheckerFailed: the special judge does not build, or fails on a test's expected output.
        SandboxError: the sandbox failed (or lacks the language's toolchain).
    """
    names = [f"stdio_{i}" for i in range(len(tests))]
    executable, run, env, why = _build(box, language, source, settings, {})
    if executable is None:
        reason = f"compile error ({language.name}): {why}"
        return [TestVerdict(n, "compile_error", reason, "compile_error") for n in names]
    judge = _Judge(judge_box(), checker, settings) if checker is not None else None
    limits = language.limits(settings.memory_mb, settings.stack_mb)
    verdicts: list[TestVerdict] = []
    for name, test in zip(names, tests, strict=True):
        if stop_at_failure and verdicts and not verdicts[-1].passed:
            reason = "not run: an earlier test failed (judges stop at the first failure)"
            verdicts.append(TestVerdict(name, "not_run", reason))
            continue
        wall = settings.wall_s
        if deadline is not None:
            left = deadline - time.monotonic()
            if left < 0.01:
                reason = "not run: the response's time budget (program_timeout_s) ran out"
                verdicts.append(TestVerdict(name, "budget_exhausted", reason, "budget_exhausted"))
                continue
            wall = min(wall, left)
        result = executable.exec(
            run,
            test.stdin,
            timeout_s=wall,
            cpu_s=settings.time_limit_s,
            env=env,
            limits=limits,
            output_bytes=settings.output_bytes,
            # judges let a program that writes too much run on: a time limit comes first
            run_past_cap=True,
        )
        if result.status == "sandbox_error":
            raise SandboxError(result.error)
        verdict = _judged(name, test, result, language, settings, wall, judge)
        verdicts.append(replace(verdict, cpu_s=result.cpu_s))
    return verdicts


def _judged(
    name: str,
    test: StdioCase,
    result: RunResult,
    language: Language,
    settings: StdioSettings,
    wall: float,
    judge: _Judge | None,
) -> TestVerdict:
    """The verdict on one test's run."""
    limit = settings.time_limit_s
    if result.status == "timeout" and wall < settings.wall_s and result.cpu_s < limit:
        reason = (
            f"stopped after {wall:.2f} s, when the response's time budget (program_timeout_s)"
            f" ran out, with {result.cpu_s:.2f} s of its {limit:g} s of CPU time used"
        )
        return TestVerdict(name, "budget_exhausted", reason, "budget_exhausted")
    if result.status != "exited" or result.exit_code != 0:
        verdict, flag, reason = _failure(result, language, settings)
        return TestVerdict(name, verdict, reason, flag)
    if result.cpu_s > limit:
        reason = f"used {result.cpu_s:.2f} s of CPU, over the {limit:g} s limit"
        return TestVerdict(name, "time_limit", reason, "timeout")
    if judge is None:
        why = judged_text(test, result.stdout, settings)
        if why:
            return TestVerdict(name, "wrong_answer", why, "wrong_answer")
        return TestVerdict(name, "accepted")
    judged, said = judge.judge(name, test, result.stdout)
    if judged == "accepted":
        return TestVerdict(name, "accepted")
    if judged == "rejected":
        reason = f"the checker says: {said}" if said else "the checker rejects the output"
        return TestVerdict(name, "wrong_answer", reason, "wrong_answer")
    reason = f"the checker gives no verdict on this output: {said}"
    return TestVerdict(name, "wrong_answer", reason, "checker_failed")
