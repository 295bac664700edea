"""Extract MR-GSM8K's human-labelled model solutions as (key, response, verdict) cases.

Run by hand when the source changes; the tests read only the committed output::

    python tests/external/extract_mr_gsm8k.py /path/to/MR-GSM8K [--out FILE]

with the path a checkout or bare clone of dvlab-research/MR-GSM8K (MIT, ``LICENSE``; files are
read at ``HEAD`` with ``git show``; the committed cases were read at ``3f666d6``). The rows are
those of ``eval_results/gpt4-grading/*_eval_results.json`` (the full ``dataset/MR-GSM8K.json``
is too large to fetch here, and so is ``GPT4_eval_results.json``, which is skipped): each holds
a GSM8K question, its reference answer (``ground_truth_answer``), one model's step-by-step
solution (``model_output_steps``) and the annotators' verdict on that solution's final answer
(``model_output_answer_correctness``, ``correct`` or ``wrong``). The same solution appears in
several files (each file is one judge's review of it); it is kept once, by ``uuid``, from the
first file in name order.

Kept: solutions in prose (``question_type`` ``original`` or ``reversed``; ``POT`` solutions are
Python programs whose answer is their output) whose reference answer is a number (75
``reversed`` rows record ``Let's think step by step.`` as their answer, a defect of the data).
The response is the solution's steps, one a line, without the ``Step N: `` label MR-GSM8K put
before each for its step annotations. From the kept rows every ``correct`` one and then the
``wrong`` ones in ``uuid`` order make up at most ``LIMIT`` cases, written in ``uuid`` order.
Only the key, the response, the verdict and the row's ``uuid`` are kept; no code is copied.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.external.extract_math_verify import _git

REPO = "dvlab-research/MR-GSM8K"
LICENCE = "MIT"
DIR = "eval_results/gpt4-grading"
LIMIT = 300
OUT = Path(__file__).resolve().parent / "data" / "mr_gsm8k_cases.jsonl"
_NUMBER = re.compile(r"-?\d[\d,]*(\.\d+)?")
_STEP = re.compile(r"^Step \d+: ?")


def response(steps: list[str]) -> str:
    """The solution as the model wrote it: its steps, one a line, without their ``Step N:``."""
    return "\n".join(_STEP.sub("", step, count=1) for step in steps)


def select(files: list[tuple[str, list[dict[str, Any]]]], limit: int = LIMIT) -> list[dict]:
    """The kept rows of ``(file, rows)`` pairs, as cases without ids (the module docstring)."""
    seen: dict[str, dict[str, Any]] = {}
    for name, rows in sorted(files, key=lambda f: f[0]):
        for row in rows:
            if row["uuid"] in seen:
                continue
            seen[row["uuid"]] = {**row, "_file": name}
    kept = [
        r
        for r in seen.values()
        if r["question_type"] in ("original", "reversed")
        and _NUMBER.fullmatch(str(r["ground_truth_answer"]).strip())
        and r["model_output_answer_correctness"] in ("correct", "wrong")
    ]
    kept.sort(key=lambda r: r["uuid"])
    right = [r for r in kept if r["model_output_answer_correctness"] == "correct"]
    wrong = [r for r in kept if r["model_output_answer_correctness"] == "wrong"]
    chosen = sorted(right + wrong[: max(0, limit - len(right))], key=lambda r: r["uuid"])
    return [
        {
            "gold": str(r["ground_truth_answer"]).strip(),
            "pred": response(r["model_output_steps"]),
            "expected": r["model_output_answer_correctness"] == "correct",
            "source": {
                "file": r["_file"],
                "uuid": r["uuid"],
                "question_type": r["question_type"],
            },
        }
        for r in chosen
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    commit = _git(args.checkout, "rev-parse", "HEAD").strip()
    names = _git(args.checkout, "ls-tree", "--name-only", "HEAD", f"{DIR}/").split()
    files = []
    for name in names:
        if not name.endswith("_eval_results.json"):
            continue
        try:
            files.append((name, json.loads(_git(args.checkout, "show", f"HEAD:{name}"))))
        except subprocess.CalledProcessError:  # a file the snapshot lacks (over 4 MiB)
            print(f"skipped {name}: not in the checkout")
    cases = select(files)
    with args.out.open("w") as fh:
        for n, case in enumerate(cases):
            case["source"] = {"repo": REPO, "commit": commit, "licence": LICENCE, **case["source"]}
            fh.write(json.dumps({"id": n, **case}, ensure_ascii=False) + "\n")
    right = sum(c["expected"] for c in cases)
    print(f"{len(cases)} cases ({right} correct) from {len(files)} files at {commit[:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
