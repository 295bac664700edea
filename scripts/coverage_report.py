"""Line coverage of the suite by package, the total, and the floor it is held to.

``make test`` measures the processes that run the tests (pytest-cov in xdist's workers, which
combines their data into ``.coverage``); ``make coverage`` also starts coverage in every Python
process the suite starts (``COVERAGE_PROCESS_START``), so what the engine's workers, the command
line's subprocesses and the servers run is counted too. This script combines any data files
left, and prints one line per package (a file's table would run to two hundred lines:
``coverage html`` gives it). It exits 1 when the total is under ``fail_under``
(``[tool.coverage.report]`` in ``pyproject.toml``).

Usage: ``python scripts/coverage_report.py`` from the repository's root, after the suite.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import coverage

SRC = Path(__file__).resolve().parents[1] / "src"


def package_of(path: Path) -> str:
    """``truegrade.graders.math`` for ``src/truegrade/graders/math/_check.py``."""
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(p for p in parts[:-1]) or parts[0]


def main() -> int:
    cov = coverage.Coverage()
    cov.combine()  # the workers' and subprocesses' data files, if any are left
    cov.save()
    cov.load()
    omitted = cov.get_option("run:omit") or []
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for path in sorted((SRC / "truegrade").rglob("*.py")):  # files never imported count too
        if any(path.match(pattern) for pattern in omitted):
            continue
        _, statements, _, missing, _ = cov.analysis2(str(path))
        totals[package_of(path)][0] += len(statements)
        totals[package_of(path)][1] += len(missing)
    width = max(len(name) for name in totals)
    print(f"\n{'package':<{width}}  {'lines':>6}  {'missed':>6}  cover")
    for name, (lines, missed) in sorted(totals.items()):
        share = 100.0 * (lines - missed) / lines if lines else 100.0
        print(f"{name:<{width}}  {lines:>6}  {missed:>6}  {share:5.1f}%")
    lines = sum(t[0] for t in totals.values())
    missed = sum(t[1] for t in totals.values())
    total = 100.0 * (lines - missed) / lines
    floor = float(cov.get_option("report:fail_under") or 0.0)
    print(f"{'TOTAL':<{width}}  {lines:>6}  {missed:>6}  {total:5.1f}%  (floor {floor:g}%)")
    if total < floor:
        print(f"coverage {total:.1f}% is under the floor of {floor:g}% (pyproject.toml)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
