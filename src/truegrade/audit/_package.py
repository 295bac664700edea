"""The audit of a problem package: do its labelled submissions get the verdicts their labels say,
and does its validator reject what no task asks for?

A problem package ships submissions labelled with the verdict a judge must give them
(``accepted``, ``wrong_answer``, ``time_limit_exceeded``, ``run_time_error``). Graded as a judge
grades them (the tests in order, stopping at the first failure, whose verdict is the
submission's), each either gets its label's verdict or shows where the package, the judge or
the grader disagree. As problemtools does:

* a package that states no time limit gets the judge's: the accepted submissions run first with
  room to spare (``_ROOM_S`` of CPU per test), and the slowest one's CPU time times the
  package's multiplier, rounded up to a whole second, is the limit;
* a submission whose verdict differs at the limit but matches at the limit times the package's
  safety margin agrees "with extra time" (it sits near the limit: a warning, not an error);
* a Python 3 submission whose verdict differs in the interpreter it runs in (PyPy, as Kattis
  runs Python 3 now) but matches in the other one agrees "under CPython" (or "under PyPy"):
  judges have run Python 3 in both (problemtools and BAPCtools in CPython until 2024, DOMjudge
  still does), and the two are far apart in speed both ways (PyPy's loops are many times
  faster, its big integers slower), so a package's time limit and its
  ``time_limit_exceeded`` Python submissions hold for the interpreter it was made with.

The validator is probed too: programs in an accepted submission's language that print nothing
or one line of junk must fail every test (``accepts_any_output``, ``expects_no_output``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from truegrade.audit._stdio import probe_flags, probe_response
from truegrade.core import Grade
from truegrade.graders.code import (
    VERDICTS,
    CodeGrader,
    Package,
    StdioTask,
    Submission,
    max_cpu_s,
    parse_spec,
    time_limit_from,
)

__all__ = ["PackageCheck", "SubmissionCheck", "check_package", "package_verdict"]

_ROOM_S = 10.0
"""CPU time per test the accepted submissions get when the package states no time limit."""
_OTHER_PYTHON = {"pypy": ("python", "under CPython"), "python": ("pypy", "under PyPy")}
"""The other interpreter Python 3 submissions are judged in, and how an agreement there reads."""


def package_verdict(grade: Grade) -> str:
    """A submission's verdict as a judge gives it, from its grade under ``score: all`` (the
    grader stops at the first failure, so at most one verdict besides ``accepted`` and
    ``not_run``): that verdict, ``accepted``, or ``error`` when the row could not be graded."""
    if grade.error is not None:
        return "error"
    for verdict in VERDICTS:
        if verdict not in ("accepted", "not_run") and grade.subscores.get(verdict):
            return verdict
    return "accepted"


@dataclass(frozen=True)
class SubmissionCheck:
    """One labelled submission, judged.

    Attributes:
        id: The package and the submission's path.
        label / language: Its label and language.
        verdict: The verdict it got at the package's limit (``error``: not graded).
        agrees: Whether that is what its label says (``how`` says when only with extra time,
            or only in the other Python interpreter).
        how: ``""``, ``with extra time``, ``under CPython`` (``under PyPy`` when the package's
            Python runs in CPython), or ``under CPython, with extra time``.
        reason: The grade's explanation (the first failed test and why).
        max_cpu_s: The most CPU time one of its tests used.
    """

    id: str
    label: str
    language: str
    verdict: str
    agrees: bool
    how: str = ""
    reason: str = ""
    max_cpu_s: float | None = None


@dataclass
class PackageCheck:
    """The audit of one package.

    Attributes:
        package: Its name.
        time_limit_s: The limit the submissions were judged at.
        derived_from_s: When the package states none, the slowest accepted submission's CPU
            time it was derived from.
        submissions: One check per submission the grader runs.
        left_out: The submissions it does not run, with why.
        validator: ``(flag, reason)`` from the probes.
        unknown_labels: Submissions whose label stands for no verdict (``slow_accepted``...):
            judged, reported, not counted.
    """

    package: str
    time_limit_s: float
    derived_from_s: float | None = None
    submissions: list[SubmissionCheck] = field(default_factory=list)
    left_out: list[Submission] = field(default_factory=list)
    validator: list[tuple[str, str]] = field(default_factory=list)
    unknown_labels: list[SubmissionCheck] = field(default_factory=list)

    @property
    def agreed(self) -> int:
        return sum(c.agrees for c in self.submissions)

    @property
    def disagreements(self) -> list[SubmissionCheck]:
        return [c for c in self.submissions if not c.agrees]


def _grade_rows(
    grader: CodeGrader, rows: list[dict[str, Any]], progress: Callable[[int], None] | None
) -> list[Grade]:
    grades = grader.grade_batch(rows)
    if progress is not None:
        progress(len(rows))
    return grades


def _check(row: dict[str, Any], grade: Grade, how: str = "") -> SubmissionCheck:
    verdict = package_verdict(grade)
    wanted = frozenset(row["expected_verdicts"] or ())
    cpu = max_cpu_s(grade)
    return SubmissionCheck(
        id=row["id"],
        label=row["expected_verdict"],
        language=row["language"],
        verdict=verdict,
        agrees=verdict in wanted,
        how=how if verdict in wanted else "",
        reason=grade.error or grade.explanation,
        max_cpu_s=cpu,
    )


def check_package(
    package: Package,
    options: dict[str, Any] | None = None,
    *,
    time_limit_s: float | None = None,
    languages: frozenset[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> PackageCheck:
    """Judge every submission of ``package`` and probe its validator.

    Args:
        options: The ``code`` grader's options (``score`` is always ``all``: judges stop at the
            first failure).
        time_limit_s: Judge at this limit instead of the package's (or the derived one).
        languages: Judge only the submissions in these languages (a derived time limit still
            comes from every accepted one).
        progress: Called with the number of submissions graded, as they are.
    """
    # the package's own submissions, judged for its author: every failure's detail
    grader = CodeGrader.from_options({"feedback": "full", **(options or {}), "score": "all"})
    limit = time_limit_s or package.time_limit_s
    derived = None
    if limit is None:
        accepted = [r for r in package.rows(_ROOM_S) if r["expected_verdict"] == "accepted"]
        grades = _grade_rows(grader, accepted, None)
        used = [max_cpu_s(g) or 0.0 for g in grades if g.error is None]
        derived = max(used, default=0.0)
        limit = time_limit_from(derived, package.time_multiplier)
    rows = [r for r in package.rows(limit) if languages is None or r["language"] in languages]
    grades = _grade_rows(grader, rows, progress)
    checks = [_check(row, grade) for row, grade in zip(rows, grades, strict=True)]
    high = {r["id"]: r for r in package.rows(limit * package.safety_margin)}
    _judge_again(grader, rows, checks, lambda r: (high[r["id"]], "with extra time"))
    _judge_again(grader, rows, checks, _other_python)
    _judge_again(grader, rows, checks, lambda r: _other_python(high[r["id"]], ", with extra time"))
    said = [bool(row["expected_verdicts"]) for row in rows]
    known = [c for c, s in zip(checks, said, strict=True) if s]
    unknown = [c for c, s in zip(checks, said, strict=True) if not s]
    return PackageCheck(
        package=package.name,
        time_limit_s=limit,
        derived_from_s=derived,
        submissions=known,
        left_out=package.left_out,
        validator=_probe(grader, package, limit),
        unknown_labels=unknown,
    )


def _other_python(row: dict[str, Any], also: str = "") -> tuple[dict[str, Any], str] | None:
    """A Python 3 submission's row in the other interpreter, and how an agreement there reads;
    None for any other language."""
    other = _OTHER_PYTHON.get(row["language"])
    if other is None:
        return None
    language, how = other
    reference = {**row["reference"], "language": language}
    return {**row, "reference": reference, "language": language}, how + also


def _judge_again(
    grader: CodeGrader,
    rows: list[dict[str, Any]],
    checks: list[SubmissionCheck],
    alternative: Callable[[dict[str, Any]], tuple[dict[str, Any], str] | None],
) -> None:
    """Judge each disagreeing submission again as ``alternative`` says (another limit, another
    interpreter), in place: one that agrees there agrees, with how."""
    again = []
    for i, check in enumerate(checks):
        if not check.agrees and check.verdict != "error":
            other = alternative(rows[i])
            if other is not None:
                again.append((i, *other))
    grades = _grade_rows(grader, [row for _, row, _ in again], None) if again else []
    for (i, _, how), grade in zip(again, grades, strict=True):
        second = _check(rows[i], grade, how)
        if second.agrees:
            checks[i] = second


def _probe(grader: CodeGrader, package: Package, limit: float) -> list[tuple[str, str]]:
    """The audit's probe programs (silent, junk), in an accepted submission's language."""
    languages = [s.language for s in package.submissions if s.label == "accepted" and s.language]
    language = "python" if "python" in languages else (languages[0] if languages else "python")
    spec = {**package.spec(limit), "language": language}
    task = StdioTask(parse_spec(spec), language)
    probes = ("silent", "junk")
    rows = [{"response": probe_response(task, p), "reference": spec} for p in probes]
    every_test = CodeGrader.from_options({**grader.options.model_dump(), "score": "fraction"})
    grades = dict(zip(probes, every_test.grade_batch(rows), strict=True))
    return probe_flags(task, grades)
