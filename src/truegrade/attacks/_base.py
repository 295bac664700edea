"""What an attack is: a generator of responses that are wrong by construction.

An attack looks at one item (its prompt and reference) and writes responses a grader should fail:
each one either commits to a wrong answer, hedges between answers, or gives no answer at all,
dressed up in the way some real grader is known to reward. Its docstring says why the result is
wrong. Attacks never call a grader; the runner does that through the ``Grader`` contract.

Attacks are plain functions registered with ``@attack``; ``ATTACKS`` maps names to them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from truegrade.core import Sample

__all__ = [
    "ATTACKS",
    "KINDS",
    "Attack",
    "Candidate",
    "attack",
    "attacks_for",
]

KINDS = ("math", "code", "text", "instructions")
"""Families of graders the library targets: final-answer graders (``math``, ``numeric``,
``exact``...), code graders, free-text graders (judges, rubrics, reward models), and
instruction-following graders (IFEval constraints)."""


@dataclass(frozen=True)
class Candidate:
    """One adversarial response.

    Attributes:
        response: The text to submit as the model's response.
        variant: Which form of the attack it is (``boxes``, ``or``...), for the report.
    """

    response: str
    variant: str = ""


Generator = Callable[[Sample, random.Random], Iterable[Candidate]]


@dataclass(frozen=True)
class Attack:
    """A registered attack.

    Attributes:
        name: Unique name (``--attacks NAME``).
        kinds: Grader families it targets (see ``KINDS``).
        why_wrong: Why every response it writes is wrong (from the generator's docstring).
        generate: ``(sample, rng) -> candidates``; may yield nothing when it does not apply.
        hostile: Its responses are built to hang or exhaust a grader (denial of service), to
            escape, or to change files where they run: only for sandboxed graders, and only
            when asked for by name or with ``hostile=True``.
    """

    name: str
    kinds: frozenset[str]
    why_wrong: str
    generate: Generator = field(repr=False)
    hostile: bool = False

    def candidates(self, sample: Sample, rng: random.Random) -> list[Candidate]:
        """Run the generator; an attack that does not apply to this item returns []."""
        return list(self.generate(sample, rng))


ATTACKS: dict[str, Attack] = {}


def attack(name: str, *kinds: str, hostile: bool = False) -> Callable[[Generator], Generator]:
    """Register a generator as an attack; its docstring must say why its output is wrong."""

    def register(fn: Generator) -> Generator:
        unknown = set(kinds) - set(KINDS)
        if unknown or not kinds:
            raise ValueError(f"attack {name!r}: kinds must be among {KINDS}")
        if name in ATTACKS:
            raise ValueError(f"attack {name!r} is registered twice")
        doc = (fn.__doc__ or "").strip()
        if not doc:
            raise ValueError(f"attack {name!r} has no docstring saying why it is wrong")
        ATTACKS[name] = Attack(name, frozenset(kinds), " ".join(doc.split()), fn, hostile)
        return fn

    return register


def attacks_for(kind: str, names: Iterable[str] | None = None) -> list[Attack]:
    """The attacks that target ``kind``, or exactly the named ones (any kind).

    Raises:
        KeyError: a name is not a registered attack (the message lists the known ones).
        ValueError: ``kind`` is not one of ``KINDS`` (it would match no attack, and a grader
            that nothing attacked must not look sound).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown attack kind {kind!r}; kinds: {', '.join(KINDS)}")
    _load_library()
    if names is not None:
        chosen = []
        for name in names:
            if name not in ATTACKS:
                known = ", ".join(sorted(ATTACKS))
                raise KeyError(f"unknown attack {name!r}; known attacks: {known}")
            chosen.append(ATTACKS[name])
        return chosen
    return [a for a in ATTACKS.values() if kind in a.kinds]


def _load_library() -> None:
    # importing the modules registers their attacks
    from truegrade.attacks import _code, _instructions, _math, _stdio, _text  # noqa: F401


def reference_text(sample: Sample) -> str:
    """The reference as text (empty when there is none)."""
    ref: Any = sample.reference
    if ref is None:
        return ""
    return ref if isinstance(ref, str) else str(ref)
