"""``truegrade doctor`` and the code grader from the command line, through a real process."""

from __future__ import annotations

import json

from tests.cli.test_grade_cli import run


def test_doctor_reports_every_layer_and_that_a_call_works(tmp_path):
    result = run("doctor", cwd=tmp_path, check=True)
    for layer in ("bubblewrap", "user namespace", "seccomp", "Landlock", "process limit"):
        assert layer in result.stdout
    assert "a call in the sandbox works" in result.stdout
    report = json.loads(run("doctor", "--json", cwd=tmp_path, check=True).stdout)
    assert report["sandboxed"] is True
    assert report["works"] is True
    assert {layer["name"] for layer in report["layers"]} >= {"user namespace", "network"}
    header = report["cpp_precompiled_header"]  # said, whether it is there or not (never made)
    assert type(header["used"]) is bool and header["detail"]
    assert "C++ precompiled header:" in result.stdout


def test_doctor_refuses_no_isolation_unless_told_and_then_warns(tmp_path):
    refused = run("doctor", "--isolation", "none", cwd=tmp_path)
    assert refused.returncode == 2
    assert "--unsafe-no-sandbox" in refused.stderr
    unsafe = run("doctor", "--isolation", "none", "--unsafe-no-sandbox", cwd=tmp_path)
    assert unsafe.returncode == 1  # it works, but nothing is isolated: not a healthy setup
    assert "no isolation" in unsafe.stderr


def test_grading_code_from_the_command_line(tmp_path):
    tests = {"entry_point": "add", "cases": [{"args": [1, 2], "expected": 3}]}
    rows = [
        {"id": "good", "response": "def add(a, b):\n    return a + b\n", "reference": tests},
        {
            "id": "hack",
            "response": "import os\ndef add(a, b):\n    os._exit(0)\n",
            "reference": tests,
        },
    ]
    data = tmp_path / "code.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run("grade", str(data), "--grader", "code", "--out", "out.jsonl", cwd=tmp_path, check=True)
    results = {
        r["id"]: r for r in map(json.loads, (tmp_path / "out.jsonl").read_text().splitlines())
    }
    assert results["good"]["passed"] is True
    assert results["hack"]["passed"] is False
    assert "early_exit" in results["hack"]["flags"]
    unsafe = run(
        "grade", str(data), "-g", "code", "-o", "isolation=none", "--unsafe-no-sandbox",
        "--out", "unsafe.jsonl", cwd=tmp_path, check=True,
    )  # fmt: skip
    assert "unsandboxed" in unsafe.stdout


def test_the_code_benchmark_says_what_it_is_missing(tmp_path):
    result = run("bench", "code", "--data", str(tmp_path / "absent.jsonl.gz"), cwd=tmp_path)
    assert result.returncode == 2
    assert "absent.jsonl.gz: HumanEval file not found" in result.stderr
