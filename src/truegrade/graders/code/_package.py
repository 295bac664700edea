"""Kattis/ICPC problem packages read as they are: tests, limits, validator, labelled submissions.

A problem package is a directory (the format of Kattis, problemtools and the ICPC):
``problem.yaml``; test data in ``data/sample`` and ``data/secret`` (``*.in`` with its ``*.ans``,
in subdirectories too); an output validator in ``output_validators/<name>/`` (or
``output_validator/``) when ``validation: custom``, else the default validator with
``validator_flags``; and submissions in ``submissions/<label>/``, labelled with the verdict they
should get: ``accepted``, ``wrong_answer``, ``time_limit_exceeded``, ``run_time_error``.

``read_package`` turns it into a ``code`` stdio spec (the tests in the judge's order, samples
first; the limits; ``compare: kattis`` with the flags, or the validator as a sandboxed checker
speaking the Kattis protocol) and the submissions (each with its label and language). The time
limit is the package's when it states one (``limits.time_limit``, a ``.timelimit`` file);
otherwise judges derive it from the accepted submissions (``time_limit_from``: the slowest one's
CPU time times ``time_multiplier``, rounded up to a whole second, as problemtools does).

What cannot be graded as a stdin/stdout program is said, never guessed: interactive and
scoring problems are ``PackageProblem``; a submission in a language the grader does not run, or
spread over several files, is listed with the reason and left out.
"""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from truegrade.core import DataError
from truegrade.graders.code._languages import language_named

__all__ = [
    "LABEL_VERDICTS",
    "Package",
    "PackageProblem",
    "Submission",
    "read_package",
    "time_limit_from",
]

LABEL_VERDICTS: dict[str, frozenset[str]] = {
    "accepted": frozenset({"accepted"}),
    "wrong_answer": frozenset({"wrong_answer"}),
    "time_limit_exceeded": frozenset({"time_limit", "idle_limit"}),
    "run_time_error": frozenset({"runtime_error", "memory_limit", "output_limit"}),
    "memory_limit_exceeded": frozenset({"memory_limit"}),
    "output_limit_exceeded": frozenset({"output_limit"}),
    "compile_error": frozenset({"compile_error"}),
}
"""The verdicts each submission label stands for (a judge reports running out of memory, or
writing too much, as a run-time error)."""

_EXTENSIONS = {
    ".c": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".C": "cpp",
    ".java": "java",
    ".js": "javascript",
    ".go": "go",
    ".rs": "rust",
    ".py": "python",
    ".py3": "python",
}
_HEADERS = (".h", ".hpp", ".hh")
_PYTHON2 = re.compile(r"^#!.*python2\b")
_TEXT_BYTES = 4 << 20


class PackageProblem(DataError):
    """The directory is no problem package this grader can judge; the message says why."""


@dataclass(frozen=True)
class Submission:
    """One labelled submission.

    Attributes:
        label: Its directory under ``submissions/`` (the verdict it should get).
        path: Relative to the package.
        language: The grader's name for its language; None when the grader does not run it.
        source: The program.
        note: Why it is left out (when ``language`` is None).
    """

    label: str
    path: str
    language: str | None
    source: str = ""
    note: str = ""
    expected: frozenset[str] | None = None
    """The verdicts it may get (None: what its label says, when it says anything)."""

    @property
    def verdicts(self) -> frozenset[str] | None:
        """The verdicts a judge may give it: ``submissions.yaml``'s, else its label's; None
        when neither says (a label such as ``slow_accepted``)."""
        return self.expected if self.expected is not None else LABEL_VERDICTS.get(self.label)

    @property
    def response(self) -> str:
        """The submission as a model's response: its source in a fenced block (Python's fence
        for Python 3 in either interpreter, so that either reads it)."""
        fence = "python" if self.language == "pypy" else self.language
        return f"```{fence}\n{self.source}\n```\n"


