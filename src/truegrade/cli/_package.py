"""``truegrade import-package``: Kattis/ICPC problem packages as ``code`` rows, and checked."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from truegrade.cli._common import (
    GraderKeyValueOption,
    OutOption,
    QuietOption,
    err_console,
    fail,
    out_console,
    output_path,
    parse_pairs,
    progress_bar,
    user_errors,
    write_text_file,
)

if TYPE_CHECKING:
    from truegrade.audit import PackageCheck
    from truegrade.graders.code import Package

__all__ = ["import_package_command", "package_dirs"]


def package_dirs(paths: list[Path]) -> list[Path]:
    """The packages named: each path that holds a ``problem.yaml``, or the directories right
    under it that do (a contest's directory)."""
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            fail(f"{path}: not a directory")
        if (path / "problem.yaml").is_file():
            found.append(path)
            continue
        inner = sorted(p for p in path.iterdir() if (p / "problem.yaml").is_file())
        if not inner:
            fail(f"{path}: no problem.yaml in it or in the directories under it")
        found.extend(inner)
    return found


def _summary(package: Package) -> str:
    labels = Counter(s.label for s in package.submissions if s.language)
    judge = "its output validator" if package.checker else "the default validator"
    flags = f" ({package.validator_flags})" if package.validator_flags else ""
    limit = f"{package.time_limit_s:g} s" if package.time_limit_s else "not stated"
    said = ", ".join(f"{n} {label}" for label, n in sorted(labels.items())) or "none"
    left = f"; {len(package.left_out)} left out" if package.left_out else ""
    return (
        f"{package.name}: {len(package.tests)} tests, time limit {limit}, "
        f"{package.memory_mb} MiB, {judge}{flags}; submissions: {said}{left}"
    )


def _check_table(checks: list[PackageCheck]) -> Table:
    table = Table(title="submissions against their labels", title_justify="left")
    for column in ("package", "label", "language", "agree", "verdicts (disagreeing)"):
        table.add_column(column)
    cells: dict[tuple[str, str, str], list[int]] = {}
    odd: dict[tuple[str, str, str], Counter[str]] = {}
    for check in checks:
        for sub in check.submissions:
            key = (check.package, sub.label, sub.language)
            cells.setdefault(key, [0, 0])
            cells[key][0] += sub.agrees
            cells[key][1] += 1
            if not sub.agrees:
                odd.setdefault(key, Counter())[sub.verdict] += 1
    for key, (agreed, total) in sorted(cells.items()):
        shown = ", ".join(f"{v} {n}" for v, n in odd.get(key, Counter()).most_common())
        table.add_row(*key, f"{agreed}/{total}", shown)
    return table


def import_package_command(
    packages: Annotated[
        list[Path],
        typer.Argument(
            metavar="PACKAGE",
            help="Problem package directories (problem.yaml, data/, submissions/), or "
            "directories of them.",
            show_default=False,
        ),
    ],
    out: OutOption = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Judge every labelled submission and say whether it gets its label's verdict; "
            "probe the validator. Exit 1 on any disagreement.",
        ),
    ] = False,
    time_limit_s: Annotated[
        float | None,
        typer.Option(
            "--time-limit-s",
            min=0.01,
            help="Judge at this CPU-time limit instead of the package's (or the one derived "
            "from its accepted submissions).",
        ),
    ] = None,
    python: Annotated[
        str,
        typer.Option(
            help="What runs Python 3 submissions: pypy (PyPy, as Kattis runs them) or python "
            "(CPython)."
        ),
    ] = "pypy",
    grader_option: GraderKeyValueOption = [],
    as_json: Annotated[bool, typer.Option("--json", help="Print the check as JSON.")] = False,
    quiet: QuietOption = False,
) -> None:
    """Read Kattis/ICPC problem packages as code rows (one per labelled submission), and check
    them: every submission against its label, the validator against junk.

    Without --check, the rows go to --out (JSONL) for `truegrade grade`, `audit` or training;
    a package that states no time limit gets one derived from its accepted submissions, as
    judges derive it (that runs them).
    """
    from truegrade.audit import check_package
    from truegrade.graders.code import CodeGrader, PackageProblem, read_package

    output_path(out)
    if python not in ("pypy", "python"):
        fail(f"--python must be pypy or python, not {python!r}")
    options = parse_pairs(grader_option, "--option")
    checks: list[PackageCheck] = []
    rows: list[dict[str, object]] = []
    found: list[Package] = []
    skipped: list[str] = []
    for path in package_dirs(packages):
        try:
            found.append(read_package(path, python=python))
        except PackageProblem as exc:
            skipped.append(str(exc))
            err_console.print(f"skipped: {exc}", highlight=False, markup=False)
    if not found:
        fail("no package here can be judged as stdin/stdout programs: " + "; ".join(skipped))
    with user_errors():  # an option the grader lacks is named before any work
        CodeGrader.from_options(options)
    for package in found:
        if not as_json:
            out_console.print(_summary(package), highlight=False)
    total = sum(1 for p in found for s in p.submissions if s.language)
    with progress_bar(enabled=not quiet) as bar, user_errors():
        task = bar.add_task("judging", total=total)
        for package in found:
            if check or (package.time_limit_s is None and time_limit_s is None):
                result = check_package(
                    package,
                    options,
                    time_limit_s=time_limit_s,
                    progress=lambda n: bar.advance(task, n),
                )
                checks.append(result)
                limit = result.time_limit_s
            else:
                limit = time_limit_s or package.time_limit_s or 1.0
            rows.extend(package.rows(limit))
    if out is not None:
        write_text_file(out, "".join(json.dumps(r) + "\n" for r in rows))
        out_console.print(f"{len(rows)} rows written to {out}", highlight=False)
    if not check:
        return
    if as_json:
        out_console.print_json(json.dumps([_as_dict(c) for c in checks]))
    else:
        _print_checks(checks)
    if any(c.disagreements or c.validator for c in checks):
        raise typer.Exit(1)


