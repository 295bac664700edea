"""The review part of `make demo`: a project for the experts' review app, on the advice rubric.

Two *simulated* experts stand in for people (no one labels during a demo): the first marks a
criterion met when the response holds the phrase the criterion quotes, the second does the same
but disagrees on every fifth criterion. The rubric grader judges every criterion through the
judge simulator the demo already runs, and the project is exported. Open it with
`truegrade review serve out/demo/review` after adding yourself (`truegrade review user`).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from truegrade import load_grader
from truegrade.review import export_project, grade_project, init_project

HERE = Path(__file__).resolve().parent
QUOTED = re.compile(r'"([^"]+)"')


def build_review(out: Path, judge: dict[str, Any]) -> dict[str, Any]:
    """Make, label, grade and export the demo project; its headline numbers."""
    folder, export = out / "review", out / "review-export"
    for old in (folder, export):
        shutil.rmtree(old, ignore_errors=True)
    text = (HERE / "data" / "advice_rubric.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    data = out / "review-rows.jsonl"
    data.parent.mkdir(parents=True, exist_ok=True)
    # the example's rows carry their rubric as the reference; the app reads it as `rubrics`
    data.write_text(
        "".join(
            json.dumps(
                {
                    "id": r["id"],
                    "prompt": r["prompt"],
                    "response": r["response"],
                    "group": r["group"],
                    "category": "advice",
                    "rubrics": r["reference"],
                }
            )
            + "\n"
            for r in rows
        )
    )
    store = init_project(folder, data=data)
    first = store.add_user("expert_sim_1", "expert", None)
    second = store.add_user("expert_sim_2", "expert", None)
    for n, (item, criterion) in enumerate(store.pairs()):
        phrase = QUOTED.search(criterion.text)
        met = bool(phrase) and phrase.group(1).lower() in item.response.lower()
        store.set_label(first, item.id, criterion.id, met, "simulated: the quoted phrase")
        store.set_label(second, item.id, criterion.id, met != (n % 5 == 4), "simulated")
    grader = load_grader("rubric", judge=judge, cache=None)
    judged = grade_project(store, grader, actor="demo")
    export_project(store, export, n_resamples=500)
    numbers = json.loads((export / "agreement.json").read_text())["overall"]
    [pair] = numbers["pairwise_kappa"]
    items = len(store.items())
    store.close()
    return {
        "project": str(folder),
        "items": items,
        "judged": judged,
        "grader_macro_f1": numbers["grader_macro_f1"]["estimate"],
        "experts_kappa": pair["estimate"],
    }