@dataclass(frozen=True)
class Package:
    """A problem package read as the ``code`` grader's stdio tests.

    Attributes:
        name: The package directory's name.
        tests: ``{"stdin", "stdout", "visible", "name", "validator_flags"}`` per test, samples
            first; its flags are ``problem.yaml``'s and its test group's.
        time_limit_s: The package's own time limit, when it states one.
        time_multiplier / safety_margin: How a judge derives the limit from the accepted
            submissions, and how far past it a ``time_limit_exceeded`` one must be.
        memory_mb / output_mb: The package's limits (the format's defaults when unstated).
        validator_flags: The flags of the default validator, or of the custom one, that every
            test is judged with: ``problem.yaml``'s, and the test groups' when they all set the
            same (a test whose group sets others is judged with its own, in ``tests``).
        checker: The custom output validator as a spec's checker, or None.
        submissions: Every labelled submission, those left out included.
    """

    name: str
    tests: list[dict[str, Any]]
    time_limit_s: float | None
    time_multiplier: float
    safety_margin: float
    memory_mb: int
    output_mb: int
    validator_flags: str
    checker: dict[str, Any] | None
    submissions: list[Submission] = field(default_factory=list)

    def spec(self, time_limit_s: float | None = None) -> dict[str, Any]:
        """The ``code`` grader's stdio spec of the package, at ``time_limit_s`` (default the
        package's own; one of the two is needed)."""
        limit = time_limit_s or self.time_limit_s
        if limit is None:
            raise PackageProblem(
                f"{self.name}: the package states no time limit; derive one from its accepted "
                "submissions (time_limit_from) or give one"
            )
        stdio = []
        for test in self.tests:
            case = {k: test[k] for k in ("stdin", "stdout", "visible")}
            own = test.get("validator_flags", self.validator_flags)
            if own != self.validator_flags:  # a test group's flags
                case["validator_flags"] = own
            stdio.append(case)
        spec: dict[str, Any] = {
            "stdio": stdio,
            "time_limit_s": limit,
            "memory_mb": self.memory_mb,
            # the stack judges give: unlimited in problemtools and BAPCtools, bounded by the
            # memory limit only on Kattis (the memory limit bounds it here too)
            "stack_mb": "unlimited",
            "output_mb": self.output_mb,
            "validator_flags": self.validator_flags,
        }
        if self.checker is not None:
            spec["checker"] = self.checker
        else:
            spec["compare"] = "kattis"
        return spec

    def rows(self, time_limit_s: float | None = None) -> list[dict[str, Any]]:
        """One ``code`` row per submission the grader runs: its response, the package's spec,
        its label (``expected_verdict``), the verdicts it may get (``expected_verdicts``, None
        when nothing says), its language, and an id naming the package and the file."""
        spec = self.spec(time_limit_s)
        return [
            {
                "id": f"{self.name}/{s.path}",
                "response": s.response,
                "reference": {**spec, "language": s.language},
                "expected_verdict": s.label,
                "expected_verdicts": None if s.verdicts is None else sorted(s.verdicts),
                "language": s.language,
            }
            for s in self.submissions
            if s.language is not None
        ]

    @property
    def left_out(self) -> list[Submission]:
        return [s for s in self.submissions if s.language is None]


def time_limit_from(slowest_accepted_s: float, multiplier: float) -> float:
    """A judge's time limit from the slowest accepted submission's time: that times the
    multiplier, rounded up to a whole second, at least 1 s (problemtools' rule)."""
    return float(max(1, math.ceil(slowest_accepted_s * multiplier - 1e-9)))


def _text(path: Path) -> str:
    if path.stat().st_size > _TEXT_BYTES:
        raise PackageProblem(f"{path}: over {_TEXT_BYTES >> 20} MiB, too large to read as text")
    try:
        return path.read_text("utf-8")
    except UnicodeDecodeError:
        raise PackageProblem(f"{path}: not UTF-8 text") from None


def _mapping(path: Path) -> dict[str, Any]:
    """A YAML file of the package that must be a mapping (an empty file is an empty one)."""
    try:
        data = yaml.safe_load(_text(path)) or {}
    except yaml.YAMLError as exc:
        raise PackageProblem(f"{path}: not YAML ({exc})") from None
    if not isinstance(data, dict):
        raise PackageProblem(f"{path}: not a mapping")
    return data


