"""HumanEval for the tests, from the reference data kept in the repository."""

from __future__ import annotations

from typing import Any

from tests.reference import HUMANEVAL, read_jsonl


def problems() -> dict[str, dict[str, Any]]:
    """The 164 problems by task id."""
    return {row["task_id"]: row for row in read_jsonl(HUMANEVAL)}


def row(problem: dict[str, Any], response: str, sample_id: Any = None) -> dict[str, Any]:
    """A sample for the code grader: the HumanEval prompt, a response, the check as the tests."""
    return {
        "id": sample_id if sample_id is not None else problem["task_id"],
        "prompt": problem["prompt"],
        "response": response,
        "reference": {"entry_point": problem["entry_point"], "check": problem["test"]},
    }
