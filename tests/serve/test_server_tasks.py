"""The reward server on rows whose tests live in the row: stdin/stdout programs (C++ and Python)
and IFEval constraints, over real HTTP to real server processes, by ``/grade`` and by OpenRLHF's
``/get_reward``."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.task_rows import (
    CPP_RIGHT,
    PY_EVERY_ANSWER,
    PY_RIGHT,
    STDIO,
    STDIO_CPP,
    STDIO_ROWS,
    STDIO_SCORES,
    instruction_rows,
)
from truegrade.serve import ServerProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def code_server():
    with ServerProcess("code", workers=1) as running:
        yield running


@pytest.fixture(scope="module")
def instructions_server():
    with ServerProcess("instructions", workers=1) as running:
        yield running


def post(server: ServerProcess, path: str, body: dict) -> dict:
    response = httpx.post(server.url + path, json=body, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.system_tool("g++", package="g++")
def test_grade_stdio_programs_with_per_test_verdicts(code_server):
    broken = {"id": "broken", "response": PY_RIGHT, "reference": {"stdio": [{"stdin": "1 2\n"}]}}
    body = {"samples": [*STDIO_ROWS, broken]}
    grades = {g["id"]: g for g in post(code_server, "/grade", body)["grades"]}
    assert [grades[r["id"]]["score"] for r in STDIO_ROWS] == STDIO_SCORES
    assert grades["cpp-right"]["subscores"] == {"stdio_0": 1.0, "stdio_1": 1.0, "accepted": 2.0}
    assert grades["cpp-wrong"]["subscores"]["wrong_answer"] == 2.0
    assert grades["py-every"]["subscores"] == {"stdio_0": 0.0, "stdio_1": 0.0}
    assert "wrong_answer" in grades["py-every"]["flags"]
    assert grades["apps-right"]["subscores"] == {"stdio_0": 1.0, "stdio_1": 1.0}
    # a spec without an expected output is the dataset's fault: an error, not a zero reward
    assert grades["broken"]["passed"] is None and "bad_reference" in grades["broken"]["flags"]
    assert "stdout" in grades["broken"]["error"]


@pytest.mark.system_tool("g++", package="g++")
def test_get_reward_takes_the_stdio_spec_as_the_label(code_server):
    prompt = "Read two integers and print their sum.\n"
    body = {
        "query": [prompt + r for r in (CPP_RIGHT, PY_EVERY_ANSWER, PY_RIGHT, PY_RIGHT)],
        "prompts": [prompt] * 4,
        # the label column as OpenRLHF reads it from the dataset: an object or its JSON text
        "labels": [STDIO_CPP, STDIO, json.dumps(STDIO), None],
    }
    data = post(code_server, "/get_reward", body)
    assert data["rewards"] == [1.0, 0.0, 1.0, 0.0] == data["scores"]
    assert data["extra_logs"]["passed"] == [1.0, 0.0, 1.0, 0.0]
    assert data["extra_logs"]["grader_error"] == [0.0, 0.0, 0.0, 1.0]  # no label: no tests


def test_grade_instruction_rows_with_the_constraints_as_row_fields(instructions_server):
    rows = instruction_rows()
    samples = [rows["honest"], rows["slip"], rows["gamed"]]
    broken = {**rows["honest"], "id": "broken", "kwargs": [{}]}  # one argument list for two
    grades = post(instructions_server, "/grade", {"samples": [*samples, broken]})["grades"]
    assert [g["id"] for g in grades] == [r["id"] for r in samples] + ["broken"]
    assert [g["score"] for g in grades[:3]] == [1.0, 0.0, 0.0]
    assert grades[0]["subscores"] == {
        "change_case:english_lowercase": 1.0,
        "keywords:existence": 1.0,
    }
    assert grades[1]["subscores"]["change_case:english_lowercase"] == 0.0
    assert "constraint_not_followed" in grades[1]["flags"]
    # the keywords stuffed into a bag do not count
    assert grades[2]["subscores"]["keywords:existence"] == 0.0
    assert "keyword_stuffing" in grades[2]["flags"]
    assert grades[3]["passed"] is None and "bad_reference" in grades[3]["flags"]


def test_get_reward_takes_the_constraints_as_the_label(instructions_server):
    rows = instruction_rows()
    order = [rows["honest"], rows["gamed"], rows["slip"], rows["honest"]]
    labels: list = [
        {"instruction_id_list": r["instruction_id_list"], "kwargs": r["kwargs"]} for r in order
    ]
    labels[2] = json.dumps(labels[2])  # a JSON string column
    labels[3] = None
    body = {
        "query": [r["prompt"] + "\n" + r["response"] for r in order],
        "prompts": [r["prompt"] + "\n" for r in order],
        "labels": labels,
    }
    data = post(instructions_server, "/get_reward", body)
    assert data["rewards"] == [1.0, 0.0, 0.0, 0.0]
    assert data["extra_logs"]["grader_error"] == [0.0, 0.0, 0.0, 1.0]


def test_get_reward_cuts_the_end_token_openrlhf_leaves_on_the_response(instructions_server):
    """OpenRLHF decodes the query with its special tokens: the response ends with the model's
    end-of-sequence token, which would fail "end with this phrase" and "answer in JSON"."""
    rows = [instruction_rows("flat_tyre")["honest"], instruction_rows("grocery_json")["honest"]]
    labels = [{k: r[k] for k in ("instruction_id_list", "kwargs")} for r in rows]
    body = {
        "query": [rows[0]["prompt"] + rows[0]["response"] + "<|im_end|>",
                  rows[1]["prompt"] + rows[1]["response"] + "</s><|endoftext|>"],
        "prompts": [r["prompt"] for r in rows],
        "labels": labels,
    }  # fmt: skip
    assert post(instructions_server, "/get_reward", body)["rewards"] == [1.0, 1.0]


def test_the_end_tokens_are_the_servers_to_choose():
    row = instruction_rows("grocery_json")["honest"]
    label = {k: row[k] for k in ("instruction_id_list", "kwargs")}
    with ServerProcess("instructions", workers=1, extra_args=["--end-token", "[END]"]) as server:
        body = {
            "query": [row["response"] + "[END]", row["response"] + "<|im_end|>"],
            "labels": [label, label],
        }
        # only the server's own tokens are cut: a JSON answer followed by another is not JSON
        assert post(server, "/get_reward", body)["rewards"] == [1.0, 0.0]
