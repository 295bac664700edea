"""Build ``data/evalplus_models.jsonl.gz``: real model solutions to HumanEval+, with the verdicts
EvalPlus itself gave them; run by hand, from the repository's root, with the Python of a virtual
environment that has evalplus (``pip install evalplus==0.3.1``, kept apart from truegrade's):

    python -m tests.external.extract_evalplus_models DIR EVALPLUS_PYTHON

``DIR`` holds the six HumanEval+ result files of evalplus/evalplus pull request #247 (commit
``7887006b2b7c7916d6da003df30a699126bc157d``, ``inferenced_output/humaneval/``): greedy
(temperature 0) vLLM samples of Meta-Llama-3-8B, Meta-Llama-3-8B-Instruct, Mistral-7B-Instruct-
v0.2 and three fine-tunes of them, sanitized and evaluated by EvalPlus (a build between 0.2.2
and 0.3.0) on HumanEval+ v0.1.10 (the files' ``hash``, the md5 of the dataset file). The
repository is Apache-2.0.

Each row: ``task_id``, ``model`` (the file's model), ``solution`` (as EvalPlus graded it), and
EvalPlus's ``base`` and ``plus`` statuses (``pass`` or ``fail``): a solution passes HumanEval+
when both are ``pass``. Then each model's solutions are graded again here by EvalPlus 0.3.1's own
``evaluate`` (pointed at ``tests/data/published/humanevalplus.jsonl.gz`` through its
``HUMANEVAL_OVERRIDE_PATH``, one process, on a machine doing little else), into ``rerun_base``
and ``rerun_plus``: EvalPlus's limits are the wall clock's, so where the two disagree, the
recorded run was slowed by its machine.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "evalplus_models.jsonl.gz"
HUMANEVAL_PLUS = HERE.parent / "data" / "published" / "humanevalplus.jsonl.gz"
SOURCE = "evalplus/evalplus@7887006b2b7c7916d6da003df30a699126bc157d"
HUMANEVAL_PLUS_V0_1_10 = "fe585eb4df8c88d844eeb463ea4d0302"
SUFFIX = "_vllm_temp_0.0-sanitized_eval_results.json"


def rows_of(path: Path) -> list[dict[str, str]]:
    results = json.loads(path.read_text())
    if results.get("hash") != HUMANEVAL_PLUS_V0_1_10:
        raise SystemExit(f"{path.name}: not graded on HumanEval+ v0.1.10")
    model = path.name.removesuffix(SUFFIX).rpartition("humaneval_")[2]
    out = []
    for task_id, (result,) in sorted(results["eval"].items(), key=lambda kv: _number(kv[0])):
        out.append(
            {
                "task_id": task_id,
                "model": model,
                "solution": result["solution"],
                "base": result["base_status"],
                "plus": result["plus_status"],
            }
        )
    return out


def _number(task_id: str) -> int:
    return int(task_id.rpartition("/")[2])


def rerun(python: str, rows: list[dict[str, str]], work: Path) -> None:
    """EvalPlus's own ``evaluate`` on one model's solutions: ``rerun_base`` and ``rerun_plus``."""
    samples = work / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": r["task_id"], "solution": r["solution"]})
                               + "\n" for r in rows))  # fmt: skip
    env = {**os.environ, "HUMANEVAL_OVERRIDE_PATH": str(HUMANEVAL_PLUS)}
    command = [python, "-m", "evalplus.evaluate", "--dataset", "humaneval"]
    subprocess.run([*command, "--samples", str(samples), "--parallel", "1"], env=env, check=True)
    results = json.loads((work / "samples_eval_results.json").read_text())["eval"]
    for row in rows:
        (result,) = results[row["task_id"]]
        row["rerun_base"], row["rerun_plus"] = result["base_status"], result["plus_status"]
    (work / "samples_eval_results.json").unlink()


def main(directory: str, python: str) -> None:
    paths = sorted(Path(directory).glob(f"*{SUFFIX}"))
    if len(paths) != 6:
        raise SystemExit(f"expected the six result files in {directory}, found {len(paths)}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            of_model = rows_of(path)
            rerun(python, of_model, Path(tmp))
            rows += of_model
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    OUT.write_bytes(gzip.compress(text.encode(), mtime=0))
    print(f"{len(rows)} solutions of {len(paths)} models from {SOURCE} -> {OUT}")


if __name__ == "__main__":
    main(*sys.argv[1:])
