"""The review app's demo project (part of `make demo`): two simulated experts label the advice
rubric's criteria, the rubric grader judges them through the judge simulator, and the numbers
come out defined."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location(
        "review_demo", ROOT / "examples" / "review_demo.py"
    )
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_the_demo_project_is_labelled_graded_and_exported(simulator, tmp_path):
    made = _module().build_review(tmp_path, {"endpoint": simulator.base_url, "model": "sim"})
    assert made["items"] == 12 and made["judged"] == 54
    assert 0 < made["grader_macro_f1"] <= 1 and 0 < made["experts_kappa"] < 1
    numbers = json.loads((tmp_path / "review-export" / "agreement.json").read_text())
    assert numbers["experts"] == ["expert_sim_1", "expert_sim_2"]
