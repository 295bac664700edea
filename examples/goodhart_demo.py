"""Goodhart, measured, on synthetic data with known answers.

Writes to ./out/goodhart/: a best-of-n pool whose proxy sees gold through heavy-tailed noise, a
training log in which the proxy starts to diverge from gold at step 120, and what
``truegrade overopt`` and ``truegrade monitor`` make of them (JSON, and plots when matplotlib is
installed).

    python examples/goodhart_demo.py
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from truegrade.goodhart import synthetic_pool, synthetic_training_log

OUT = Path("out/goodhart")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def truegrade(*args: str) -> None:
    print("$ truegrade " + " ".join(args), flush=True)
    subprocess.run([sys.executable, "-m", "truegrade", *args], check=False)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    plots = importlib.util.find_spec("matplotlib") is not None
    pool = write_jsonl(OUT / "pool.jsonl", synthetic_pool(1000, 100, noise="student_t").rows())
    log = write_jsonl(OUT / "log.jsonl", synthetic_training_log("divergence", onset=120))
    truegrade(
        "overopt", str(pool), "--proxy", "proxy", "--gold", "metadata.gold",
        "--group", "prompt_id", "--out", str(OUT / "curve.json"),
        *(["--plot", str(OUT / "curve.png")] if plots else []),
    )  # fmt: skip
    truegrade(
        "monitor", str(log), "--out", str(OUT / "alerts.json"),
        *(["--plot", str(OUT / "monitor.png")] if plots else []),
    )  # fmt: skip


if __name__ == "__main__":
    main()
