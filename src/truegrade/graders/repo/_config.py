"""The pytest configuration the grader writes: the base tree's own pytest section, found as pytest
finds it, rewritten as one ``[pytest]`` file that pytest is told to read (``-c``).

Why write it rather than let pytest find it: pytest reads the first of ``pytest.ini``,
``.pytest.ini``, ``pyproject.toml``, ``tox.ini`` and ``setup.cfg`` it meets walking up from the
tests, and a configuration can load plugins (``addopts = -p ...``), change what is collected or
how outcomes are reported. A patch that plants or edits one would change the judge; refusing
names is a deny-list that the next spelling passes. So the tree's configuration files are never
read by the run at all: the grader reads the task's own one (the base commit with the task's
test patch, which a response may not touch) and writes what pytest is to use.

What is left out: ``pythonpath`` (the grader decides what is importable, and never before the
standard library) and ``cache_dir`` (the cache is off).
"""

from __future__ import annotations

import configparser
import sys
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]

__all__ = ["CONFIG_NAMES", "pytest_config"]

CONFIG_NAMES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
"""The files pytest reads its configuration from, in the order it looks in each directory."""

_DROPPED = frozenset({"pythonpath", "cache_dir"})


def _ini_section(text: str, section: str) -> dict[str, str] | None:
    parser = configparser.RawConfigParser(strict=False, delimiters=("=", ":"))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    if not parser.has_section(section):
        return None
    return dict(parser.items(section))


def _toml_section(text: str) -> dict[str, str] | None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    table = data.get("tool", {}).get("pytest", {}).get("ini_options")
    if not isinstance(table, dict):
        return None
    return {str(k): _ini_value(v) for k, v in table.items()}


def _ini_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):  # a list is one item per line (pytest splits ``args`` on blanks)
        return "\n".join(str(v) for v in value)
    return str(value)


def _section(name: str, text: str) -> dict[str, str] | None:
    """The pytest section of one configuration file, None when it has none (pytest then looks
    further; ``pytest.ini`` counts even when empty, as pytest counts it)."""
    if name == "pyproject.toml":
        return _toml_section(text)
    if name == "setup.cfg":
        return _ini_section(text, "tool:pytest")
    found = _ini_section(text, "pytest")
    if found is None and name == "pytest.ini":
        return {}
    return found


def _start(files: Sequence[str]) -> PurePosixPath:
    dirs = [PurePosixPath(f).parent for f in files] or [PurePosixPath(".")]
    common = dirs[0]
    for d in dirs[1:]:
        while common != PurePosixPath(".") and common not in (d, *d.parents):
            common = common.parent
    return common


def pytest_config(read: Callable[[str], bytes | None], files: Sequence[str]) -> tuple[str, str]:
    """``(ini text, where it came from)``: the configuration pytest would find for ``files``
    (test paths relative to the tree's root) in the tree ``read`` gives files of, as one
    ``[pytest]`` section; ``where`` is the file's path, or ``""`` when there is none."""
    start = _start(files)
    for folder in (start, *start.parents):
        for name in CONFIG_NAMES:
            path = str(folder / name) if str(folder) != "." else name
            data = read(path)
            if data is None:
                continue
            section = _section(name, data.decode("utf-8", "replace"))
            if section is None:
                continue
            return _render(section), path
    return "[pytest]\n", ""


def _render(section: dict[str, str]) -> str:
    lines = ["[pytest]"]
    for key, value in section.items():
        if key in _DROPPED:
            continue
        parts = value.strip().splitlines() or [""]
        lines.append(f"{key} = {parts[0].strip()}")
        lines += [f"    {p.strip()}" for p in parts[1:] if p.strip()]
    return "\n".join(lines) + "\n"
