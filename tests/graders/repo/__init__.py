"""Real SWE-bench rows (tests/data/repo: sources, licences and how each was checked)."""

import json
from pathlib import Path

#: The published rows of the three instances, in the file's order.
ROWS = [
    json.loads(line)
    for line in (Path(__file__).parents[2] / "data" / "repo" / "instances.jsonl")
    .read_text()
    .splitlines()
]
