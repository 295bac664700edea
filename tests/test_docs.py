"""The documentation cannot rot unnoticed.

Every ``truegrade`` command shown in the README, CONTRIBUTING.md, CHANGELOG.md, docs/ and
benchmarks/README.md is parsed by the real command line (the parser of Typer's command objects,
through ``make_context``: option names, their values, choices and required arguments are all
checked, and nothing runs); usage lines (``[--out FILE]``) and commands named in prose have each
option they name checked. Every repository file a page names exists, and every link between the
pages reaches a file and, with a ``#fragment``, one of its headings. The tour's first command is
run, and its output must be the one the front page shows.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer import TyperException
from typer.core import TyperGroup
from typer.main import get_command

from tests.cli.test_grade_cli import run
from truegrade.cli._app import app

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "CHANGELOG.md",
        ROOT / "benchmarks" / "README.md",
        *ROOT.glob("docs/*.md"),
    ]
)
FRONT_PAGE_MAX_LINES = 250

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"(?<!`)`(truegrade [a-z][^`]*)`(?!`)")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_REPO_PATH = re.compile(
    r"(?<![\w./-])((?:examples|tests|benchmarks|scripts|src|docs|\.ci)/[\w./-]*)"
)
_PACKAGE_PATH = re.compile(r"(?<![\w./-])(truegrade/[\w/.-]+\.py)\b")
_OPTION = re.compile(r"^--?[A-Za-z][\w-]*")
_SHELL_BLOCKS = {"", "bash", "sh", "shell", "console"}
_SEPARATORS = {"&", "&&", "||", "|", ";"}
_BOX = re.compile("[\u2500-\u257f]")


@dataclass(frozen=True)
class Shown:
    """A command as a page shows it, and where."""

    page: str
    argv: tuple[str, ...]
    usage: bool  # a usage line: placeholders and [optional] parts, options checked by name

    def __str__(self) -> str:
        return f"{self.page}: {' '.join(self.argv)}"


def _strip_code(text: str) -> str:
    return _FENCE.sub("", text)


def _logical_lines(block: str) -> list[str]:
    """Lines with ``\\`` continuations joined, and a usage line's indented continuations too."""
    lines: list[str] = []
    for raw in block.splitlines():
        line = raw.rstrip()
        if lines and (lines[-1].endswith("\\") or (raw[:1].isspace() and _is_usage(lines[-1]))):
            lines[-1] = lines[-1].removesuffix("\\").rstrip() + " " + line.strip()
        else:
            lines.append(line)
    return lines


def _is_usage(text: str) -> bool:
    return any(mark in text for mark in ("[", "]", "|", "..."))


def _segments(line: str) -> list[list[str]]:
    """The commands of one shell line, split at ``&&``, ``|``, ``;`` and a trailing ``&``."""
    try:
        tokens = shlex.split(line, comments=True)
    except ValueError:  # an unbalanced quote: a usage line with a literal quote in it
        tokens = line.split()
    out: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(token)
    return [segment for segment in out if segment]


def shown_commands(page: Path) -> list[Shown]:
    text = page.read_text()
    name = str(page.relative_to(ROOT))
    found: list[Shown] = []
    for language, block in _FENCE.findall(text):
        if language not in _SHELL_BLOCKS:
            continue
        for line in _logical_lines(block):
            stripped = line.strip().removeprefix("$ ")
            if not stripped.startswith("truegrade "):
                continue
            usage = _is_usage(stripped)
            segments = [stripped.split()] if usage else _segments(stripped)
            found += [
                Shown(name, tuple(argv), usage) for argv in segments if argv[0] == "truegrade"
            ]
    for span in _INLINE.findall(_strip_code(text)):
        found.append(Shown(name, tuple(" ".join(span.split()).split()), usage=True))
    return found


SHOWN = [shown for page in PAGES for shown in shown_commands(page)]
ROOT_COMMAND = get_command(app)


def _leaf(argv: tuple[str, ...], *, usage: bool) -> tuple[Any, list[str], list[str]]:
    """The subcommand ``argv`` names, its path, and the arguments left for it (prose and usage
    lines may name a group of commands alone: "`truegrade rubric` checks the checks")."""
    command: Any = ROOT_COMMAND
    path = ["truegrade"]
    rest = list(argv[1:])
    while isinstance(command, TyperGroup) and rest and rest[0] in command.commands:
        path.append(rest[0])
        command = command.commands[rest.pop(0)]
    if isinstance(command, TyperGroup) and not (usage and not rest):
        raise AssertionError(f"no such command: {' '.join([*path, *rest[:1]])}")
    return command, path, rest


