"""What every command shares: consoles, turning errors into one clear line, option parsing."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

if TYPE_CHECKING:
    from truegrade.core import Grader, Preset, Sample

    PresetOption = Annotated[str, typer.Option("--preset")]  # built on first use: __getattr__

__all__ = [
    "SPEC",
    "BackendOption",
    "FailOnRateOption",
    "FieldOption",
    "GraderKeyValueOption",
    "ItemLimitOption",
    "LimitOption",
    "OutOption",
    "PresetOption",
    "QuietOption",
    "RayAddressOption",
    "ThresholdOption",
    "TimeoutOption",
    "WorkersOption",
    "announce_note",
    "announce_preset",
    "check_preset",
    "err_console",
    "fail",
    "fail_if_all_errors",
    "fail_on_rate",
    "field_map",
    "load_items",
    "load_rows",
    "out_console",
    "output_path",
    "parse_pairs",
    "progress_bar",
    "references_needed",
    "user_errors",
    "write_outputs",
    "write_text_file",
]

out_console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` to stderr as one line (never wrapped, whatever the terminal's
    width, so a log or a script sees it whole; file names and quoted values are never read as
    markup) and exit with ``code``."""
    one_line = " ".join(message.split())
    if len(one_line) > _LONGEST_ERROR:  # a hostile 20 MB value quoted in a message
        one_line = f"{one_line[: _LONGEST_ERROR // 2]} ... {one_line[-_LONGEST_ERROR // 4 :]}"
    err_console.print(
        f"[bold red]error:[/] {escape(one_line)}", highlight=False, markup=True, soft_wrap=True
    )
    raise typer.Exit(code)


_LONGEST_ERROR = 2000


def fail_if_all_errors(total: int, errors: Sequence[str], what: str) -> None:
    """Exit 1 with one line when every one of ``total`` gradings was an error: a run that graded
    nothing must not look like a run that scored zero. ``errors`` are the reasons (messages or
    flags), the most common of which is named."""
    if total and len(errors) >= total:
        common = Counter(str(e).split(": ")[0][:100] for e in errors).most_common(1)[0][0]
        fail(f"all {total:,} {what}s are errors (could not grade); the most common: {common}", 1)


def fail_on_rate(limit: float | None, count: int, total: int, what: str) -> None:
    """``--fail-on``: exit 1 with one line when more than ``limit`` of ``total`` are ``what``
    (``0``: any), so a script or CI can gate on the report."""
    if limit is not None and total and count / total > limit:
        fail(f"--fail-on {limit:g}: {count:,} of {total:,} {what} ({count / total:.0%})", 1)


FailOnRateOption = Annotated[
    float | None,
    typer.Option(
        "--fail-on",
        metavar="FRACTION",
        min=0.0,
        max=1.0,
        help="Exit 1 when more than this fraction of items is found (0: any); for scripts and CI.",
    ),
]


def references_needed(grader: Grader) -> tuple[str, ...]:
    """``("reference",)`` when ``grader`` cannot grade without one (for ``load_rows``)."""
    return ("reference",) if getattr(grader, "requires_reference", False) else ()


def output_path(value: Path | None) -> Path | None:
    """Option callback for a file a command writes: refuse a directory, or a place under a file,
    before the work starts rather than after it."""
    if value is None:
        return None
    if value.is_dir():
        fail(f"{value}: is a directory; name a file to write")
    for parent in value.parents:
        if parent.exists():
            if not parent.is_dir():
                fail(f"{value}: cannot write there, {parent} is a file")
            break
    return value


def write_text_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (making its directory), or exit with one line saying why not."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn truegrade's own errors into one line on stderr and exit status 2 (no traceback)."""
    from truegrade.core import TruegradeError

    try:
        yield
    except TruegradeError as exc:
        fail(str(exc))


def parse_pairs(pairs: Sequence[str], what: str) -> dict[str, Any]:
    """Parse repeated ``KEY=VALUE`` options; values are YAML (``3``, ``true``, ``[a, b]``)."""
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"{what} must look like KEY=VALUE, got {pair!r}")
        try:
            out[key.strip()] = yaml.safe_load(value) if value else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


class _RateColumn(ProgressColumn):
    """Items per second: over the last 30 s while a task runs (rich's estimate), then its rate
    when it finished; three significant digits below 100, so a slow judge shows 0.42, not 0."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text("? items/s", style="progress.data.speed")
        shown = f"{speed:,.0f}" if speed >= 100 else f"{speed:.3g}"
        return Text(f"{shown} items/s", style="progress.data.speed")


def progress_bar(*, enabled: bool) -> Progress:
    """A progress bar on stderr, shown only on a terminal (never in logs or pipes)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _RateColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        disable=not (enabled and err_console.is_terminal and sys.stderr.isatty()),
        transient=False,
    )


