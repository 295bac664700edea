"""Where the tests find the reference data kept in the repository (``tests/data/reference/``,
sources and licences in its README): real outputs, verdicts and problems nobody on this project
wrote. Every test that reads them runs in a fresh clone; none skips."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

__all__ = ["ALPACA_EVAL", "HUMANEVAL", "QWEN_MATH", "REFERENCE", "read_jsonl"]

REFERENCE = Path(__file__).parent / "data" / "reference"
HUMANEVAL = REFERENCE / "code" / "HumanEval.jsonl.gz"
QWEN_MATH = REFERENCE / "math" / "qwen25_math_cot_100.jsonl.gz"
ALPACA_EVAL = REFERENCE / "judge" / "alpaca_eval"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSONL file, gzipped or not."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
