"""``json``: the response is JSON that validates against a JSON Schema (and optionally equals the
reference).

Validation uses the ``jsonschema`` library (every draft it knows, chosen by ``$schema``). Schemas
may contain ``pattern`` keywords, i.e. user regexes run on hostile strings, so this grader runs
in killable workers by default. Several fenced JSON blocks that disagree are a hedge.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema
from jsonschema.exceptions import SchemaError
from pydantic import model_validator

from truegrade.core import DataError, Flag, Sample, SpecError, read_json
from truegrade.graders._kernel import (
    GraderOptions,
    Kernel,
    KernelGrader,
    error_verdict,
    verdict,
)
from truegrade.graders.match._fences import fenced_blocks, fences

__all__ = ["JsonGrader", "JsonOptions", "fenced_blocks", "fences", "strict_equal"]


def strict_equal(a: Any, b: Any) -> bool:
    """JSON equality where ``true`` is not ``1`` and ``"1"`` is not ``1`` (``1`` equals ``1.0``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


class JsonOptions(GraderOptions):
    """Options of ``json``.

    Attributes:
        schema_: A JSON Schema (mapping) or the path of a schema file (key ``schema``).
        schema_from_reference: Use each sample's reference as its schema.
        equals_reference: Also require the parsed value to equal the reference (strict types).
        extract: ``auto`` (fenced ``` blocks if any, else the whole response), ``whole``.
    """

    schema_: dict[str, Any] | str | None = None
    schema_from_reference: bool = False
    equals_reference: bool = False
    extract: Literal["auto", "whole"] = "auto"

    @model_validator(mode="before")
    @classmethod
    def _alias_schema(cls, data: Any) -> Any:
        if isinstance(data, dict) and "schema" in data:
            data = {**data, "schema_": data["schema"]}
            del data["schema"]
        return data

    @model_validator(mode="after")
    def _something_to_check(self) -> JsonOptions:
        if self.schema_ is None and not self.schema_from_reference and not self.equals_reference:
            raise ValueError(
                "give 'schema', 'schema_from_reference: true' or 'equals_reference: true'"
            )
        if self.schema_ is not None and self.schema_from_reference:
            raise ValueError("give either 'schema' or 'schema_from_reference', not both")
        return self


def _check_schema(schema: Any) -> str | None:
    """Why ``schema`` is no JSON Schema, or None. An object none of whose keys is a keyword of
    its draft (``{"name": "x"}``: a value given where its schema belongs) constrains nothing
    and would pass any JSON, so it is refused; ``{}`` and ``true`` say "anything" on purpose."""
    if not isinstance(schema, (dict, bool)):
        return "a JSON Schema must be an object"
    validator = jsonschema.validators.validator_for(schema)
    try:
        validator.check_schema(schema)  # type: ignore[arg-type]
    except SchemaError as exc:
        return f"invalid JSON Schema: {exc.message}"
    if isinstance(schema, dict) and schema and not set(schema) & set(validator.VALIDATORS):
        shown = ", ".join(repr(k) for k in list(schema)[:4])
        return f"none of its keys ({shown}) is a JSON Schema keyword: it constrains nothing"
    return None


@dataclass
class _JsonKernel:
    deadline_clock = "cpu"  # it only computes, so it is timed in CPU time (exec.Task)

    schema: dict[str, Any] | None
    schema_from_reference: bool
    equals_reference: bool
    extract: str
    _validator: Any = field(default=None, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_validator"] = None
        return state

    def _validator_for(self, schema: Any) -> Any:
        cls = jsonschema.validators.validator_for(schema)
        return cls(schema)

    def __call__(self, payload: tuple[str, Any]) -> dict[str, Any]:
        response, reference = payload
        schema = reference if self.schema_from_reference else self.schema
        if self.schema_from_reference:
            problem = _check_schema(schema)
            if problem:
                return error_verdict(
                    f"the reference is not usable as a schema: {problem}", "bad_reference"
                )
            validator = self._validator_for(schema)
        elif schema is not None:
            if self._validator is None:
                self._validator = self._validator_for(schema)
            validator = self._validator
        else:
            validator = None
        texts = fenced_blocks(response) if self.extract == "auto" else []
        texts = texts or [response]
        values: list[Any] = []
        for text in texts:
            try:
                values.append(json.loads(text))
            except json.JSONDecodeError as exc:
                return verdict(
                    False, f"not valid JSON: {exc.msg} (line {exc.lineno})", "invalid_json"
                )
            except RecursionError:
                return verdict(False, "not valid JSON: nested too deeply", "invalid_json")
            except ValueError as exc:  # valid syntax Python cannot hold: an integer of 5,000 digits
                return verdict(False, f"not usable JSON: {str(exc)[:200]}", "invalid_json")
        first = values[0]
        if any(not strict_equal(first, v) for v in values[1:]):
            return verdict(False, f"{len(values)} different JSON blocks given", Flag.HEDGED)
        if validator is not None:
            errors = sorted(validator.iter_errors(first), key=lambda e: list(e.path))
            if errors:
                shown = "; ".join(
                    f"{'/'.join(map(str, e.path)) or '(root)'}: {e.message[:100]}"
                    for e in errors[:3]
                )
                return verdict(
                    False, f"{len(errors)} schema violation(s): {shown}", "schema_violation"
                )
        if self.equals_reference and not strict_equal(first, reference):
            return verdict(False, "valid, but not equal to the reference", "value_mismatch")
        return verdict(
            True,
            "valid JSON"
            + (" equal to the reference" if self.equals_reference else " matching the schema"),
        )


class JsonGrader(KernelGrader):
    """JSON output checked against a schema (``jsonschema``) or equal to the reference.

    Examples:
        >>> g = JsonGrader.from_options({"schema": {"type": "object", "required": ["name"]}})
        >>> g.grade({"id": 1, "response": '{"name": "x"}'}).passed
        True
    """

    kind = "json"
    family = "text"
    Options = JsonOptions
    default_execution = "process"
    default_timeout_s = 10.0
    options: JsonOptions

    def __init__(self, options: GraderOptions | None = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        o = self.options
        self.requires_reference = o.schema_from_reference or o.equals_reference
        schema = o.schema_
        if isinstance(schema, str):
            path = Path(schema) if self.base_dir is None else self.base_dir / schema
            try:
                schema = read_json(path, "JSON Schema")
            except DataError as exc:
                raise SpecError(str(exc)) from None
        if schema is not None:
            problem = _check_schema(schema)
            if problem:
                raise SpecError(problem)
        self.schema = schema

    def kernel(self) -> Kernel:
        o = self.options
        return _JsonKernel(self.schema, o.schema_from_reference, o.equals_reference, o.extract)

    def payload(self, sample: Sample) -> Any:
        return (sample.response_text, sample.reference)
