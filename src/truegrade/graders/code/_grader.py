"""``code``: run a response's program against the row's tests, in a sandbox.

The grader is a thin shell around ``CodeKernel``: it validates options, picks the row's tests
(``reference``, or a ``tests`` column), and sends each sample to the engine's killable workers,
where the trusted harness runs the tests and the program runs in the sandbox. It never runs the
response in the grader's process, and it refuses to run it without isolation unless told to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, model_validator

from truegrade._budgets import WALL_FACTOR
from truegrade.core import Flag, Grade, Grader, Sample
from truegrade.graders._kernel import GraderOptions, Kernel, KernelGrader, walk
from truegrade.graders.code._compile import pch_dirs
from truegrade.graders.code._harness import CALL_BUDGET_S, MAX_CPU, RESPONSE_BYTES, CodeKernel
from truegrade.graders.code._languages import language_named, read_only_dirs
from truegrade.graders.code._rows import DATASET_COLUMNS
from truegrade.graders.code._spec import SpecProblem, TestSpec, parse_spec
from truegrade.graders.code._stdio import OUTPUT_BYTES
from truegrade.sandbox import STREAM_BYTES_MAX, SandboxConfig

__all__ = [
    "CodeGrader",
    "CodeOptions",
    "StdioTask",
    "allow_unsandboxed",
    "max_cpu_s",
    "runs_programs_sandboxed",
    "stdio_task",
]


class CodeOptions(GraderOptions):
    """Options of ``code``.

    Attributes:
        isolation: ``auto`` (bubblewrap, else native namespaces with Landlock), ``bwrap``,
            ``native``, or ``none`` (no isolation; needs ``unsafe_no_sandbox``).
        unsafe_no_sandbox: Allow running untrusted code with no isolation when nothing else
            works (or with ``isolation: none``); every such grade is flagged ``unsandboxed``.
        call_timeout_s: Deadline of one call; for a whole-program (stdin/stdout) test, its
            CPU-time limit when the row gives none.
        program_timeout_s: Time budget of all of one response's tests, replay and build
            included. Unset: 30 s for function tests; for stdin/stdout tests none, each test
            runs to its own limits (their sum bounds the row), so a budget never cuts a test.
            When set, a test it leaves no time for is ``budget_exhausted``, never
            ``time_limit``.
        memory_mb: Memory limit of the program's process (address space, except for the
            runtimes that reserve more than they use: see ``docs/code.md``).
        output_bytes: Cap on a return value, and on each output stream of a Python program's
            call session.
        stdout_bytes: Cap on a whole-program test's stdout (and stderr): 8 MiB, as Kattis;
            more is ``output_limit``. A row's ``output_mb`` takes its place.
        wall_factor: A whole-program test's wall-clock backstop, as a multiple of its CPU-time
            limit (plus 2 s); a test stopped there with CPU time to spare is ``idle_limit``.
        verdict_names: The per-test verdict names in subscores and explanations:
            ``truegrade`` (``time_limit``...), ``kattis`` (``TLE``...) or ``domjudge``
            (``timelimit``...).
        max_processes: Processes a whole-program run may have at once.
        fresh_process_per_call: Run every call in a process of its own (slower; the default
            replays the calls in a fresh process in another order instead).
        replay_odds: Replay a pass whose answers have few orders again, each time in a fresh
            process and a new secret order, until a program that could tell the replay from the
            first pass would guess every order right at most once in this many tries (0: one
            replay, which already fails every program that answers by its place in the
            session; 20 costs a fresh process more for most three-call passes).
        fresh_sandbox: Start a new sandbox for every response (much slower, strongest).
        prompt_prefix: Put the prompt in front of the response: ``auto`` (when the response
            does not define the entry point itself), ``always``, ``never``.
        stdio_compare: How stdout is compared: ``lines`` (trailing whitespace and trailing
            empty lines ignored), ``tokens`` (whitespace-separated tokens), ``tokens_ci`` (the
            same, without case), ``exact``, or ``kattis`` (the Kattis default validator, with
            the row's ``validator_flags``; ``abs_tol`` / ``rel_tol`` as its float tolerances
            when the row sets none).
        abs_tol / rel_tol: Float tolerance for call cases, and for numeric tokens of stdout
            (0: exact).
        language: The language of stdin/stdout programs when the row names none (``python``,
            ``cpp``, ``c``, ``java``, ``javascript``, ``go``, ``rust``). With a language (here or
            in the row) a stdin/stdout program is built once and each test executes it; without
            one, Python programs run in the sandbox's interpreter as before.
        stack_mb: Main-thread stack of such a program.
        compile_timeout_s / compile_memory_mb: Bounds of its build.
        score: ``fraction`` (tests passed / tests) or ``all`` (1 only when every test passes;
            the tests stop at the first failure, as EvalPlus and judges stop).
        row_limits: Use the row's own time and memory limits (CodeContests ships them) instead
            of ``call_timeout_s`` and ``memory_mb``.
        response_bytes: The longest response read, in UTF-8 bytes (256 KiB: 64K tokens of
            reasoning and program fit); a longer one fails every test unread,
            ``response_too_long``, so that no response makes the grader's own parse run long.
        feedback: How much of the tests a grade's explanation tells, for loops that show it to
            the model: ``visible`` (the default, safe for RL) gives a failing test's input,
            expected value and answer only when the row marks that case or stdin/stdout test
            ``"visible": true``, and of a hidden one (a check always) only its name and kind of
            failure (``wrong_answer``, ``timeout``...); ``none``, only how many tests passed;
            ``full``, every failure's detail, hidden expected values included (for a dataset's
            author, never for a model). Flags and subscores are the same in all three.
    """

    isolation: Literal["auto", "bwrap", "native", "none"] = "auto"
    unsafe_no_sandbox: bool = False
    call_timeout_s: float = Field(default=5.0, gt=0)
    program_timeout_s: float | None = Field(default=None, gt=0)
    memory_mb: int = Field(default=1024, ge=64)
    output_bytes: int = Field(default=1 << 20, ge=1024)
    stdout_bytes: int = Field(default=OUTPUT_BYTES, ge=1024, le=STREAM_BYTES_MAX)
    wall_factor: float = Field(default=WALL_FACTOR, ge=1.0)
    verdict_names: Literal["truegrade", "kattis", "domjudge"] = "truegrade"
    max_processes: int = Field(default=32, ge=1)
    fresh_process_per_call: bool = False
    replay_odds: int = Field(default=0, ge=0)
    fresh_sandbox: bool = False
    prompt_prefix: Literal["auto", "always", "never"] = "auto"
    stdio_compare: Literal["lines", "tokens", "tokens_ci", "exact", "kattis"] = "lines"
    abs_tol: float = Field(default=0.0, ge=0)
    rel_tol: float = Field(default=0.0, ge=0)
    language: Literal["python", "cpp", "c", "java", "javascript", "go", "rust", "pypy"] | None = (
        None
    )
    stack_mb: int = Field(default=256, ge=8)
    compile_timeout_s: float = Field(default=60.0, gt=0)
    compile_memory_mb: int = Field(default=2048, ge=256)
    score: Literal["fraction", "all"] = "fraction"
    row_limits: bool = True
    response_bytes: int = Field(default=RESPONSE_BYTES, ge=1024)
    feedback: Literal["full", "visible", "none"] = "visible"

    @model_validator(mode="after")
    def _checks(self) -> CodeOptions:
        if self.isolation == "none" and not self.unsafe_no_sandbox:
            raise ValueError(
                "isolation 'none' runs untrusted code with no isolation; "
                "also set unsafe_no_sandbox (on the command line: --unsafe-no-sandbox)"
            )
        return self


class CodeGrader(KernelGrader):
    """Programs run against the row's tests in a sandbox (functions; stdin/stdout, 7 languages).

    Examples:
        >>> g = CodeGrader.from_options({"call_timeout_s": 2})
        >>> row = {"response": "def add(a, b):\\n    return a + b\\n",
        ...        "reference": {"entry_point": "add", "cases": [{"args": [1, 2], "expected": 3}]}}
        >>> g.grade(row).passed  # doctest: +SKIP
        True
    """

    kind = "code"
    family = "code"
    Options = CodeOptions
    default_execution = "process"
    inline_refused = "the harness waits on untrusted programs and their tests' checks"
    options: CodeOptions

    def __init__(self, options: GraderOptions | None = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.requires_reference = False  # the tests may also come in a 'tests' column
        if self.options.timeout_s is None:
            self.timeout_s = (self.options.program_timeout_s or CALL_BUDGET_S) + _HARD_MARGIN_S
        self._default_timeout_s = self.timeout_s
        self.allow_unsandboxed = self.options.unsafe_no_sandbox

    def _precheck(self, sample: Sample) -> Grade | None:
        problem = super()._precheck(sample)
        if problem is None and _tests_of(sample) is None:
            return Grade.failure(
                "the code grader needs the tests in 'reference' (or a 'tests' column)",
                Flag.NO_REFERENCE,
            )
        return problem

    def sandbox_config(self) -> SandboxConfig:
        o = self.options
        return SandboxConfig(
            isolation=o.isolation,
            allow_unsandboxed=self.allow_unsandboxed,
            memory_mb=o.memory_mb,
            output_bytes=o.output_bytes,
            max_processes=o.max_processes,
            # room for the runtimes that reserve address space; each task sets its own limit
            address_space_mb=max(o.memory_mb, _ADDRESS_SPACE_MB),
            # the precompiled headers' directory too (read-only, as every one of these)
            read_only_dirs=(*read_only_dirs(), *pch_dirs()),
        )

    def kernel(self) -> Kernel:
        o = self.options
        return CodeKernel(
            sandbox=self.sandbox_config(),
            call_timeout_s=o.call_timeout_s,
            program_timeout_s=o.program_timeout_s,
            fresh_process_per_call=o.fresh_process_per_call,
            replay_odds=o.replay_odds,
            fresh_sandbox=o.fresh_sandbox,
            prompt_prefix=o.prompt_prefix,
            stdio_compare=o.stdio_compare,
            abs_tol=o.abs_tol,
            rel_tol=o.rel_tol,
            language=o.language,
            memory_mb=o.memory_mb,
            stack_mb=o.stack_mb,
            compile_timeout_s=o.compile_timeout_s,
            compile_memory_mb=o.compile_memory_mb,
            score=o.score,
            row_limits=o.row_limits,
            wall_factor=o.wall_factor,
            stdout_bytes=o.stdout_bytes,
            verdict_names=o.verdict_names,
            response_bytes=o.response_bytes,
            feedback=o.feedback,
        )

    def batch_timeout_s(self, kernel: Kernel, payloads: list[Any]) -> float:
        """The engine's hard deadline of each row: above the longest any row of the batch can
        take (a stdin/stdout row with no budget runs each test to its limits), unless the user
        set one (``timeout_s``, or ``--timeout``)."""
        if self.options.timeout_s is not None or self.timeout_s != self._default_timeout_s:
            return self.timeout_s
        assert isinstance(kernel, CodeKernel)
        longest = max((kernel.bound_s(p) for p in payloads), default=0.0)
        return max(self.timeout_s, longest + _HARD_MARGIN_S)

    def payload(self, sample: Sample) -> Any:
        prompt = sample.prompt if isinstance(sample.prompt, str) else None
        language = sample.metadata.get("language")
        return {
            "response": sample.response_text,
            "prompt": prompt,
            "tests": _tests_of(sample),
            "language": language if isinstance(language, str) else None,
        }


_ADDRESS_SPACE_MB = 16384
_HARD_MARGIN_S = 30.0
_ROW_EXTRAS = ("language", "time_limit", "memory_limit_bytes", "starter_code")


def _tests_of(sample: Sample) -> Any:
    """The row's tests: ``reference``, a ``tests`` column, or a dataset's own test columns
    (APPS / TACO, CodeContests, LiveCodeBench), read by ``parse_spec``."""
    if sample.reference is not None:
        return sample.reference
    if sample.metadata.get("tests") is not None:
        return sample.metadata["tests"]
    meta = sample.metadata
    if any(meta.get(c) is not None for c in DATASET_COLUMNS):
        return {k: meta[k] for k in (*DATASET_COLUMNS, *_ROW_EXTRAS) if k in meta}
    return None


@dataclass(frozen=True)
class StdioTask:
    """A row's stdin/stdout tests and the language its programs are written in."""

    spec: TestSpec
    language: str


