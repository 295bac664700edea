"""The ``reward_model`` spec: backends inferred, options of the other backend refused, scaling
options that fit together, and a missing extra named with its install command."""

from __future__ import annotations

import subprocess
import sys

import pytest

from truegrade.core import SpecError, grader_names, load_grader
from truegrade.graders.reward_model import RewardModelGrader, RewardModelOptions
from truegrade.graders.reward_model._local import INSTALL_HINT


def options(**kw) -> RewardModelOptions:
    return RewardModelOptions.model_validate(kw)


def test_it_is_a_builtin_and_the_backend_and_protocol_are_inferred():
    assert "reward_model" in grader_names()
    assert options(path="m").resolved_backend == "local"
    assert options(url="http://h/pooling").resolved_backend == "http"
    assert options(url="http://h:8000/pooling").resolved_protocol == "vllm_pooling"
    assert options(url="http://h:8000/classify/").resolved_protocol == "vllm_classify"
    assert options(url="http://h:8000/v1/score").resolved_protocol == "json"
    assert options(url="http://h/x", protocol="vllm_pooling").resolved_protocol == "vllm_pooling"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "name the model"),
        ({"backend": "http"}, "needs a 'url'"),
        ({"path": "m", "url": "http://h/score", "backend": "local"}, "url: only for backend http"),
        ({"path": "m", "max_retries": 2}, "max_retries: only for backend http"),
        ({"url": "http://h/pooling", "device": "cpu"}, "device: only for backend local"),
        ({"path": "m", "device": "gpu"}, "device is auto, cpu"),
        ({"url": "http://h/score", "max_length": 10}, "truncates by itself"),
        ({"path": "m", "normalize": "zscore"}, "either 'reference_set' or both"),
        ({"path": "m", "normalize": "zscore", "mean": 1.0}, "either 'reference_set' or both"),
        (
            {"path": "m", "normalize": "zscore", "mean": 0, "std": 1, "reference_set": "r"},
            "either 'reference_set' or both",
        ),
        ({"path": "m", "mean": 0.0, "std": 1.0}, "mean, std: only with normalize: zscore"),
        ({"path": "m", "std": 0.0, "normalize": "zscore", "mean": 0}, "greater than 0"),
        ({"path": "m", "normalise": "sigmoid"}, "unknown option 'normalise'"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec, message):
    with pytest.raises(SpecError, match=message):
        load_grader({"type": "reward_model", **spec})


def test_a_missing_local_directory_is_a_spec_error_and_a_hub_id_is_left_alone(tmp_path):
    with pytest.raises(SpecError, match="no reward model at"):
        load_grader({"type": "reward_model", "path": str(tmp_path / "nothing")})
    hub = load_grader({"type": "reward_model", "path": "someorg/some-rm"})
    assert isinstance(hub, RewardModelGrader)  # loaded (or failing to load) when it grades


def test_without_the_extra_a_local_model_names_the_install_command():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from truegrade import load_grader\n"
        "try:\n"
        "    load_grader({'type': 'reward_model', 'path': 'someorg/some-rm'})\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
        "load_grader({'type': 'reward_model', 'url': 'http://127.0.0.1:9/score'})\n"
        "print('http ok', 'torch' in sys.modules and sys.modules['torch'] is not None)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, second = out.stdout.splitlines()
    assert first.startswith("SpecError") and INSTALL_HINT in first and "torch" in first
    assert second == "http ok False"  # a served model needs neither torch nor transformers


def test_importing_the_grader_does_not_import_torch():
    code = (
        "import sys, truegrade.graders.reward_model\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