def check_command(shown: Shown) -> None:
    """Raise the CLI's own usage error (or ``AssertionError``) where the command would not parse."""
    command, path, rest = _leaf(shown.argv, usage=shown.usage)
    if not shown.usage:
        command.make_context(" ".join(path), rest)
        return
    known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    for token in rest:
        for part in re.split(r"[\[\]()|]", token):
            option = _OPTION.match(part)
            if option and option.group(0) != "-":
                name = option.group(0)
                assert name in known, f"{' '.join(path)} has no option {name}"


@pytest.mark.parametrize("shown", SHOWN, ids=str)
def test_every_command_shown_parses(shown):
    try:
        check_command(shown)
    except TyperException as exc:
        pytest.fail(f"{shown}\n  {exc.format_message()}")


def test_the_pages_show_commands_to_check():
    pages = {shown.page for shown in SHOWN}
    assert {"README.md", "docs/graders.md", "docs/attacks.md", "docs/judges-rubrics.md"} <= pages
    assert sum(not shown.usage for shown in SHOWN) >= 30


@pytest.mark.parametrize(
    "made_up",
    [
        "truegrade grade examples/data/arith.jsonl --grader numeric --no-such-option 3",
        "truegrade grade examples/data/arith.jsonl --grader numeric --workers many",
        "truegrade grade --grader numeric",  # the data argument is missing
        "truegrade attack examples/data/arith.jsonl --grader math --kind poetry",
        "truegrade rubric polish rubric.yaml",
        "truegrade grade DATA --grader SPEC [--no-such-option N]",
    ],
)
def test_a_command_the_cli_would_refuse_is_caught(made_up):
    argv = tuple(made_up.split())
    with pytest.raises((TyperException, AssertionError)):
        check_command(Shown("made-up", argv, usage="[" in made_up))


def _named_paths(page: Path) -> set[str]:
    text = page.read_text()
    paths = {match.rstrip(".") for match in _REPO_PATH.findall(text)}
    paths |= {f"src/{match}" for match in _PACKAGE_PATH.findall(text)}
    return paths


NAMED = sorted({(str(p.relative_to(ROOT)), path) for p in PAGES for path in _named_paths(p)})


@pytest.mark.parametrize(("page", "path"), NAMED, ids=[f"{p}:{q}" for p, q in NAMED])
def test_every_repository_file_a_page_names_exists(page, path):
    assert (ROOT / path).exists(), f"{page} names {path}, which is not in the repository"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in ("L", "N"))
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in _strip_code(page.read_text()).splitlines():
        heading = re.match(r"#{1,6} (.*)", line)
        if not heading:
            continue
        slug = _slug(heading.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in _LINK.findall(_strip_code(page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # a URL: not this repository's to check
        file_part, _, fragment = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif fragment and fragment not in anchors(linked):
            broken.append(f"{target}: {linked.name} has no heading #{fragment}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_between_the_pages_resolve(page):
    assert broken_links(page) == []


def test_a_broken_link_is_caught(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## A section\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[fine](other.md#a-section) [no file](missing.md) [no heading](other.md#nowhere)\n"
        "```\n[in code](ignored.md)\n```\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "other.md#nowhere: other.md has no heading #nowhere",
    ]


def test_the_index_links_every_page_and_the_front_page_stays_short():
    index = (ROOT / "docs" / "README.md").read_text()
    for page in sorted(ROOT.glob("docs/*.md")):
        if page.name != "README.md":
            assert f"]({page.name}" in index, f"docs/README.md does not link {page.name}"
    front = (ROOT / "README.md").read_text()
    assert len(front.splitlines()) <= FRONT_PAGE_MAX_LINES
    assert "](docs/README.md)" in front


def test_the_tours_first_command_prints_what_the_front_page_shows(tmp_path):
    front = (ROOT / "README.md").read_text()
    command = "truegrade grade examples/data/arith.jsonl --grader numeric --out grades.jsonl"
    shown = front.split(command, 1)[1].split("```\n\n```\n", 1)[1].split("```", 1)[0]
    argv = command.split()[1:]
    argv[1] = str(ROOT / argv[1])
    result = run(*argv, cwd=tmp_path, check=True)
    printed = " ".join(_BOX.sub(" ", result.stdout).split())  # the table's rules are not shown
    for line in shown.strip().splitlines():
        assert " ".join(line.split()) in printed, (line, result.stdout)


def test_the_tutorial_s_first_python_runs_as_shown():
    text = (ROOT / "docs" / "first-reward.md").read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S)
    assert block is not None
    namespace: dict[str, object] = {}
    exec(compile(block.group(1), "docs/first-reward.md", "exec"), namespace)  # our own docs
    grader = namespace["grader"]
    assert grader.grade({"id": 3, "response": "<answer>7</answer>", "reference": "7"}).passed
