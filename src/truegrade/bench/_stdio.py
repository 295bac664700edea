"""Stdin/stdout programs: the sandbox against a plain subprocess harness with the same limits.

Three measurements, side by side in one run:

* per-test overhead: one C++ program, compiled once, run on one test many times, in the
  sandbox (``Executable.exec``: a fresh process from the build's image, every layer on) and bare
  (``subprocess.run`` of the same binary, built by the same compiler on the host);
* throughput: generated problems (half C++, half Python, each program distinct so each is
  compiled), several tests each, through the ``code`` grader's batch against a plain harness
  that compiles in a temporary directory and runs each test with ``resource.setrlimit``
  (address space, CPU) and a wall-clock timeout, with as many threads as the grader has workers.

* compile cost: one C++ submission in the usual competitive shape (``bits/stdc++.h``), compiled
  and run on 10 tests through the ``code`` grader (one worker), against the plain harness doing
  the same: cold (a program the build cache has not seen; the precompiled header, made once at
  the start of the run and timed, present), warm (the same program again: a build cache hit),
  and cold with the precompiled header turned off, so each saving shows on its own.

The plain harness isolates nothing: it is the floor a sandbox's cost is measured from, never an
alternative to it. Its programs are the benchmark's own, generated here.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from truegrade.bench._report import BenchReport, Measurement, load_average

__all__ = ["run_stdio_bench", "stdio_problems", "submission"]

_CPP = (
    '#include <cstdio>\nint main(){{long a,b;if(scanf("%ld %ld",&a,&b)!=2)return 1;'
    'printf("%ld\\n",a*{k}+b);}}\n'
)
_PYTHON = "a, b = map(int, input().split())\nprint(a * {k} + b)\n"
_SUBMISSION = """#include <bits/stdc++.h>
using namespace std;
int main() {{
    ios::sync_with_stdio(false);
    int n;
    if (!(cin >> n)) return 1;
    vector<long long> a(n);
    map<long long, int> seen;
    for (auto& x : a) {{ cin >> x; seen[x % {k}]++; }}
    sort(a.begin(), a.end());
    long long best = 0;
    for (auto& [r, c] : seen) best = max(best, r * c);
    cout << accumulate(a.begin(), a.end(), 0LL) * {k} + best << "\\n";
}}
"""


def submission(k: int, tests: int = 10) -> dict[str, Any]:
    """A C++ submission as competitive programmers write them (``bits/stdc++.h``, the STL), its
    own ``k`` making it a program no cache has seen, with ``tests`` tests, as a grader row."""
    stdio = []
    for j in range(1, tests + 1):
        values = [(j * 7919 + i * 104729) % 1000 for i in range(j * 5)]
        seen: dict[int, int] = {}
        for x in values:
            seen[x % k] = seen.get(x % k, 0) + 1
        best = max(r * c for r, c in seen.items())
        stdin = f"{len(values)}\n{' '.join(map(str, values))}\n"
        stdio.append({"stdin": stdin, "stdout": f"{sum(values) * k + best}\n"})
    code = _SUBMISSION.format(k=k)
    return {"response": f"```cpp\n{code}```\n", "reference": {"language": "cpp", "stdio": stdio}}


def stdio_problems(count: int, tests: int, offset: int = 0) -> list[dict[str, Any]]:
    """``count`` problems (alternately C++ and Python), each ``a*k + b`` for its own ``k``, with
    ``tests`` tests each, as grader rows."""
    rows = []
    for i in range(count):
        k = offset + i + 2
        language = "cpp" if i % 2 == 0 else "python"
        code = (_CPP if language == "cpp" else _PYTHON).format(k=k)
        stdio = [
            {"stdin": f"{j} {j + i}\n", "stdout": f"{j * k + j + i}\n"} for j in range(1, tests + 1)
        ]
        rows.append(
            {
                "response": f"```{language}\n{code}```\n",
                "reference": {"language": language, "stdio": stdio},
            }
        )
    return rows


def _limit(memory_mb: int, cpu_s: float) -> Callable[[], None]:
    def apply() -> None:
        size = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
        seconds = max(1, int(cpu_s + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))

    return apply


def _plain_grade(row: dict[str, Any], time_s: float, memory_mb: int) -> bool:
    """The plain harness: build in a temporary directory, run each test under rlimits."""
    reference = row["reference"]
    language = reference["language"]
    code = row["response"].split("\n", 1)[1].rsplit("```", 1)[0]
    with tempfile.TemporaryDirectory() as scratch:
        if language == "cpp":
            source = Path(scratch, "main.cpp")
            source.write_text(code)
            binary = str(Path(scratch, "main"))
            build = subprocess.run(
                ["g++", "-std=gnu++17", "-O2", "-pipe", "-o", binary, str(source)],  # noqa: S607
                capture_output=True,
                timeout=60,
                check=False,
            )
            if build.returncode != 0:
                return False
            command = [binary]
        else:
            source = Path(scratch, "main.py")
            source.write_text(code)
            python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
            command = [python, "-I", "-S", "-B", str(source)]
        for test in reference["stdio"]:
            try:
                run = subprocess.run(
                    command,
                    input=test["stdin"],
                    capture_output=True,
                    text=True,
                    timeout=time_s,
                    preexec_fn=_limit(memory_mb, time_s),
                    cwd=scratch,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                return False
            if run.returncode != 0 or run.stdout.split() != test["stdout"].split():
                return False
    return True


def _per_test(runs: int, memory_mb: int, progress: Callable[[str], None] | None) -> BenchReport:
    from truegrade.graders.code import language_named, toolchain
    from truegrade.sandbox import Sandbox, SandboxConfig

    language = language_named("cpp")
    assert language is not None
    code = _CPP.format(k=3)
    chain = toolchain(language, code, memory_mb)
    if isinstance(chain, str):
        raise FileNotFoundError(chain)
    assert chain.build is not None
    limits = language.limits(memory_mb, 256)
    sandboxed: list[float] = []
    bare: list[float] = []
    unlimited: list[float] = []
    with Sandbox(SandboxConfig()) as box, tempfile.TemporaryDirectory() as scratch:
        built = box.build(
            {"main.cpp": code.encode()}, chain.build, keep=chain.keep, timeout_s=60, env=chain.env
        )
        if not built.ok:
            raise RuntimeError(f"the benchmark's program did not build: {built.build.stderr}")
        Path(scratch, "main.cpp").write_text(code)
        subprocess.run(chain.build, cwd=scratch, check=True, capture_output=True)
        binary = str(Path(scratch, "main"))
        if progress:
            progress(f"per-test overhead: {runs} runs each, alternating")
        for i in range(runs):
            stdin = f"{i} 1\n"
            start = time.perf_counter()
            result = built.exec(
                chain.run, stdin, timeout_s=2, cpu_s=2, env=chain.env, limits=limits
            )
            sandboxed.append((time.perf_counter() - start) * 1e3)
            if result.stdout.strip() != str(3 * i + 1):
                raise RuntimeError(f"the sandboxed run answered {result.stdout!r}: {result.error}")
            start = time.perf_counter()
            subprocess.run(
                [binary],
                input=stdin,
                capture_output=True,
                text=True,
                timeout=2,
                preexec_fn=_limit(memory_mb, 2),
                check=True,
            )
            bare.append((time.perf_counter() - start) * 1e3)
            start = time.perf_counter()
            subprocess.run(  # no preexec_fn: Python may spawn without a full fork
                [binary], input=stdin, capture_output=True, text=True, timeout=2, check=True
            )
            unlimited.append((time.perf_counter() - start) * 1e3)
        mode = box.mode
    report = BenchReport(
        title="One test of a compiled C++ program: in the sandbox vs the same binary bare",
        metric="ms per test",
        lower_is_better=True,
        params={"runs": runs, "memory_mb": memory_mb, "sandbox": mode},
        measurements=[
            Measurement("sandbox Executable.exec", False, sandboxed),
            Measurement("subprocess.run, same binary, same rlimits", True, bare),
            Measurement("subprocess.run, same binary, no limits", True, unlimited),
        ],
        notes=[
            "Median of alternating runs of one test each. The sandbox forks each run from a "
            "small pre-started zygote; subprocess.run forks this (large) Python process, and "
            "with a preexec_fn (the rlimits) it cannot use the cheaper spawn path, which the "
            "no-limits row shows.",
        ],
    )
    report.details["overhead_ms"] = {
        m.name: statistics.median(sandboxed) - m.median for m in report.measurements if m.anchor
    }
    return report


_COLD = "truegrade code, C++ submission, cold build cache"
_WARM = "truegrade code, C++ submission, warm build cache"
_NO_PCH = "truegrade code, C++ submission, cold, no precompiled header"
_PLAIN = "plain g++ + setrlimit, C++ submission"


def _compile_cost(
    submissions: int,
    tests: int,
    time_s: float,
    memory_mb: int,
    progress: Callable[[str], None] | None,
) -> tuple[list[Measurement], dict[str, Any]]:
    """One C++ submission at a time (compile + ``tests`` tests) through the grader with one
    worker, cold and warm, and with no precompiled header, against the plain harness; each a
    sample per submission, alternating. Runs with ``TRUEGRADE_PCH_DIR`` set by the caller."""
    from truegrade.exec import Engine
    from truegrade.graders.code import CodeGrader

    options = {"call_timeout_s": time_s, "memory_mb": memory_mb, "program_timeout_s": 120}
    samples: dict[str, list[float]] = {n: [] for n in (_COLD, _WARM, _NO_PCH, _PLAIN)}
    failed: dict[str, int] = dict.fromkeys(samples, 0)
    rows = [submission(1000 + i, tests) for i in range(submissions)]

    def timed(name: str, grade: Callable[[], bool]) -> None:
        start = time.perf_counter()
        ok = grade()
        samples[name].append((time.perf_counter() - start) * 1e3 / tests)
        failed[name] += not ok

    def through(grader: CodeGrader, row: dict[str, Any]) -> Callable[[], bool]:
        return lambda: bool(grader.grade_batch([row])[0].passed)

    def harness(row: dict[str, Any]) -> Callable[[], bool]:
        return lambda: _plain_grade(row, time_s, memory_mb)

    grader = CodeGrader.from_options(options)
    with Engine(workers=1) as engine:
        grader.engine = engine
        grader.grade_batch([submission(999, tests)])  # the worker, its sandbox: started
        for i, row in enumerate(rows):
            if progress:
                progress(f"compile cost: submission {i + 1} of {submissions}")
            timed(_COLD, through(grader, row))
            timed(_WARM, through(grader, row))
            timed(_PLAIN, harness(row))
    chosen = os.environ.get("TRUEGRADE_PCH_DIR")
    os.environ["TRUEGRADE_PCH_DIR"] = ""  # off, for a grader and workers made from here on
    try:
        plain = CodeGrader.from_options(options)
        with Engine(workers=1) as engine:
            plain.engine = engine
            plain.grade_batch([submission(998, tests)])
            for i in range(submissions):
                if progress:
                    progress(f"compile cost, no precompiled header: {i + 1} of {submissions}")
                timed(_NO_PCH, through(plain, submission(2000 + i, tests)))
    finally:
        if chosen is None:
            del os.environ["TRUEGRADE_PCH_DIR"]
        else:
            os.environ["TRUEGRADE_PCH_DIR"] = chosen
    measurements = []
    for name, values in samples.items():
        extra = {"ms per submission": statistics.median(values) * tests, "failed": failed[name]}
        measurements.append(Measurement(name, name == _PLAIN, values, extra))
    return measurements, {"submissions": submissions, "tests per submission": tests}


def _fresh_pch() -> tuple[str, float]:
    """A precompiled header made now in a directory of the run's own: (the directory, how
    long it took). The caller points ``TRUEGRADE_PCH_DIR`` at it and removes it after."""
    from truegrade.graders.code import CodeGrader, ensure_pch

    root = tempfile.mkdtemp(prefix="truegrade-bench-pch-", dir="/var/tmp")  # not under /tmp
    os.environ["TRUEGRADE_PCH_DIR"] = root
    start = time.perf_counter()
    made = ensure_pch(CodeGrader.from_options({}).sandbox_config())
    took = time.perf_counter() - start
    if made is None:
        raise RuntimeError("the precompiled header could not be made (truegrade doctor says why)")
    return root, took


def run_stdio_bench(
    *,
    problems: int = 50,
    tests: int = 6,
    runs: int = 200,
    workers: int | None = None,
    time_s: float = 2.0,
    memory_mb: int = 256,
    submissions: int = 5,
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Per-test overhead and batch throughput of stdin/stdout programs, against plain
    subprocesses with the same limits (see the module docstring).

    Args:
        problems: Generated problems per batch (alternately C++ and Python).
        tests: Tests per problem.
        runs: Runs of each contender for the per-test overhead.
        workers: Grader workers and harness threads (default: the core count).
        time_s: Per-test time limit.
        memory_mb: Per-test memory limit.
        submissions: C++ submissions of 10 tests each for the compile cost.
    """
    if shutil.which("g++") is None:
        raise FileNotFoundError("no g++ on PATH (Debian package g++)")
    started_load = load_average()
    chosen = os.environ.get("TRUEGRADE_PCH_DIR")
    if progress:
        progress("the precompiled header, made once for the run")
    pch_root, pch_s = _fresh_pch()
    try:
        report = _run(problems, tests, runs, workers, time_s, memory_mb, submissions, progress)
    finally:
        shutil.rmtree(pch_root, ignore_errors=True)
        if chosen is None:
            os.environ.pop("TRUEGRADE_PCH_DIR", None)
        else:
            os.environ["TRUEGRADE_PCH_DIR"] = chosen
    report.details["precompiled header made in s"] = round(pch_s, 2)
    report.machine["load average at start"] = started_load
    report.details["load average at end"] = load_average()
    return report


