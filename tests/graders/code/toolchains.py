"""The stdio languages' toolchains, as test marks: a test of a language runs where its Debian
package is installed and, under CI's TRUEGRADE_REQUIRE_SANDBOX, fails where it is missing."""

from __future__ import annotations

import pytest

TOOLS = {
    "python": ("python3", "python3"),
    "c": ("gcc", "gcc"),
    "cpp": ("g++", "g++"),
    "java": ("javac", "default-jdk-headless"),
    "javascript": ("node", "nodejs"),
    "go": ("go", "golang-go"),
    "rust": ("rustc", "rustc"),
    "pypy": ("pypy3", "pypy3"),
}
"""Language: (the command it needs, its Debian package)."""


def each_language(*names: str) -> list[object]:
    """``pytest.param`` per language (all of them by default), marked with its toolchain."""
    return [
        pytest.param(n, marks=pytest.mark.system_tool(c, package=p))
        for n, (c, p) in TOOLS.items()
        if not names or n in names
    ]
