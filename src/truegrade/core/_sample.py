"""``Sample``: one item to grade, as every grader and analysis sees it.

A sample is data from a model and a dataset, both of which may be hostile. Nothing here interprets
the text; it only gives it a stable shape and a way to get plain text out of chat messages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from truegrade.core._errors import DataError
from truegrade.core._presets import RESPONSE_COLUMNS, Preset, apply_preset

__all__ = [
    "COLUMNS",
    "Content",
    "Message",
    "Sample",
    "distinct_items",
    "message_text",
    "to_sample",
    "to_samples",
]

Message = dict[str, Any]
"""A chat message in the OpenAI shape: ``{"role": ..., "content": str | list[part]}``."""

Content = Union[str, list[Message]]  # noqa: UP007 - a runtime alias must work on 3.10
"""Text, or a list of chat messages."""

COLUMNS = {
    "reference": ("reference", "answer", "ground_truth", "solution", "tests"),
    "prompt": ("prompt", "question", "problem"),
    "response": RESPONSE_COLUMNS,
}
"""The columns each field is read from, the first present wins: one list for the CLI, the
Python API, the reward server, TRL, verl and Ray. The others stay in ``metadata``."""

_ALIASES = {column: target for target, columns in COLUMNS.items() for column in columns}
_KNOWN = {"id", "prompt", "response", "reference", "label", "group", "metadata"}


def message_text(content: Any) -> str:
    """Plain text of a message content (a string, or a list of OpenAI content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return str(content)


class Sample(BaseModel):
    """One item to grade.

    Attributes:
        id: Stable identifier; results and resumes are keyed on it.
        prompt: The prompt, as text or chat messages.
        response: The model's output, as text or chat messages. ``None`` for items not yet answered
            (the attack engine writes its own responses).
        reference: What the grader checks against: a gold answer, a test spec, a rubric...
        label: A human or gold verdict on this response, used only by validation.
        group: Cluster id (usually the prompt) for clustered statistics and best-of-n.
        metadata: Everything else. Unknown top-level columns of a row land here.

    Examples:
        >>> Sample(id="q1", prompt="2+2?", response="\\\\boxed{4}", reference="4").response_text
        '\\\\boxed{4}'
    """

    model_config = ConfigDict(extra="forbid", frozen=False)

    id: str | int
    prompt: Content | None = None
    response: Content | None = None
    reference: Any = None
    label: bool | float | None = None
    group: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("group", mode="before")
    @classmethod
    def _group_as_text(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("label", mode="before")
    @classmethod
    def _label_strict(cls, value: Any) -> Any:
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in {"true", "pass", "passed", "correct", "yes"}:
                return True
            if lowered in {"false", "fail", "failed", "incorrect", "no"}:
                return False
            raise ValueError(f"label {value!r} is neither a boolean nor a number")
        return value

    @property
    def key(self) -> str:
        """The id as text: the key results are stored and resumed under."""
        return str(self.id)

    @property
    def item(self) -> str:
        """The item this row answers: its ``group`` (the prompt's rollouts share one), else its
        own id. Attacks, the audit and the card count items by it; grading counts rows."""
        return self.group if self.group is not None else self.key

    @property
    def response_text(self) -> str:
        """The response as plain text; for chat messages, the last assistant message."""
        return _text_of(self.response, prefer_role="assistant")

    @property
    def prompt_text(self) -> str:
        """The prompt as plain text; for chat messages, all contents joined by blank lines."""
        if isinstance(self.prompt, list):
            return "\n\n".join(message_text(_content(m)) for m in self.prompt)
        return _text_of(self.prompt, prefer_role=None)

    @classmethod
    def from_row(
        cls,
        row: Mapping[str, Any],
        *,
        default_id: str | int | None = None,
        preset: str | Preset | None = "auto",
    ) -> Sample:
        """Build a sample from a data row, read by a preset, applying aliases and keeping
        unknown columns.

        A published dataset's row is read by its preset (``auto``: detected from the columns of
        a row without ``reference``; see ``truegrade.core.PRESETS``). Each field is read from the
        first of its columns present (``answer``, ``ground_truth``, ``solution``
        and ``tests`` stand for ``reference``, ``question`` and ``problem`` for ``prompt``,
        ``completion`` for ``response``); the rest, and every unknown column, land in
        ``metadata`` so a bring-your-own reward function still sees them.

        Raises:
            DataError: the row is not an object, a preset that does not fit it, or a field has
                the wrong type (the message names the field).
        """
        if not isinstance(row, Mapping):
            raise DataError(f"a row must be a JSON object, got {type(row).__name__}")
        row = apply_preset(row, preset)
        fields: dict[str, Any] = {}
        metadata: dict[str, Any] = {}
        for name, value in row.items():
            target = _ALIASES.get(name, name)
            if target not in _KNOWN:
                metadata[name] = value
            elif name == target or _first_column(row, target) == name:
                fields[target] = value
            else:
                metadata[name] = value  # an earlier column of the field is given: kept as data
        if "metadata" in fields:
            given = fields["metadata"]
            if given is not None and not isinstance(given, Mapping):
                raise DataError(f"field 'metadata' must be an object, got {type(given).__name__}")
            metadata = {**metadata, **(given or {})}
        fields["metadata"] = metadata
        if fields.get("id") is None:
            if default_id is None:
                raise DataError("row has no 'id' and no default was given")
            fields["id"] = default_id
        try:
            return cls.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"][:1]) or "row"
            raise DataError(f"field '{where}': {first['msg']}") from None


def _first_column(row: Mapping[str, Any], target: str) -> str | None:
    """The column ``target`` is read from: its own name when present, else the first alias
    holding a value."""
    if target in row:
        return target
    return next((c for c in COLUMNS[target] if row.get(c) is not None), None)


def _content(message: Any) -> Any:
    return message.get("content") if isinstance(message, Mapping) else message


def _text_of(value: Content | None, *, prefer_role: str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if prefer_role is not None:
        for message in reversed(value):
            if isinstance(message, Mapping) and message.get("role") == prefer_role:
                return message_text(message.get("content"))
    if value:
        return message_text(_content(value[-1]))
    return ""


def to_sample(item: Sample | Mapping[str, Any], *, default_id: str | int | None = None) -> Sample:
    """Accept a ``Sample`` or a plain row dict; anything else is a clear ``TypeError``."""
    if isinstance(item, Sample):
        return item
    if isinstance(item, Mapping):
        return Sample.from_row(item, default_id=default_id)
    raise TypeError(f"expected a Sample or a row dict, got {type(item).__name__}")


def to_samples(items: Sequence[Sample | Mapping[str, Any]]) -> list[Sample]:
    """Coerce a batch; rows without an id get their position in the batch."""
    return [to_sample(item, default_id=i) for i, item in enumerate(items)]


def distinct_items(rows: Sequence[Sample]) -> list[Sample]:
    """One sample per item (``Sample.item``), the first row of each, with the item as its id
    and no group: the unit attacks, audits and cards count, whatever the rows' responses."""
    seen: dict[str, Sample] = {}
    for row in rows:
        if row.item not in seen:
            seen[row.item] = row.model_copy(update={"id": row.item, "group": None})
    return list(seen.values())
