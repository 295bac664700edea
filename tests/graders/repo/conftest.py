"""The ``repo`` graders the end-to-end tests share: the hardened one and the SWE-bench-style
harness, on the real instances of tests/data/repo (environments built once per machine into
the default cache, from the pinned requirements beside each snapshot)."""

from __future__ import annotations

import pytest

from tests.graders.repo import DATA
from truegrade.graders.repo import RepoGrader

#: The sandbox and git: without either, nothing here can run (CI requires both).
NEEDS = [
    pytest.mark.system_tool("bwrap", package="bubblewrap"),
    pytest.mark.system_tool("git", package="git"),
]


@pytest.fixture(scope="session")
def hardened() -> RepoGrader:
    return RepoGrader.from_options({"repos": [str(DATA)]})


@pytest.fixture(scope="session")
def swebench() -> RepoGrader:
    return RepoGrader.from_options({"repos": [str(DATA)], "harness": "swebench"})
