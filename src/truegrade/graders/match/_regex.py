"""``regex``: the response matches (or, negated, does not match) a regular expression.

Patterns are the user's, responses are hostile, and a backtracking pattern can run for ever on
the right input, so this grader runs in killable workers by default: a catastrophic match becomes
a ``timeout`` grade, not a hung batch. A pattern that does not compile, or an empty or blank one
(a blank cell, which would match everything or nearly), is an error, never a verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import model_validator

from truegrade.core import Sample
from truegrade.graders._extract import check_pattern
from truegrade.graders._kernel import (
    GraderOptions,
    Kernel,
    KernelGrader,
    error_verdict,
    verdict,
)

__all__ = ["RegexGrader", "RegexOptions"]


class RegexOptions(GraderOptions):
    """Options of ``regex``.

    Attributes:
        pattern: The expression (or give ``pattern_from_reference``).
        pattern_from_reference: Take each sample's reference as its pattern.
        mode: ``search`` (anywhere), ``match`` (at the start) or ``fullmatch`` (the whole text).
        ignore_case / multiline / dotall: The usual flags.
        negate: Pass when the pattern does *not* match (for "must not contain" gates).
    """

    pattern: str | None = None
    pattern_from_reference: bool = False
    mode: Literal["search", "match", "fullmatch"] = "search"
    ignore_case: bool = False
    multiline: bool = False
    dotall: bool = False
    negate: bool = False

    @model_validator(mode="after")
    def _one_source(self) -> RegexOptions:
        if (self.pattern is None) == (not self.pattern_from_reference):
            raise ValueError("give exactly one of 'pattern' or 'pattern_from_reference: true'")
        if self.pattern is not None:
            if not self.pattern.strip():
                raise ValueError("an empty or blank pattern is no check")
            check_pattern(self.pattern)
        return self


@dataclass(frozen=True)
class _RegexKernel:
    deadline_clock = "cpu"  # it only computes, so it is timed in CPU time (exec.Task)

    pattern: str | None
    flags: int
    mode: str
    negate: bool

    def __call__(self, payload: tuple[str, Any]) -> dict[str, Any]:
        response, reference = payload
        source = self.pattern if self.pattern is not None else reference
        if not isinstance(source, str):
            return error_verdict("the reference is not a pattern string", "bad_reference")
        if not source.strip():
            return error_verdict(
                "the reference is an empty or blank pattern: it checks nothing", "bad_reference"
            )
        try:
            compiled = re.compile(source, self.flags)
        except re.error as exc:
            return error_verdict(
                f"the reference is not a valid regular expression: {exc}", "bad_reference"
            )
        match = getattr(compiled, self.mode)(response)
        if self.negate:
            if match is None:
                return verdict(True, "the forbidden pattern does not occur")
            return verdict(
                False,
                f"forbidden pattern found at {match.start()}-{match.end()}",
                "forbidden_match",
            )
        if match is None:
            return verdict(False, "the pattern does not match", "no_match")
        return verdict(True, f"matched at {match.start()}-{match.end()}")


class RegexGrader(KernelGrader):
    """Pass when the pattern matches (or does not, with ``negate``).

    Examples:
        >>> g = RegexGrader.from_options({"pattern": r"^<think>.*</think>", "dotall": True})
    """

    kind = "regex"
    family = "text"
    Options = RegexOptions
    default_execution = "process"
    default_timeout_s = 5.0
    options: RegexOptions

    def __init__(self, options: GraderOptions | None = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        self.requires_reference = self.options.pattern_from_reference

    def kernel(self) -> Kernel:
        o = self.options
        flags = (
            (re.IGNORECASE if o.ignore_case else 0)
            | (re.MULTILINE if o.multiline else 0)
            | (re.DOTALL if o.dotall else 0)
        )
        return _RegexKernel(o.pattern, flags, o.mode, o.negate)

    def payload(self, sample: Sample) -> Any:
        return (
            sample.response_text,
            sample.reference if self.options.pattern_from_reference else None,
        )
