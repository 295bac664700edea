"""Package names imported on first use (PEP 562): importing the package costs nothing until one
of them is used.

What it must never do: import anything itself (every worker process imports ``truegrade``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for the names in ``homes`` (name -> the module
    defining it): a name's module is imported when the name is first read, and the value kept in
    ``namespace`` (the package's ``globals()``), so the next read is a plain lookup.

    Examples:
        >>> getattr_, dir_ = lazy_exports({"__name__": "demo"}, {"PurePath": "pathlib"})
        >>> getattr_("PurePath").__name__, dir_()
        ('PurePath', ['PurePath', '__name__'])
    """

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(homes))

    return __getattr__, __dir__
