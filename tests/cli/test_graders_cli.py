"""``truegrade graders``: every grader and every preset, a line each."""

from __future__ import annotations

from tests.cli.test_grade_cli import run
from truegrade.core import PRESETS, describe_grader, grader_names


def test_every_grader_and_every_preset_is_listed_with_what_it_is(tmp_path):
    result = run("graders", cwd=tmp_path, check=True)
    for name in grader_names():
        line = next(x for x in result.stdout.splitlines() if f"│ {name} " in x)
        assert describe_grader(name)[:30] in line
    for preset in PRESETS.values():
        assert f"│ {preset.name} " in result.stdout
    assert "file.py:function" in result.stdout


def test_a_description_is_the_first_line_of_the_graders_own_docstring():
    from truegrade.graders.math import MathGrader

    assert describe_grader("math") == MathGrader.__doc__.strip().splitlines()[0]
    assert describe_grader("weighted").startswith("A weighted sum")