def _run(
    problems: int,
    tests: int,
    runs: int,
    workers: int | None,
    time_s: float,
    memory_mb: int,
    submissions: int,
    progress: Callable[[str], None] | None,
) -> BenchReport:
    from truegrade.exec import Engine, default_worker_count
    from truegrade.graders.code import CodeGrader

    per_test = _per_test(runs, memory_mb, progress)
    n_workers = workers or default_worker_count()
    total = problems * tests
    report = BenchReport(
        title=f"Stdin/stdout programs: {problems} problems x {tests} tests (C++ and Python)",
        metric="ms per test",
        lower_is_better=True,
        params={
            "problems": problems,
            "tests": tests,
            "workers": n_workers,
            "time_s": time_s,
            "memory_mb": memory_mb,
            **{f"per-test {k}": v for k, v in per_test.params.items()},
        },
        notes=[
            "Throughput = wall time of a batch / tests, compile included (every program is "
            "distinct). Cold: the grader's first batch, its workers' start-up and sandboxes "
            "included; warm: a second batch of other programs in the same workers. The plain "
            "harness has no start-up: its two batches are the same kind of run.",
            "The plain harness: g++ or python3 in a temporary directory, each test a "
            "subprocess.run with RLIMIT_AS, RLIMIT_CPU and a timeout, in a thread pool of as "
            "many threads as the grader has workers. It isolates nothing.",
            *per_test.notes,
            "Compile cost: one C++ submission (bits/stdc++.h, 10 tests) at a time, one worker, "
            "wall time of its grade / its tests, compile included; cold is a program the build "
            "cache has not seen, with the precompiled header made at the start of the run "
            "(its making is timed once, in details); warm is the same program again, a cache "
            "hit; the plain harness compiles with the same flags and no precompiled header.",
        ],
    )
    report.measurements = list(per_test.measurements)
    report.details["per_test_overhead_ms"] = per_test.details["overhead_ms"]
    report.pairs = [(per_test.measurements[0].name, m.name) for m in per_test.measurements[1:]]

    def per_test_ms(start: float) -> float:
        return (time.perf_counter() - start) / total * 1e3

    grader = CodeGrader.from_options(
        {"call_timeout_s": time_s, "memory_mb": memory_mb, "program_timeout_s": 120}
    )
    cold, warm = stdio_problems(problems, tests), stdio_problems(problems, tests, problems)
    passed: dict[str, int] = {}
    with Engine(workers=n_workers) as engine:
        grader.engine = engine
        for name, rows in (("truegrade code, cold", cold), ("truegrade code, warm", warm)):
            if progress:
                progress(name)
            start = time.perf_counter()
            grades = grader.grade_batch(rows)
            report.measurements.append(Measurement(name, False, [per_test_ms(start)]))
            passed[name] = sum(bool(g.passed) for g in grades)
    with ThreadPoolExecutor(n_workers) as pool:
        for name, rows in (("plain subprocess, first", cold), ("plain subprocess, second", warm)):
            if progress:
                progress(name)
            start = time.perf_counter()
            oks = list(pool.map(lambda r: _plain_grade(r, time_s, memory_mb), rows))
            report.measurements.append(Measurement(name, True, [per_test_ms(start)]))
            passed[name] = sum(oks)
    for m in report.measurements:
        if m.name in passed:
            m.extra["problems passed"] = passed[m.name]
    report.pairs += [
        ("truegrade code, cold", "plain subprocess, first"),
        ("truegrade code, warm", "plain subprocess, second"),
    ]
    cost, params = _compile_cost(submissions, 10, time_s, memory_mb, progress)
    report.measurements += cost
    report.params.update(params)
    report.pairs += [(name, _PLAIN) for name in (_COLD, _WARM, _NO_PCH)]
    return report