def stdio_task(sample: Sample) -> StdioTask | None:
    """The row's stdin/stdout task (its tests read as the grader reads them, and the language:
    the spec's, else the row's ``language``, else Python), or None when the row is not one (no
    tests, function tests, or a spec the grader would refuse)."""
    tests = _tests_of(sample)
    if tests is None:
        return None
    try:
        spec = parse_spec(tests)
    except SpecProblem:
        return None
    if spec.kind != "stdio":
        return None
    name = spec.language or sample.metadata.get("language")
    language = language_named(name) if isinstance(name, str) else None
    return StdioTask(spec, language.name if language else "python")


def max_cpu_s(grade: Grade) -> float | None:
    """The most CPU time one of a stdin/stdout program's tests used, as its grade's explanation
    gives it (None: no test of a program in a named language ran). Not a subscore: it varies
    from run to run, and subscores are parts of the grade."""
    found = re.search(re.escape(MAX_CPU) + r" ([0-9.]+) s", grade.explanation)
    return float(found.group(1)) if found else None


def allow_unsandboxed(grader: Grader) -> int:
    """Let every ``code`` grader in a tree run without isolation when no sandbox works (the
    ``--unsafe-no-sandbox`` switch); returns how many were changed. Their grades then carry
    ``unsandboxed``."""
    code_graders = [node for node in walk(grader) if isinstance(node, CodeGrader)]
    for node in code_graders:
        node.allow_unsandboxed = True
    return len(code_graders)


def runs_programs_sandboxed(grader: Grader) -> bool:
    """Whether the programs ``grader`` runs go through truegrade's sandbox: it is, or wraps, a
    ``code`` grader with isolation on and no permission to fall back to none. A wrapper that
    grades elsewhere (Ray) says so with a ``sandboxed`` attribute."""
    for node in walk(grader):
        if isinstance(node, CodeGrader):
            return node.options.isolation != "none" and not node.allow_unsandboxed
        sandboxed = getattr(node, "sandboxed", None)
        if isinstance(sandboxed, bool):
            return sandboxed
    return False
