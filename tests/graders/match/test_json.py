from __future__ import annotations

import json

import pytest

from truegrade.core import Flag, SpecError, load_grader
from truegrade.graders.match._json import fenced_blocks, strict_equal

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def grade(response, **options):
    options.setdefault("schema", SCHEMA)
    return load_grader("json", **options).grade(
        {"id": 1, "response": response, "reference": options.pop("_ref", None)}
    )


def test_valid_and_invalid_against_the_schema():
    assert grade('{"name": "a", "age": 3}').passed is True
    bad = grade('{"name": "a", "age": -1, "x": 1}')
    assert bad.flags == ["schema_violation"] and "age" in bad.explanation


def test_fenced_blocks_and_hedges():
    assert grade('Here:\n```json\n{"name": "a", "age": 3}\n```').passed is True
    two = '```json\n{"name": "a", "age": 3}\n```\n```json\n{"name": "b", "age": 3}\n```'
    assert grade(two).flags == [Flag.HEDGED]
    assert fenced_blocks("```\nx\n```\n```unclosed") == ["x\n"]


def test_not_json_and_deep_nesting():
    assert grade("{name: a}").flags == ["invalid_json"]
    assert grade("[" * 100_000 + "]" * 100_000).flags == ["invalid_json"]
    huge = grade("9" * 100_000)  # valid JSON; more digits than Python converts: the model's fail
    assert (huge.passed, huge.flags, huge.error) == (False, ["invalid_json"], None)


def test_equals_reference_is_type_strict():
    g = load_grader("json", equals_reference=True)
    ok = g.grade({"id": 1, "response": '{"a": [1, 2.0]}', "reference": {"a": [1.0, 2]}})
    assert ok.passed is True
    bool_vs_int = g.grade({"id": 2, "response": '{"a": true}', "reference": {"a": 1}})
    assert bool_vs_int.flags == ["value_mismatch"]
    assert not strict_equal("1", 1)


def test_schema_from_file_and_from_reference(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCHEMA))
    assert grade('{"name": "a", "age": 3}', schema=str(path)).passed is True
    g = load_grader("json", schema_from_reference=True)
    assert g.grade({"id": 1, "response": "3", "reference": {"type": "integer"}}).passed is True
    assert "bad_reference" in g.grade({"id": 1, "response": "3", "reference": {"type": 7}}).flags
    # the value where its schema belongs: no keyword, so it would pass any JSON
    value = g.grade({"id": 1, "response": '{"name": "a"}', "reference": {"name": "a"}})
    assert value.error and "constrains nothing" in value.error and value.passed is None
    for anything in ({}, True):  # "any JSON", said on purpose
        assert g.grade({"id": 1, "response": "[1]", "reference": anything}).passed is True


def test_invalid_schemas_are_spec_errors():
    with pytest.raises(SpecError, match="invalid JSON Schema"):
        load_grader("json", schema={"type": "nonsense"})
    with pytest.raises(SpecError, match="is a JSON Schema keyword"):
        load_grader("json", schema={"title": "Answer", "name": "x"})
    with pytest.raises(SpecError, match="give 'schema'"):
        load_grader("json")
