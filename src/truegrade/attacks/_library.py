"""The attack library: importing this module imports every family's module, whose ``@attack``
generators register themselves in ``ATTACKS``; ``attacks_for`` picks from it.

The registry (``_base``) imports none of the families, so no module of the package imports one
that imports it back.
"""

from __future__ import annotations

from collections.abc import Iterable

from truegrade.attacks import _code, _instructions, _math, _repo, _stdio, _text  # noqa: F401
from truegrade.attacks._base import ATTACKS, KINDS, Attack
from truegrade.core import SpecError, TruegradeError

__all__ = ["UnknownAttack", "attacks_for"]


class UnknownAttack(TruegradeError, KeyError):
    """An attack name that is not registered; the message lists the known ones. Also a
    ``KeyError``, what an unknown name raised before."""

    def __str__(self) -> str:  # the message as written, not KeyError's quoted repr of it
        return str(self.args[0]) if self.args else ""


def attacks_for(kind: str, names: Iterable[str] | None = None) -> list[Attack]:
    """The attacks that target ``kind``, or exactly the named ones (any kind).

    Raises:
        UnknownAttack: a name is not a registered attack (the message lists the known ones).
        SpecError: ``kind`` is not one of ``KINDS`` (it would match no attack, and a grader
            that nothing attacked must not look sound); also a ``ValueError``.
    """
    if kind not in KINDS:
        raise SpecError(f"unknown attack kind {kind!r}; kinds: {', '.join(KINDS)}")
    if names is not None:
        chosen = []
        for name in names:
            if name not in ATTACKS:
                known = ", ".join(sorted(ATTACKS))
                raise UnknownAttack(f"unknown attack {name!r}; known attacks: {known}")
            chosen.append(ATTACKS[name])
        return chosen
    return [a for a in ATTACKS.values() if kind in a.kinds]
