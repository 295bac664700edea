"""The rubric format: HealthBench's ``{criterion, points, tags}`` items, plus optional checks.

A rubric is a list of criteria written by someone who knows the domain. Each is worth
``points``: positive for what a good response does, negative for what a harmful one does (a
negative criterion that is *met* costs its points). ``tags`` group criteria for sub-scores
(HealthBench uses ``axis:accuracy``, ``level:example``...). A criterion is judged by an LLM
unless it carries a ``check``: a programmatic evaluator, any truegrade grader spec, whose
reference is the check's ``reference`` (``{type: regex, pattern: ...}``, ``{type: math,
reference: "1/2"}``, ``{type: python, path: checks.py, function: f}``), or the built-in
``contains`` (``{type: contains, all: [...]}`` / ``any: [...]``, case-insensitive).

Where a rubric comes from: each row's own (the ``reference`` is the list, or an object with a
``rubric`` / ``rubrics`` / ``criteria`` list: HealthBench rows load as they are), or one rubric
shared across rows (the grader's ``rubric`` option: a YAML or JSON file, or the list inline).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from truegrade.core import SpecError, describe_validation_error, read_config_file

__all__ = ["Rubric", "RubricItem", "load_rubric", "parse_rubric"]

_LIST_KEYS = ("rubric", "rubrics", "criteria")


class RubricItem(BaseModel):
    """One criterion.

    Attributes:
        criterion: What the response should (or, with negative points, should not) do.
        points: Its weight; negative for undesirable behaviour. Never zero.
        tags: Labels for sub-scores and breakdowns (``axis:safety``, ``level:cluster``...).
        check: A programmatic evaluator instead of a judge: ``{type: contains, all|any: [...]}``
            or any grader spec (``type`` plus its options, ``reference`` for the value it
            checks against).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    criterion: str = Field(min_length=1)
    points: float
    tags: tuple[str, ...] = ()
    check: dict[str, Any] | None = None

    @field_validator("points")
    @classmethod
    def _nonzero(cls, value: float) -> float:
        if value == 0 or value != value:
            raise ValueError("points must be a non-zero number (negative for harms)")
        return value

    @field_validator("check", mode="before")
    @classmethod
    def _check_spec(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"type": value}
        if value is not None and not (isinstance(value, Mapping) and "type" in value):
            raise ValueError("check must be a grader spec with a 'type' (e.g. {type: regex, ...})")
        return value

    @property
    def judged(self) -> bool:
        """Whether an LLM judges this criterion (it has no programmatic check)."""
        return self.check is None


class Rubric(BaseModel):
    """A list of criteria, with the sums the score is made of."""

    model_config = ConfigDict(frozen=True)

    items: tuple[RubricItem, ...]

    @property
    def positive_points(self) -> float:
        """The score's denominator: what a response meeting every positive criterion earns."""
        return sum(i.points for i in self.items if i.points > 0)

    def __len__(self) -> int:
        return len(self.items)


def parse_rubric(value: Any, *, where: str = "rubric") -> Rubric:
    """A rubric from a list of items or an object holding one (``rubric`` / ``rubrics`` /
    ``criteria``), with an error naming the bad item and field.

    Raises:
        SpecError: malformed rubric.

    Examples:
        >>> r = parse_rubric(
        ...     [{"criterion": "Says 4", "points": 5}, {"criterion": "Rude", "points": -2}]
        ... )
        >>> r.positive_points
        5.0
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise SpecError(f"{where}: a rubric is a list of criteria, got text") from None
    if isinstance(value, Mapping):
        for key in _LIST_KEYS:
            if key in value:
                value = value[key]
                break
        else:
            raise SpecError(f"{where}: an object holding a rubric needs a 'rubric' list")
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)) or not value:
        raise SpecError(f"{where}: a rubric is a non-empty list of criteria")
    items = []
    for i, raw in enumerate(value):
        if not isinstance(raw, Mapping):
            raise SpecError(f"{where}[{i}]: a criterion is an object with 'criterion' and 'points'")
        try:
            items.append(RubricItem.model_validate(dict(raw)))
        except ValidationError as exc:
            problems = describe_validation_error(exc, whole="item")
            raise SpecError(f"{where}[{i}]: {problems}") from None
    return Rubric(items=tuple(items))


def load_rubric(path: str | Path) -> Rubric:
    """A rubric from a YAML or JSON file (a list, or an object holding one)."""
    file = Path(path)
    data = read_config_file(file, "rubric")
    return parse_rubric(data, where=str(file))
