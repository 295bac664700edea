"""HumanEval for the tests. The reference data lives outside the repository (``../shared/data``
relative to its root); tests that need it skip, saying so, when it is absent."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

DATA = (
    Path(__file__).resolve().parents[3].parent / "shared" / "data" / "code" / "HumanEval.jsonl.gz"
)


def problems() -> dict[str, dict[str, Any]]:
    """The 164 problems by task id (skips the calling test when the file is absent)."""
    if not DATA.exists():
        pytest.skip(f"HumanEval is not available at {DATA} (reference data, not in the repository)")
    with gzip.open(DATA, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    return {row["task_id"]: row for row in rows}


def row(problem: dict[str, Any], response: str, sample_id: Any = None) -> dict[str, Any]:
    """A sample for the code grader: the HumanEval prompt, a response, the check as the tests."""
    return {
        "id": sample_id if sample_id is not None else problem["task_id"],
        "prompt": problem["prompt"],
        "response": response,
        "reference": {"entry_point": problem["entry_point"], "check": problem["test"]},
    }
