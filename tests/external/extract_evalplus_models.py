"""Build ``data/evalplus_models.jsonl.gz``: real model solutions to HumanEval+, with the verdicts
EvalPlus itself gave them; run by hand, from the repository's root:

    python -m tests.external.extract_evalplus_models DIR

``DIR`` holds the six HumanEval+ result files of evalplus/evalplus pull request #247 (commit
``7887006b2b7c7916d6da003df30a699126bc157d``, ``inferenced_output/humaneval/``): greedy
(temperature 0) vLLM samples of Meta-Llama-3-8B, Meta-Llama-3-8B-Instruct, Mistral-7B-Instruct-
v0.2 and three fine-tunes of them, sanitized and evaluated by EvalPlus (a build between 0.2.2
and 0.3.0) on HumanEval+ v0.1.10 (the files' ``hash``, the md5 of the dataset file). The
repository is Apache-2.0.

Each row: ``task_id``, ``model`` (the file's model), ``solution`` (as EvalPlus graded it), and
EvalPlus's ``base`` and ``plus`` statuses (``pass`` or ``fail``): a solution passes HumanEval+
when both are ``pass``.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "evalplus_models.jsonl.gz"
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


def main(directory: str) -> None:
    paths = sorted(Path(directory).glob(f"*{SUFFIX}"))
    if len(paths) != 6:
        raise SystemExit(f"expected the six result files in {directory}, found {len(paths)}")
    rows = [row for path in paths for row in rows_of(path)]
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    OUT.write_bytes(gzip.compress(text.encode(), mtime=0))
    print(f"{len(rows)} solutions of {len(paths)} models from {SOURCE} -> {OUT}")


if __name__ == "__main__":
    main(*sys.argv[1:])
