"""What the sandbox tests share: counting a sandbox's processes from the outside."""

from __future__ import annotations

import os


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
