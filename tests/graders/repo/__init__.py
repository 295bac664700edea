"""Real SWE-bench rows (tests/data/repo: sources, licences and how each was checked)."""

import json
from pathlib import Path

DATA = Path(__file__).parents[2] / "data" / "repo"
"""The snapshots' root: ``<instance_id>/base.tar.gz`` and ``requirements.txt`` for each."""

#: The published rows of the three instances, in the file's order.
ROWS = [json.loads(line) for line in (DATA / "instances.jsonl").read_text().splitlines()]