def _metadata(root: Path) -> dict[str, Any]:
    path = root / "problem.yaml"
    if not path.is_file():
        raise PackageProblem(f"{root}: no problem.yaml (not a problem package)")
    return _mapping(path)


def _number(value: Any, what: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise PackageProblem(f"problem.yaml: {what} must be a positive number, not {value!r}")
    return float(value)


_GROUP_FILES = ("test_group.yaml", "testdata.yaml")
"""A test group's settings: ``test_group.yaml`` (format 2025-09), ``testdata.yaml`` before."""
_GROUP_FLAGS = ("output_validator_args", "output_validator_flags")
"""A test group's validator flags: a list (2025-09), or a string of words (legacy)."""


def _group_flags(folder: Path, inherited: str | None) -> str | None:
    """The validator flags a test group sets: its own settings file's, else its parent's (a
    group inherits what it does not set, as problemtools and BAPCtools read them); None when
    no group on the way sets any."""
    for name in _GROUP_FILES:
        path = folder / name
        if path.is_file():
            settings = _mapping(path)
            for key in _GROUP_FLAGS:
                if key in settings:
                    value = settings[key]
                    if isinstance(value, list):
                        return " ".join(str(v) for v in value)
                    return "" if value is None else str(value)
            break
    return inherited


def _flags_by_folder(data: Path, folders: set[Path]) -> dict[Path, str | None]:
    """Each test folder's group flags, walking down from ``data/`` so that each inherits."""
    found: dict[Path, str | None] = {}

    def walk(folder: Path) -> str | None:
        if folder not in found:
            parent = walk(folder.parent) if folder != data else None
            found[folder] = _group_flags(folder, parent)
        return found[folder]

    for folder in folders:
        walk(folder)
    return found


def _tests(root: Path, problem_flags: str) -> list[dict[str, Any]]:
    """Every ``.in`` with its ``.ans`` under ``data/sample`` then ``data/secret``, each group
    in name order (subdirectories included, as their paths sort), each with the validator flags
    it is judged with: ``problem.yaml``'s then its test group's (problemtools passes both)."""
    tests = []
    data = root / "data"
    for group in ("sample", "secret"):
        folder = data / group
        if not folder.is_dir():
            continue
        sources = sorted(folder.rglob("*.in"), key=lambda p: p.relative_to(folder).parts)
        flags = _flags_by_folder(data, {p.parent for p in sources})
        for source in sources:
            answer = source.with_suffix(".ans")
            if not answer.is_file():
                if source.with_suffix(".interaction").is_file():
                    continue
                raise PackageProblem(f"{source}: no {answer.name} beside it")
            own = flags[source.parent]
            tests.append(
                {
                    "name": str(source.relative_to(data).with_suffix("")),
                    "stdin": _text(source),
                    "stdout": _text(answer),
                    "visible": group == "sample",
                    "validator_flags": " ".join(f for f in (problem_flags, own or "") if f),
                }
            )
    if not tests:
        raise PackageProblem(f"{root}: no test data (data/sample or data/secret, *.in and *.ans)")
    return tests


def _checker(root: Path) -> dict[str, Any]:
    """The custom output validator as a checker: one source file in a language the grader
    builds, with the headers beside it."""
    folders = [root / "output_validator"] if (root / "output_validator").is_dir() else []
    parent = root / "output_validators"
    if parent.is_dir():
        folders += sorted(p for p in parent.iterdir() if p.is_dir())
        loose = [p for p in parent.iterdir() if p.is_file() and p.suffix in _EXTENSIONS]
        if loose and not folders:
            folders = [parent]
    if len(folders) != 1:
        raise PackageProblem(
            f"{root}: validation is custom, but there are {len(folders)} output validators"
        )
    folder = folders[0]
    files = sorted(p for p in folder.iterdir() if p.is_file())
    if any(p.name in ("build", "run") for p in files):
        raise PackageProblem(f"{folder}: a validator built by its own scripts is not supported")
    sources = [p for p in files if p.suffix in _EXTENSIONS]
    if len(sources) != 1:
        raise PackageProblem(
            f"{folder}: the output validator must be one source file in a supported language, "
            f"found {[p.name for p in sources]}"
        )
    source = sources[0]
    headers = {p.name: _text(p) for p in files if p.suffix in _HEADERS}
    return {
        "language": _EXTENSIONS[source.suffix],
        "source": _text(source),
        "files": headers,
        "protocol": "kattis",
    }


def _submission(root: Path, label: str, path: Path, python: str) -> Submission:
    relative = str(path.relative_to(root))
    if path.is_dir():
        sources = [p for p in path.rglob("*") if p.is_file() and p.suffix in _EXTENSIONS]
        if len(sources) != 1:
            return Submission(label, relative, None, note="several files: not supported")
        path = sources[0]
    name = _EXTENSIONS.get(path.suffix)
    if name is None:
        return Submission(label, relative, None, note=f"language of {path.suffix!r} not run")
    source = _text(path)
    first = source.splitlines()[0] if source else ""
    if name == "python" and (_PYTHON2.match(first) or path.suffix == ".py2"):
        return Submission(label, relative, None, note="Python 2: not run")
    if name == "python":
        name = python
    language = language_named(name)
    assert language is not None
    return Submission(label, relative, language.name, source)


def _submissions(root: Path, python: str) -> list[Submission]:
    folder = root / "submissions"
    if not folder.is_dir():
        return []
    rules = _expectations(folder)
    found = []
    for label_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        for path in sorted(label_dir.iterdir()):
            if path.name.startswith(".") or path.suffix == ".disabled":
                continue
            submission = _submission(root, label_dir.name, path, python)
            inner = path.relative_to(folder).as_posix()
            found.append(replace(submission, expected=_expected(rules, inner)))
    return found


_CODES = {
    "AC": LABEL_VERDICTS["accepted"],
    "WA": LABEL_VERDICTS["wrong_answer"],
    "TLE": LABEL_VERDICTS["time_limit_exceeded"],
    "RTE": LABEL_VERDICTS["run_time_error"],
}
_DEFAULTS = {  # the format's expectations of its label directories: (permitted, required)
    "accepted": ({"AC"}, None),
    "wrong_answer": ({"AC", "WA"}, {"WA"}),
    "time_limit_exceeded": ({"AC", "TLE"}, {"TLE"}),
    "run_time_error": ({"AC", "RTE"}, {"RTE"}),
    "brute_force": ({"AC", "RTE", "TLE"}, {"RTE", "TLE"}),
    "rejected": ({"RTE", "TLE", "WA"}, {"RTE", "TLE", "WA"}),
}
_GROUPED = object()
"""An expectation by test group (``sample: ...``): not a verdict of the whole submission."""


def _braces(pattern: str) -> list[str]:
    """``a/{x,y}.py`` as ``a/x.py`` and ``a/y.py`` (nested and repeated braces too)."""
    found = re.search(r"\{([^{}]*)\}", pattern)
    if found is None:
        return [pattern]
    head, tail = pattern[: found.start()], pattern[found.end() :]
    return [
        expanded
        for choice in found.group(1).split(",")
        for expanded in _braces(head + choice.strip() + tail)
    ]


def _expectations(folder: Path) -> list[tuple[list[str], Any]]:
    """``submissions.yaml``: (the patterns a key stands for, its rule), in the file's order."""
    path = folder / "submissions.yaml"
    if not path.is_file():
        return []
    data = _mapping(path)
    rules = []
    for key, rule in data.items():
        if not isinstance(rule, dict):
            continue
        if set(rule) - {"permitted", "required", "language", "entrypoint", "authors",
                        "model_solution", "message", "use_for_time_limit"}:  # fmt: skip
            rule = _GROUPED
        rules.append((_braces(str(key)), rule))
    return rules


def _matches(pattern: str, path: str) -> bool:
    """A key of ``submissions.yaml`` names the file, or a directory it is in; ``*`` does not
    cross a ``/``."""
    parts, names = pattern.split("/"), path.split("/")
    if len(parts) > len(names):
        return False
    return all(fnmatch.fnmatchcase(n, p) for p, n in zip(parts, names, strict=False))


def _expected(rules: list[tuple[list[str], Any]], path: str) -> frozenset[str] | None:
    """The verdicts ``submissions.yaml`` lets the submission at ``path`` (under
    ``submissions/``) get, judged as a whole: the permitted codes of every key that names it
    (its label directory's defaults unless a key names the directory itself), narrowed to the
    required ones when a key requires some. None when the file says nothing of it, or says it
    per test group."""
    label = path.split("/")[0]
    matching = [
        (label in patterns, rule)
        for patterns, rule in rules
        if any(_matches(p, path) for p in patterns)
    ]
    if not matching:
        return None
    if any(rule is _GROUPED for _, rule in matching):
        return frozenset()
    permitted, required = _DEFAULTS.get(label, ({"AC", "WA", "TLE", "RTE"}, None))
    allowed = set(permitted)
    for names_label, rule in matching:
        if "permitted" in rule:  # the label's own key replaces its defaults; others narrow
            codes = {str(c) for c in rule["permitted"]}
            allowed = codes if names_label else allowed & codes
        if "required" in rule:
            required = {str(c) for c in rule["required"]}
    codes = allowed & required if required else allowed
    return frozenset(v for code in codes for v in _CODES.get(str(code), ()))


def _time_limit(root: Path, limits: dict[str, Any]) -> float | None:
    if limits.get("time_limit") is not None:
        return _number(limits["time_limit"], "limits.time_limit", 1.0)
    stated = root / ".timelimit"
    if stated.is_file():
        try:
            return float(_text(stated).split()[0])
        except (ValueError, IndexError):
            raise PackageProblem(f"{stated}: not a number of seconds") from None
    return None


def read_package(path: str | Path, *, python: str = "pypy") -> Package:
    """Read the problem package at ``path``.

    ``python``: the language its Python 3 submissions run in: ``pypy`` (PyPy, as Kattis runs
    them) or ``python`` (CPython).

    Raises:
        PackageProblem: it is not a package, or not one a stdin/stdout grader can judge
            (interactive, scoring, a validator it cannot build), with the reason.
    """
    root = Path(path)
    if not root.is_dir():
        raise PackageProblem(f"{root}: not a directory")
    meta = _metadata(root)
    validation = str(meta.get("validation") or "default")
    kind = str(meta.get("type") or "pass-fail")
    if "interactive" in validation.split() or "interactive" in kind.split():
        raise PackageProblem(f"{root.name}: an interactive problem (not a stdin/stdout program)")
    if "score" in validation.split() or "scoring" in kind.split():
        raise PackageProblem(f"{root.name}: a scoring problem (partial scores, not pass/fail)")
    limits = meta.get("limits") or {}
    if not isinstance(limits, dict):
        raise PackageProblem(f"{root / 'problem.yaml'}: limits must be a mapping")
    multipliers = limits.get("time_multipliers") or {}
    legacy = "problem_format_version" not in meta
    multiplier = _number(
        limits.get("time_multiplier", multipliers.get("ac_to_time_limit")),
        "the time multiplier",
        5.0 if legacy else 2.0,
    )
    margin = _number(
        limits.get("time_safety_margin", multipliers.get("time_limit_to_tle")),
        "the time safety margin",
        2.0 if legacy else 1.5,
    )
    flags = meta.get("validator_flags") or ""
    if isinstance(flags, list):
        flags = " ".join(str(f) for f in flags)
    custom = validation.startswith("custom") or (root / "output_validator").is_dir()
    tests = _tests(root, str(flags))
    shared = {t["validator_flags"] for t in tests}
    return Package(
        name=root.resolve().name,
        tests=tests,
        time_limit_s=_time_limit(root, limits),
        time_multiplier=multiplier,
        safety_margin=margin,
        memory_mb=int(_number(limits.get("memory"), "limits.memory", 1024 if legacy else 2048)),
        output_mb=int(_number(limits.get("output"), "limits.output", 8)),
        validator_flags=shared.pop() if len(shared) == 1 else str(flags),
        checker=_checker(root) if custom else None,
        submissions=_submissions(root, python),
    )
