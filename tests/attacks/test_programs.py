"""The lookup-table programs stdout attacks and audit probes are made of, built and run in every
language by the real ``code`` grader: each must print exactly what its table says, byte for byte,
whatever the strings hold."""

from __future__ import annotations

import pytest

from tests.graders.code.toolchains import each_language
from truegrade.attacks._programs import STDIO_LANGUAGES, fenced, table_program
from truegrade.graders.code import CodeGrader

# strings that break naive escaping: quotes, backslashes, '?' (C trigraphs), a \u that Java would
# read as a unicode escape, % and {} (format strings), tabs, non-ASCII, a hex-looking tail
AWKWARD = 'say "hi" \\ ??= \\u0041 %d {} \t é ∑ \\x41B'
TABLE = [("1 2", "3\n"), ("  5 7 \n", "12\n"), ("awkward", AWKWARD + "\n"), ("1 2", "first wins\n")]


@pytest.fixture(scope="module")
def grader() -> CodeGrader:
    return CodeGrader.from_options({"call_timeout_s": 5, "stdio_compare": "exact"})


def test_every_language_of_the_grader_has_a_writer():
    from truegrade.graders.code._languages import LANGUAGES

    assert set(STDIO_LANGUAGES) == set(LANGUAGES)
    with pytest.raises(KeyError, match="cobol"):
        table_program("cobol")


@pytest.mark.parametrize("language", each_language())
def test_a_table_program_prints_its_table_its_default_or_its_input(grader, language):
    tests = [
        {"stdin": "1 2\n", "stdout": "3\n"},
        {"stdin": "\n 5 7\t\n\n", "stdout": "12\n"},  # trimmed the same way in every language
        {"stdin": "awkward\n", "stdout": AWKWARD + "\n"},
        {"stdin": "1 3\n", "stdout": "no idea\n"},  # not in the table: the default
        {"stdin": "", "stdout": "no idea\n"},
    ]
    program = table_program(language, TABLE, default="no idea\n")
    grade = grader.grade(
        {"response": fenced(language, program), "reference": {"language": language, "stdio": tests}}
    )
    assert grade.passed, grade.explanation
    assert grade.subscores["accepted"] == len(tests)

    echo = table_program(language, [("1 2", "3\n")], echo=True)
    echoed = [
        {"stdin": "1 2\n", "stdout": "3\n"},
        {"stdin": "hello\n  world \n", "stdout": "hello\n  world \n"},
        {"stdin": AWKWARD, "stdout": AWKWARD},
    ]
    grade = grader.grade(
        {"response": fenced(language, echo), "reference": {"language": language, "stdio": echoed}}
    )
    assert grade.passed, grade.explanation
