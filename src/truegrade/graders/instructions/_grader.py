"""``instructions``: verifiable instruction-following constraints (IFEval's), hardened.

A row carries IFEval's ``instruction_id_list`` and ``kwargs`` (in ``reference``, as an object or
its JSON text, or as columns of the row, as IFEval's own data has them). Each constraint gets
IFEval's verdict in the chosen mode (``strict`` or ``loose``); the grade's subscores hold one
verdict per constraint, ``passed`` is all of them, and ``score`` is all-or-nothing or the
fraction followed.

Hardened (the default), a constraint met only by text copied from the prompt or by keywords
stuffed outside sentences counts as not followed, and a response with no substance (degenerate,
off topic, or hedging between the allowed answers) fails outright; ``hardened: false`` gives
IFEval's verdicts unchanged, still reporting those findings as flags. The checkers run
regular expressions and a language detector over hostile text, so the work runs in killable
workers by default.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from truegrade.core import Flag, Grade, Sample
from truegrade.graders._kernel import GraderOptions, Kernel, KernelGrader, error_verdict, verdict
from truegrade.graders.instructions._checks import Constraint, check, parse_constraints
from truegrade.graders.instructions._defences import (
    blank,
    boilerplate_spans,
    empty_blocks,
    find_evidence,
    generic,
    given_words,
    hedged_options,
    off_topic,
    only_prompt_words,
    substance_words,
    word_floor,
)

__all__ = ["InstructionFlag", "InstructionsGrader", "InstructionsOptions", "constraints_of"]


class InstructionFlag:
    """Flags of the ``instructions`` grader (besides ``hedged``)."""

    PROMPT_ECHO = "prompt_echo"
    """A constraint is met only by text copied from the prompt."""
    KEYWORD_STUFFING = "keyword_stuffing"
    """A constraint is met only by keywords (or letters, capital words) outside sentences."""
    DEGENERATE = "degenerate"
    """Nothing of substance is left: too few words, or one word repeated."""
    OFF_TOPIC = "off_topic"
    """The response shares no content word with the prompt."""
    CONSTRAINT_NOT_FOLLOWED = "constraint_not_followed"
    """At least one constraint is not followed."""


class InstructionsOptions(GraderOptions):
    """Options of ``instructions``.

    Attributes:
        mode: ``strict`` or ``loose`` (IFEval's two modes).
        score: ``all`` (1 when every constraint is followed) or ``fraction`` (the share
            followed).
        hardened: Fail constraints met by echo or stuffing, and rows with no substance;
            ``false`` gives IFEval's verdicts (the findings are still flagged).
        min_words: Fewest words of substance a response needs (lowered when a constraint caps
            the length below it).
        echo_min_words: Copied runs of this many words count as an echo of the prompt.
        off_topic: Responses that share no content word with the prompt are flagged
            ``off_topic``; ``generic`` (the default) also fails them when their words would fit
            any request, ``always`` fails every one (a poem that never names its subject
            too), ``never`` does not judge it.
    """

    mode: Literal["strict", "loose"] = "strict"
    score: Literal["all", "fraction"] = "all"
    hardened: bool = True
    min_words: int = Field(default=1, ge=1)
    echo_min_words: int = Field(default=10, ge=4)
    off_topic: Literal["generic", "always", "never"] = "generic"


def constraints_of(reference: Any, metadata: Mapping[str, Any]) -> Any:
    """The row's ``(instruction_id_list, kwargs)``: from ``reference`` (an object or its JSON
    text) or from the row's own columns; None when the row has neither."""
    if isinstance(reference, str):
        try:
            reference = json.loads(reference)
        except ValueError:
            return reference  # the kernel reports it as unusable
    if isinstance(reference, Mapping) and "instruction_id_list" in reference:
        return (reference["instruction_id_list"], reference.get("kwargs"))
    if reference is not None:
        return reference
    if "instruction_id_list" in metadata:
        return (metadata["instruction_id_list"], metadata.get("kwargs"))
    return None


