"""The pytest configuration the grader writes: the task's own section, found where pytest finds
it, in every file format pytest reads, as one ``[pytest]`` file (no ``pythonpath``)."""

from __future__ import annotations

import configparser

import pytest

from tests.graders.repo import DATA, ROWS
from truegrade.graders.repo import RepoGrader, read_task
from truegrade.graders.repo._config import pytest_config


def _ini(text: str) -> dict[str, str]:
    parser = configparser.RawConfigParser()
    parser.read_string(text)
    return dict(parser.items("pytest"))


@pytest.mark.parametrize(
    ("row", "where", "key", "value"),
    [
        (ROWS[0], "setup.cfg", "addopts", "-v --tb=short"),
        (ROWS[1], "setup.cfg", "python_files", "*test_*.py"),
        (ROWS[2], "pyproject.toml", "filterwarnings", "error"),
    ],
    ids=[r["instance_id"] for r in ROWS],
)
def test_each_real_task_s_own_section_is_what_pytest_is_given(row, where, key, value):
    task = read_task(row)
    base = RepoGrader.from_options({"repos": [str(DATA)]}).snapshots.base(task)
    text, found = pytest_config(base.file, [task.fail_to_pass[0].split("::")[0]])
    assert found == where
    assert _ini(text)[key] == value


def _reader(files: dict[str, str]):
    return lambda path: files[path].encode() if path in files else None


def test_the_first_file_pytest_would_read_wins_and_pythonpath_is_left_out():
    files = {
        "tox.ini": "[pytest]\naddopts = -x\n",
        "pyproject.toml": (
            '[tool.pytest.ini_options]\naddopts = ["-ra", "-q"]\npythonpath = ["src"]\n'
        ),
        "setup.cfg": "[tool:pytest]\naddopts = --wrong\n",
        "tests/pytest.ini": "[pytest]\nmarkers =\n    slow: slow\n    net: needs the net\n",
    }
    text, where = pytest_config(_reader(files), ["tests/test_a.py", "tests/test_b.py"])
    assert where == "tests/pytest.ini"  # nearest to the tests, as pytest walks up
    assert _ini(text)["markers"].split("\n") == ["slow: slow", "net: needs the net"]
    del files["tests/pytest.ini"]
    text, where = pytest_config(_reader(files), ["tests/test_a.py"])
    assert where == "pyproject.toml" and "pythonpath" not in _ini(text)
    assert _ini(text)["addopts"].split() == ["-ra", "-q"]


def test_a_file_without_a_pytest_section_is_passed_over_and_none_is_an_empty_config():
    files = {"tox.ini": "[tox]\nenvlist = py39\n", "setup.cfg": "[metadata]\nname = x\n"}
    assert pytest_config(_reader(files), ["t/test_a.py"]) == ("[pytest]\n", "")
    files["pytest.ini"] = "# an empty pytest.ini still marks the root\n"
    assert pytest_config(_reader(files), ["t/test_a.py"]) == ("[pytest]\n", "pytest.ini")
