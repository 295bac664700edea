"""The root of truegrade's exception tree, in a module that imports nothing, so the mechanisms
(the sandbox, which must not load the core) can derive their errors from it too.

The tree itself is described where most of it lives, ``truegrade.core._errors``.
"""

__all__ = ["TruegradeError"]


class TruegradeError(Exception):
    """Base class of every error truegrade raises on purpose."""