@dataclass
class _Findings:
    """What the defences found: constraint label -> flag, and flags on the whole row (those in
    ``failing`` fail it when hardened; an ``off_topic`` that is not generic is only noted)."""

    constraints: dict[str, str] = field(default_factory=dict)
    row: list[str] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _InstructionsKernel:
    deadline_clock = "cpu"  # it only computes, so it is timed in CPU time (exec.Task)

    mode: Literal["strict", "loose"]
    score: str
    hardened: bool
    min_words: int
    echo_min_words: int
    off_topic: str

    def __call__(self, payload: tuple[str, Any, str]) -> dict[str, Any]:
        response, raw, prompt = payload
        if not (isinstance(raw, tuple) and len(raw) == 2):
            return error_verdict(
                "the reference holds no 'instruction_id_list' (and 'kwargs')", "bad_reference"
            )
        try:
            constraints = parse_constraints(*raw)
        except ValueError as exc:
            return error_verdict(f"the row's constraints are unusable: {exc}", "bad_reference")
        plain = [check(c, response, self.mode) for c in constraints]
        found = self._defend(response, prompt, constraints, plain)
        final = [
            ok and not (self.hardened and c.label in found.constraints)
            for c, ok in zip(constraints, plain, strict=True)
        ]
        fails_row = self.hardened and bool(found.failing)
        passed = all(final) and not fails_row
        if self.score == "all":
            score = 1.0 if passed else 0.0
        else:
            score = 0.0 if fails_row else sum(final) / len(final)
        flags = sorted(set(found.constraints.values()) | set(found.row))
        if not all(final):
            flags.append(InstructionFlag.CONSTRAINT_NOT_FOLLOWED)
        return verdict(
            passed,
            _explain(constraints, final, found, self.mode, self.hardened),
            *flags,
            score=score,
            subscores={c.label: float(ok) for c, ok in zip(constraints, final, strict=True)},
        )

    def _defend(
        self, response: str, prompt: str, constraints: Sequence[Constraint], plain: list[bool]
    ) -> _Findings:
        found = _Findings()
        evidence = find_evidence(response, prompt, constraints, echo_min_words=self.echo_min_words)
        for c, ok in zip(constraints, plain, strict=True):
            if not ok or c.id == "combination:repeat_prompt":
                continue
            if not check(c, evidence.unechoed, self.mode):
                found.constraints[c.label] = InstructionFlag.PROMPT_ECHO
            elif c.label in evidence.stuffed and not check(
                c, evidence.without_stuffing(c.label), self.mode
            ):
                found.constraints[c.label] = InstructionFlag.KEYWORD_STUFFING
        rest = evidence.without_stuffing()
        said = blank(rest, boilerplate_spans(rest, constraints))
        substance = substance_words(said)
        distinct = {w.lower() for w in substance}
        if (
            len(distinct) < word_floor(constraints, self.min_words)
            or (len(substance) >= 10 and len(distinct) <= 3)
            or empty_blocks(rest, said, constraints)
        ):
            found.row.append(InstructionFlag.DEGENERATE)
            found.failing.append(InstructionFlag.DEGENERATE)
        elif prompt.strip() and only_prompt_words(said, prompt):
            found.row.append(InstructionFlag.PROMPT_ECHO)
            found.failing.append(InstructionFlag.PROMPT_ECHO)
        elif self.off_topic != "never" and prompt.strip() and off_topic(rest, prompt, constraints):
            found.row.append(InstructionFlag.OFF_TOPIC)
            if self.off_topic == "always" or generic(rest, given_words(constraints)):
                found.failing.append(InstructionFlag.OFF_TOPIC)
        if any(c.id == "detectable_format:constrained_response" for c in constraints) and (
            hedged_options(response) > 1
        ):
            found.row.append(Flag.HEDGED)
            found.failing.append(Flag.HEDGED)
        return found


def _explain(
    constraints: Sequence[Constraint],
    final: list[bool],
    found: _Findings,
    mode: str,
    hardened: bool,
) -> str:
    parts = [f"{sum(final)}/{len(constraints)} constraints followed ({mode})"]
    missed, noted = [], []
    for c, ok in zip(constraints, final, strict=True):
        flag = found.constraints.get(c.label)
        how = f"; met only by {flag.replace('_', ' ')}" if flag else ""
        if not ok:
            missed.append(f"{c.label} ({c.describe()}{how})")
        elif flag:
            noted.append(f"{c.label} met only by {flag.replace('_', ' ')}")
    if missed:
        parts.append("not followed: " + "; ".join(missed))
    failing = [f.replace("_", " ") for f in found.failing]
    if failing:
        verb = "no attempt at the request" if hardened else "noted, no attempt at the request"
        parts.append(f"{verb}: " + ", ".join(failing))
    noted += [f.replace("_", " ") for f in found.row if f not in found.failing]
    if noted:
        parts.append("noted: " + ", ".join(noted))
    return "; ".join(parts)


class InstructionsGrader(KernelGrader):
    """IFEval constraints checked per row, strict or loose, hardened against gaming.

    Examples:
        >>> g = InstructionsGrader.from_options({"execution": "inline"})
        >>> row = {"prompt": "Describe a lighthouse at night without commas.",
        ...        "response": "The lighthouse sweeps its beam over the dark water all night.",
        ...        "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
        >>> g.grade(row).passed
        True
        >>> g.grade({**row, "response": "ok"}).flags
        ['off_topic']
    """

    kind = "instructions"
    family = "instructions"
    Options = InstructionsOptions
    default_execution = "process"
    default_timeout_s = 10.0
    options: InstructionsOptions

    def __init__(self, options: GraderOptions | None = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.requires_reference = False  # IFEval's rows carry the constraints as columns

    def _precheck(self, sample: Sample) -> Grade | None:
        problem = super()._precheck(sample)
        if problem is None and constraints_of(sample.reference, sample.metadata) is None:
            return Grade.failure(
                "the instructions grader needs 'instruction_id_list' and 'kwargs' (in "
                "'reference' or as columns of the row)",
                Flag.NO_REFERENCE,
            )
        return problem

    def kernel(self) -> Kernel:
        o = self.options
        return _InstructionsKernel(
            o.mode, o.score, o.hardened, o.min_words, o.echo_min_words, o.off_topic
        )

    def payload(self, sample: Sample) -> Any:
        raw = constraints_of(sample.reference, sample.metadata)
        return (sample.response_text, raw, sample.prompt_text)
