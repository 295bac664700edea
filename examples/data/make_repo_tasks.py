"""Generate ``repo_tasks.jsonl``: two real SWE-bench instances, each with a response patch.

The instance rows are copied as published (from ``tests/data/repo/instances.jsonl``, where their
sources and licences are given): marshmallow-code__marshmallow-1359 (MIT) answered with its gold
patch (label true), and pallets__flask-5014 (BSD-3-Clause) answered with a patch that touches the
right place without fixing the bug (it refuses a ``None`` name, where the task is about an empty
one: label false). The repositories' base trees are the snapshots in ``tests/data/repo``.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[1] / "tests" / "data" / "repo" / "instances.jsonl"

WRONG_FLASK = "\n".join(
    [
        "diff --git a/src/flask/blueprints.py b/src/flask/blueprints.py",
        "--- a/src/flask/blueprints.py",
        "+++ b/src/flask/blueprints.py",
        "@@ -190,6 +190,9 @@ def __init__(",
        "             root_path=root_path,",
        "         )",
        " ",
        "+        if name is None:",
        "+            raise ValueError(\"'name' may not be None.\")",
        "+",
        '         if "." in name:',
        "             raise ValueError(\"'name' may not contain a dot '.' character.\")",
        " ",
        "",
    ]
)


def main() -> None:
    rows = {r["instance_id"]: r for r in map(json.loads, SOURCE.read_text().splitlines())}
    marshmallow = rows["marshmallow-code__marshmallow-1359"]
    flask = rows["pallets__flask-5014"]
    out = [
        {**marshmallow, "id": "marshmallow-1359", "model_patch": marshmallow["patch"]}
        | {"label": True},
        {**flask, "id": "flask-5014", "model_patch": WRONG_FLASK, "label": False},
    ]
    with open(HERE / "repo_tasks.jsonl", "w", encoding="utf-8") as handle:
        for row in out:
            handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
