"""Environments from SWE-bench's own specifications, per repository and version.

SWE-bench builds each task's environment from a table in its harness
(``MAP_REPO_VERSION_TO_SPECS_PY``: the Python, the packages, the pre-install commands and how the
repository itself is installed), plus the requirements files it reads from the repository. That
table is shipped here as ``data/swebench_specs.json``, dumped unchanged from the ``swebench``
package 4.1.0 (MIT licence: its ``source`` field says what was taken), since the package's newer
releases no longer carry it and its import needs the harness's own dependencies.

A spec becomes an ``EnvSpec``: SWE-bench's Python and pip packages; a ``packages`` list is
installed with them; ``requirements.txt`` reads the repository's requirements file at the paths
SWE-bench reads (from the base tree: SWE-bench reads them at the environment commit); the
repository is installed as SWE-bench installs it (its extras included), but editable from a
copy of the base tree that is deleted after the build, so what the patch changes is never
installed. What cannot be built here is an error naming the gap: a conda ``environment.yml``,
system packages (``apt-get``), a build that is not ``pip install`` of the tree.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from importlib.resources import files
from typing import Any

from truegrade.graders.repo._env import EnvironmentUnavailable, EnvSpec

__all__ = ["SOURCE", "swebench_spec"]

_INSTALL = re.compile(
    r"^python -m pip install (?:(?:-e|-v|--verbose|--no-use-pep517|--no-build-isolation)\s+)*"
    r"(?:'?(\.(?:\[[\w,.-]+\])?)'?)(?:\s+(?:-v|--verbose|--no-build-isolation))*\s*$"
)


@functools.cache
def _table() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        files("truegrade.graders.repo")
        .joinpath("data")
        .joinpath("swebench_specs.json")
        .read_text(encoding="utf-8")
    )
    return loaded


SOURCE: str = "swebench 4.1.0's MAP_REPO_VERSION_TO_SPECS_PY (MIT)"
"""Where the specs come from (the data file's ``source`` says it in full)."""


def swebench_spec(repo: str, version: str | None) -> EnvSpec | None:
    """The environment SWE-bench specifies for ``repo`` at ``version``, or None when its table
    has none.

    Raises:
        EnvironmentUnavailable: the spec needs what cannot be built here (conda, system
            packages, a build that is not pip's), named.
    """
    table = _table()
    spec = table["specs"].get(repo, {}).get(version or "")
    if spec is None:
        return None
    origin = f"SWE-bench's spec for {repo} {version}"
    packages = spec.get("packages")
    requirements = [*spec.get("pip_packages", [])]
    tree_requirements: tuple[str, ...] = ()
    if packages == "environment.yml":
        where = ", ".join(table["environment_yml_paths"].get(repo, ["environment.yml"]))
        raise EnvironmentUnavailable(
            f"{origin} is a conda environment ({where}): conda is not used here; name pinned "
            "pip requirements in the environments option"
        )
    if packages == "requirements.txt":
        tree_requirements = tuple(table["requirements_paths"].get(repo, ["requirements.txt"]))
    elif isinstance(packages, str) and packages.strip():
        requirements += shlex.split(packages)
    system = [c for c in spec.get("pre_install", []) if re.search(r"\b(apt-get|apt|conda)\b", c)]
    if system:
        raise EnvironmentUnavailable(
            f"{origin} installs system packages ({system[0][:80]}): not done here; name an "
            "environment in the environments option"
        )
    install = spec.get("install", "")
    found = _INSTALL.match(install.strip())
    if install and not found:
        raise EnvironmentUnavailable(
            f"{origin} builds the repository with {install[:80]!r}, which is not a pip install "
            "of its tree: not done here; name an environment in the environments option"
        )
    if not any(re.match(r"(?i)pytest\b(?!-)", r) for r in requirements):
        # the runner is pytest, whatever runner the benchmark used (sympy's bin/test)
        requirements.append("pytest")
    return EnvSpec(
        python=str(spec["python"]),
        requirements=tuple(requirements),
        install=found.group(1) if found else None,
        tree_requirements=tree_requirements,
        pre_install=tuple(spec.get("pre_install", [])),
        origin=origin,
    )
