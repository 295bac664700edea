"""Build ``data/evalplus_verdicts.jsonl.gz``: evalplus's own verdicts on variants of every MBPP+
and HumanEval+ canonical solution; run by hand, from the repository's root, with the Python of a
virtual environment that has evalplus (``pip install evalplus==0.3.1``, kept apart from
truegrade's):

    python -m tests.external.extract_evalplus_verdicts EVALPLUS_PYTHON HumanEvalPlus.jsonl.gz

MBPP+ is read from ``tests/data/published/mbppplus.jsonl.gz`` (v0.2.0, the whole file);
HumanEval+ (v0.1.10) from the path given, since the whole file is not kept in the repository.
evalplus is pointed at these files through its ``MBPP_OVERRIDE_PATH`` and
``HUMANEVAL_OVERRIDE_PATH``, with its cache (the canonical solutions' answers) in a temporary
directory, and its ``evaluate`` grades every variant.

Variants of each task, made mechanically from ``prompt + canonical_solution`` (``variants``):
``canonical`` itself, ``none`` (the entry point redefined to return None), ``const`` (the first
integer constant plus one) and ``cmp`` (the first comparison swapped for its neighbour); the
last two only where the program has one. Each row holds the task, the variant, a hash of its
program (``variants`` must make the same program again), evalplus's status on the base and the
plus inputs (``pass``, ``fail``, ``timeout``) and how long the canonical solution took on all
the inputs when evalplus computed the expected answers (``canonical_s``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.external.extract_humaneval_variants import mutant

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "evalplus_verdicts.jsonl.gz"
MBPP_PLUS = HERE.parent / "data" / "published" / "mbppplus.jsonl.gz"
HUMANEVAL_PLUS_SMALL = HERE.parent / "data" / "published" / "humanevalplus_small.jsonl.gz"
EVALPLUS = "0.3.1"


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]


def variants(row: dict[str, Any]) -> dict[str, str]:
    """The whole programs of one task's variants, by name (see the module docstring)."""
    entry = row["entry_point"]
    canonical = row["prompt"] + row["canonical_solution"]
    out = {
        "canonical": canonical,
        "none": f"{canonical}\n\ndef {entry}(*args, **kwargs):\n    return None\n",
    }
    for kind in ("const", "cmp"):
        changed = mutant(canonical, kind)
        if changed is not None:
            out[kind] = changed
    return out


def program_hash(program: str) -> str:
    return hashlib.sha256(program.encode()).hexdigest()[:16]


def _evaluate(python: str, dataset: str, source: Path, rows: list[dict[str, Any]], work: Path):
    """evalplus's results for every variant of every row, and the canonical solutions' times."""
    samples = work / f"{dataset}.jsonl"
    order: list[tuple[str, str, str]] = []
    with samples.open("w") as handle:
        for row in rows:
            for name, program in variants(row).items():
                handle.write(json.dumps({"task_id": row["task_id"], "solution": program}) + "\n")
                order.append((row["task_id"], name, program_hash(program)))
    override = "MBPP_OVERRIDE_PATH" if dataset == "mbpp" else "HUMANEVAL_OVERRIDE_PATH"
    cache_home = work / f"{dataset}-cache"
    env = {**os.environ, override: str(source), "XDG_CACHE_HOME": str(cache_home)}
    command = [python, "-m", "evalplus.evaluate", "--dataset", dataset, "--samples", str(samples)]
    subprocess.run([*command, "--parallel", "2"], env=env, check=True)
    results = json.loads((work / f"{dataset}_eval_results.json").read_text())["eval"]
    (cache,) = (cache_home / "evalplus").glob("*.pkl")
    with cache.open("rb") as handle:
        truth = pickle.load(handle)  # written just now by evalplus, here
    seen: dict[str, int] = {}
    for task_id, name, digest in order:
        index = seen[task_id] = seen.get(task_id, -1) + 1
        result = results[task_id][index]
        times = truth[task_id]["base_time"] + truth[task_id]["plus_time"]
        yield {
            "task_id": task_id,
            "variant": name,
            "program_sha": digest,
            "base": result["base_status"],
            "plus": result["plus_status"],
            "canonical_s": round(sum(times), 4),
        }


def main(argv: list[str]) -> int:
    python, humaneval = argv
    with tempfile.TemporaryDirectory() as tmp, gzip.open(OUT, "wt") as handle:
        work = Path(tmp)
        for dataset, source in (("mbpp", MBPP_PLUS), ("humaneval", Path(humaneval))):
            rows = read_rows(source)
            for verdict in _evaluate(python, dataset, source, rows, work):
                handle.write(json.dumps(verdict) + "\n")
    print(f"written {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
