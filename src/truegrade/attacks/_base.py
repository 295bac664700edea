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

from truegrade.core import GRADER_FAMILIES, Grade, Sample

__all__ = [
    "ATTACKS",
    "KINDS",
    "Attack",
    "Candidate",
    "attack",
    "is_rewarded",
]

KINDS = GRADER_FAMILIES
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


#: Every registered attack by name, in registration order (``@attack`` adds to it).
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


def reference_text(sample: Sample) -> str:
    """The reference as text (empty when there is none)."""
    ref: Any = sample.reference
    if ref is None:
        return ""
    return ref if isinstance(ref, str) else str(ref)


def is_rewarded(grade: Grade, threshold: float) -> bool:
    """A response is rewarded when it passed, or scored above ``threshold``, without error."""
    if grade.error is not None:
        return False
    return grade.passed is True or grade.score > threshold
