"""What the sandbox tests share: the isolation layers each attack runs under, and counting a
sandbox's processes from the outside."""

from __future__ import annotations

import os

import pytest

from truegrade.sandbox import SandboxConfig

CONFIGS = {
    "bwrap": SandboxConfig(isolation="bwrap", output_bytes=1 << 16, memory_mb=512),
    "bwrap-no-landlock": SandboxConfig(
        isolation="bwrap", landlock=False, output_bytes=1 << 16, memory_mb=512
    ),
    "native": SandboxConfig(isolation="native", output_bytes=1 << 16, memory_mb=512),
}
"""Bubblewrap, bubblewrap without Landlock (the namespaces, capabilities and non-dumpable
zygote on their own), and the native fallback."""

BWRAP = pytest.mark.system_tool("bwrap", package="bubblewrap")


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` on the host (children of all its threads, recursively)."""
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                children = [int(c) for c in handle.read().split()]
        except OSError:
            continue
        for child in children:
            found.append(child)
            found.extend(descendants(child))
    return found
