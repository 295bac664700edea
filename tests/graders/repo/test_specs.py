"""Environments from SWE-bench's own specifications: each (repository, version) of its table
read as SWE-bench builds it, what cannot be built here named, and a real instance graded in an
environment built from its spec alone (no requirements file beside its snapshot)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.graders.repo import DATA, ROWS
from tests.graders.repo.conftest import NEEDS
from truegrade.graders.repo import EnvironmentUnavailable, RepoGrader, judge_patch, read_task
from truegrade.graders.repo._specs import _table, swebench_spec


def test_a_spec_reads_as_swebench_builds_it():
    flask = swebench_spec("pallets/flask", "2.3")
    assert flask is not None and flask.python == "3.11"
    assert "Werkzeug==2.3.7" in flask.requirements and "pytest" in flask.requirements
    assert flask.tree_requirements == ("requirements/dev.txt",) and flask.install == "."
    marshmallow = swebench_spec("marshmallow-code/marshmallow", "3.0")
    assert marshmallow is not None and marshmallow.install == ".[dev]"
    sympy = swebench_spec("sympy/sympy", "1.0")
    assert sympy is not None and {"mpmath==1.3.0", "mpmath", "flake8"} <= set(sympy.requirements)
    assert "pytest" in sympy.requirements  # the runner's, though SWE-bench runs bin/test
    assert swebench_spec("pallets/flask", "0.1") is None
    assert swebench_spec("someone/else", "1.0") is None


@pytest.mark.parametrize(
    ("repo", "version", "gap"),
    [
        ("matplotlib/matplotlib", "3.5", "conda environment"),
        ("pydata/xarray", "0.12", "conda environment"),
        ("django/django", "1.10", "system packages"),
        ("pylint-dev/pylint", "2.8", "system packages"),
    ],
)
def test_what_cannot_be_built_here_is_named(repo, version, gap):
    with pytest.raises(EnvironmentUnavailable, match=gap):
        swebench_spec(repo, version)


def _read(repo: str, version: str) -> str:
    try:
        spec = swebench_spec(repo, version)
    except EnvironmentUnavailable as exc:
        return str(exc)
    assert spec is not None and spec.python.startswith("3.")
    return ""


def test_every_spec_of_the_table_is_read_or_named():
    said = {
        (repo, version): _read(repo, version)
        for repo, versions in _table()["specs"].items()
        for version in versions
    }
    assert len(said) == 300
    named = {k: why for k, why in said.items() if why}
    assert all(repo in why and version in why for (repo, version), why in named.items())
    assert len(said) - len(named) > 150  # most are built here


@pytest.fixture
def envs():
    home = Path.home() / ".cache" / "truegrade"  # not /tmp: the sandbox has its own there
    home.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="spec-test-", dir=home))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@NEEDS[0]
@NEEDS[1]
def test_an_instance_is_graded_in_the_environment_its_spec_builds(tmp_path, envs):
    row = next(r for r in ROWS if r["instance_id"] == "pylint-dev__astroid-1268")
    snapshot = tmp_path / row["instance_id"]
    snapshot.mkdir()
    (snapshot / "base.tar.gz").symlink_to(DATA / row["instance_id"] / "base.tar.gz")
    grader = RepoGrader.from_options({"repos": [str(tmp_path)], "cache_dir": str(envs)})
    task = read_task(row)
    env = grader.environment(task)
    assert env.spec.origin == "SWE-bench's spec for pylint-dev/astroid 2.9"
    assert not any(envs.glob("*.tree"))  # the tree it was installed from is gone
    gold = grader.grade({**row, "model_patch": row["patch"]})
    assert gold.error is None and gold.passed is True, gold
    empty = judge_patch(task, "", env=env, snapshots=grader.snapshots, settings=grader.settings)
    assert empty.passed is False
    assert [empty.tests[t] for t in task.fail_to_pass] == ["failed"] * len(task.fail_to_pass)