def _as_dict(check: PackageCheck) -> dict[str, object]:
    return {
        "package": check.package,
        "time_limit_s": check.time_limit_s,
        "derived_from_s": check.derived_from_s,
        "agreed": check.agreed,
        "submissions": [vars(s) for s in check.submissions],
        "unknown_labels": [vars(s) for s in check.unknown_labels],
        "left_out": [{"path": s.path, "label": s.label, "note": s.note} for s in check.left_out],
        "validator": [{"flag": f, "reason": r} for f, r in check.validator],
    }


def _print_checks(checks: list[PackageCheck]) -> None:
    out_console.print(_check_table(checks))
    agreed = sum(c.agreed for c in checks)
    total = sum(len(c.submissions) for c in checks)
    for check in checks:
        derived = check.derived_from_s
        how = f" (derived: slowest accepted {derived:.2f} s of CPU)" if derived is not None else ""
        out_console.print(f"{check.package}: judged at {check.time_limit_s:g} s{how}")
        for sub in check.disagreements:
            out_console.print(f"  {sub.id}: {sub.label}, got {sub.verdict}: {sub.reason[:300]}")
        for sub in check.submissions:
            if sub.how:
                out_console.print(f"  {sub.id}: agrees {sub.how}")
        for sub in check.unknown_labels:
            out_console.print(
                f"  {sub.id}: its label, {sub.label}, names no verdict here (not counted); "
                f"got {sub.verdict}"
            )
        for left in check.left_out:
            out_console.print(f"  {check.package}/{left.path}: left out: {left.note}")
        for flag, reason in check.validator:
            out_console.print(f"  validator: {flag}: {reason}")
    share = f" ({agreed / total:.1%})" if total else ""
    out_console.print(f"{agreed}/{total} submissions get their label's verdict{share}")