# Options several commands share, declared once so they read and behave the same everywhere.
SPEC = "SPEC"
"""The metavar of every option that takes a grader spec (a name, a YAML/JSON file, or
``file.py:function``), so help reads alike and the bad-input tests find them all."""
GraderKeyValueOption = Annotated[
    list[str],
    typer.Option("--option", "-o", help="Grader option KEY=VALUE (repeatable; values are YAML)."),
]
WorkersOption = Annotated[
    int | None, typer.Option(help="Worker processes (default: cores).", min=1)
]
TimeoutOption = Annotated[
    float | None,
    typer.Option("--timeout-s", help="Hard per-item deadline, overriding the grader's."),
]
FieldOption = Annotated[
    list[str],
    typer.Option(
        "--field",
        metavar="OURS=THEIRS",
        help="Read a field from a column: reference=gold, response=output (repeatable; "
        "dotted paths such as reward_model.ground_truth ok).",
    ),
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
LimitOption = Annotated[int | None, typer.Option(help="Use only the first N rows.", min=1)]
ItemLimitOption = Annotated[
    int | None,
    typer.Option(
        "--limit", help="Use only the first N items (the rows of one prompt are one item).", min=1
    ),
]
OutOption = Annotated[
    Path | None, typer.Option(callback=output_path, help="Write the report (JSON).")
]
ThresholdOption = Annotated[
    float, typer.Option(help="Without a pass/fail verdict, a score above this passes.")
]


def field_map(fields: Sequence[str]) -> dict[str, str]:
    """``--field OURS=THEIRS`` options as a mapping, or exit naming the bad one."""
    pairs = parse_pairs(fields, "--field")
    known = {"id", "prompt", "response", "reference", "label", "group"}
    for ours in pairs:
        if ours not in known and not ours.startswith("metadata."):
            fail(f"--field {ours}=...: the field must be one of {', '.join(sorted(known))}")
    return {k: str(v) for k, v in pairs.items()}


def check_preset(preset: str) -> None:
    """Refuse an unknown ``--preset`` before any work or any file is made."""
    if preset != "auto":
        from truegrade.core import preset_named

        with user_errors():
            preset_named(preset)


def announce_preset(data: Path) -> Callable[[Preset | None], None]:
    """What a reader calls once it has detected a file's preset: one line on stderr saying how
    the file is read, so a dataset is never read a way the user did not see."""

    def say(preset: Preset | None) -> None:
        if preset is not None:
            err_console.print(
                f"reading {escape(data.name)} as {escape(preset.describe())} "
                "(--preset none reads the columns as they are)",
                highlight=False,
                soft_wrap=True,
            )

    return say


def announce_note(data: Path) -> Callable[[str], None]:
    """What a reader calls with a thing the user should know about how rows were read (rows of
    one task numbered as its predictions): one line on stderr."""

    def say(note: str) -> None:
        err_console.print(f"reading {escape(data.name)}: {escape(note)}", highlight=False)

    return say


def load_rows(
    data: Path,
    *,
    preset: str,
    limit: int | None,
    require: Sequence[str] = (),
    fields: Sequence[str] = (),
    items: bool = False,
) -> list[Sample]:
    """Read the samples of a data file (the first ``limit``), or exit with a clear message.

    ``preset`` says how rows are read (``auto`` detects a published dataset's shape and says so
    in one line), ``fields`` are ``--field`` options. ``require`` names sample fields
    (``reference``, ``response``, ...) every row must have: a row the command cannot use is an
    error naming its line and its columns, not an item silently skipped. With ``items`` the
    limit counts items (``Sample.item``: a prompt's rows are one), as the analyses count them.
    Rows without a group that share their prompt and reference (rollouts of one prompt) are
    one item, said in one line (``group_rollouts``).
    """
    from truegrade.data import group_rollouts, read_samples, rollout_key

    rows: list[Sample] = []
    seen: set[str] = set()
    mapping = field_map(fields)
    with user_errors():
        for _, sample in read_samples(
            data,
            preset=preset,
            field_map=mapping or None,
            on_preset=announce_preset(data),
            require=require,
            on_note=announce_note(data),
        ):
            item = rollout_key(sample)
            if items and limit is not None and item not in seen and len(seen) >= limit:
                break
            seen.add(item)
            rows.append(sample)
            if not items and limit is not None and len(rows) >= limit:
                break
    if not rows:
        fail(f"{data} holds no rows")
    rows, grouped, items_made = group_rollouts(rows)
    if grouped:
        err_console.print(
            f"reading {escape(data.name)}: {grouped:,} rows share their prompt and reference "
            f"with another, read as {items_made:,} items (the rollouts of one prompt; "
            "--field group=COLUMN groups rows by a column instead)",
            highlight=False,
        )
    return rows


def load_items(
    data: Path, grader: Grader, *, preset: str, fields: Sequence[str], limit: int | None
) -> list[Sample]:
    """The rows an analysis (attack, audit, card) works on: read as ``load_rows`` reads them,
    each with the reference ``grader`` needs, ``limit`` counting items."""
    return load_rows(
        data,
        preset=preset,
        fields=fields,
        limit=limit,
        require=references_needed(grader),
        items=True,
    )


def write_outputs(
    doc: dict[str, Any],
    out: Path | None,
    plot: Path | None,
    draw: Callable[[dict[str, Any], Path], Any],
) -> None:
    """Write a result document as strict JSON to ``out`` and draw it to ``plot``, when asked."""
    if out is not None:
        write_text_file(out, json.dumps(doc, indent=2, allow_nan=False) + "\n")
        out_console.print(f"written: {out}", highlight=False)
    if plot is not None:
        with user_errors():
            draw(doc, plot)
        out_console.print(f"plot: {plot}", highlight=False)


BackendOption = Annotated[
    str, typer.Option(help="Where grading runs: local (worker processes) or ray (a Ray cluster).")
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)."),
]


def __getattr__(name: str) -> Any:
    # PresetOption's help lists the presets, which come with the core: built when a command with
    # a --preset option is imported, so the others (and their --help) never load it.
    if name == "PresetOption":
        from truegrade.core import PRESET_NAMES

        option = Annotated[
            str,
            typer.Option(
                "--preset",
                "--format",
                metavar="PRESET",
                help="How rows are read: auto (a public dataset's shape is detected from the "
                "columns and said in one line), none (the columns as they are), or one of "
                f"{', '.join(PRESET_NAMES[2:])}. See `truegrade graders`.",
            ),
        ]
        globals()[name] = option
        return option
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
