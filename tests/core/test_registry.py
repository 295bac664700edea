from __future__ import annotations

import json

import pytest

from truegrade.core import Grade, SpecError, grader_names, load_grader, register_grader
from truegrade.core._grader import BaseGrader


def test_builtin_names_load_with_options():
    g = load_grader("exact", normalize=["lower"], name="em")
    assert g.name == "em"
    assert g.spec == {"type": "exact", "normalize": ["lower"], "name": "em"}


def test_unknown_name_suggests_and_lists():
    with pytest.raises(SpecError, match=r"unknown grader 'exactt'\. Did you mean 'exact'"):
        load_grader("exactt")


def test_unknown_and_invalid_options_are_named():
    with pytest.raises(SpecError, match=r"unknown option 'normalise'.*options: .*normalize"):
        load_grader("exact", normalise=["lower"])
    with pytest.raises(SpecError, match=r"option 'normalize\.0'"):
        load_grader("exact", normalize=["shout"])
    with pytest.raises(SpecError, match="valid regular expression"):
        load_grader("regex", pattern="(")


def test_yaml_spec_with_relative_paths(tmp_path):
    (tmp_path / "schema.json").write_text(json.dumps({"type": "object", "required": ["a"]}))
    (tmp_path / "rewards.py").write_text(
        "def reward(prompts, completions, **kw):\n"
        "    return [float('yes' in c) for c in completions]\n"
    )
    spec = tmp_path / "grader.yaml"
    spec.write_text(
        "type: all_of\n"
        "parts:\n"
        "  - {type: json, schema: schema.json, execution: inline}\n"
        "  - {type: rewards.py:reward, pass_threshold: 1, execution: inline}\n"
    )
    grader = load_grader(str(spec))
    ok, bad = grader.grade_batch(
        [
            {"id": 1, "response": '{"a": "yes"}'},
            {"id": 2, "response": '{"b": "yes"}'},
        ]
    )
    assert ok.passed is True
    assert bad.passed is False and bad.explanation == "failed: json"


def test_spec_file_errors_are_clear(tmp_path):
    with pytest.raises(SpecError, match="grader spec not found"):
        load_grader(str(tmp_path / "missing.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("type: [unclosed")
    with pytest.raises(SpecError, match=r"bad.yaml:\d+: grader spec is not YAML: .*\(column \d+\)"):
        load_grader(str(bad))
    nameless = tmp_path / "nameless.yaml"
    nameless.write_text("normalize: [lower]\n")
    with pytest.raises(SpecError, match="'type'"):
        load_grader(str(nameless))


def test_composition_spec_errors():
    with pytest.raises(SpecError, match="exactly 'check' and 'then'"):
        load_grader({"type": "gate", "check": "exact"})
    with pytest.raises(SpecError, match="non-empty list 'parts'"):
        load_grader({"type": "weighted", "parts": []})
    with pytest.raises(SpecError, match="'grader' and 'weight'"):
        load_grader({"type": "weighted", "parts": ["exact"]})


def test_objects_and_callables_are_accepted():
    g = load_grader("exact")
    assert load_grader(g) is g
    with pytest.raises(SpecError, match="options can only be given with a grader name"):
        load_grader(g, name="x")

    def reward(prompts, completions, **kwargs):
        return [1.0 for _ in completions]

    wrapped = load_grader(reward)
    assert wrapped.grade({"id": 1, "response": "x"}).score == 1.0


class Constant(BaseGrader):
    requires_reference = False

    def __init__(self, value: float) -> None:
        super().__init__(name="constant")
        self.value = value

    def _grade_valid(self, samples):
        return [Grade(score=self.value) for _ in samples]


@pytest.fixture
def registry(monkeypatch):
    """The registry of third-party graders, restored after the test: a name registered here
    would otherwise be loadable in every later test of the process."""
    from truegrade.core import _registry

    monkeypatch.setattr(_registry, "_registered", dict(_registry._registered))


def test_register_a_third_party_grader(registry):
    register_grader("constant", lambda options, base_dir: Constant(**options))
    assert "constant" in grader_names()
    assert load_grader("constant", value=0.25).grade({"id": 1, "response": "x"}).score == 0.25
    with pytest.raises(SpecError, match="built-in composition"):
        register_grader("gate", lambda o, b: Constant(0))


def test_a_spec_rebuilds_an_equivalent_grader():
    g = load_grader(
        {
            "type": "weighted",
            "parts": [{"grader": "exact", "weight": 1}, {"grader": "numeric", "weight": 1}],
        }
    )
    rebuilt = load_grader(g.spec)
    row = {"id": 1, "response": "7", "reference": "7"}
    assert rebuilt.grade(row).score == g.grade(row).score == 1.0


def test_recorded_specs_carry_absolute_paths(tmp_path, monkeypatch):
    (tmp_path / "schema.json").write_text(json.dumps({"type": "object"}))
    (tmp_path / "g.yaml").write_text("type: json\nschema: schema.json\nexecution: inline\n")
    g = load_grader(str(tmp_path / "g.yaml"))
    assert g.spec["schema"] == str((tmp_path / "schema.json").resolve())
    monkeypatch.chdir("/")
    assert load_grader(g.spec).grade({"id": 1, "response": "{}"}).passed is True
