"""Package names imported on first use (PEP 562): importing the package costs nothing until one
of them is used.

What it must never do: import anything itself (every worker process imports ``truegrade``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports", "lazy_modules"]


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


def lazy_modules(
    namespace: dict[str, Any], modules: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``lazy_exports`` with the names grouped by the module that defines them, as a package's
    imports read (``{"pkg._mod": ("A", "b")}``).

    Examples:
        >>> getattr_, _ = lazy_modules({"__name__": "demo"}, {"pathlib": ("PurePath",)})
        >>> getattr_("PurePath").__name__
        'PurePath'
    """
    return lazy_exports(
        namespace, {name: home for home, names in modules.items() for name in names}
    )
