"""Extract lighteval's math extraction cases (gold, prediction, expected verdict) into JSONL.

Run by hand when lighteval's suite changes; the tests read only the committed output::

    python tests/external/extract_lighteval.py /path/to/lighteval [--out FILE]

The path is a lighteval checkout or a bare clone; ``tests/unit/metrics/test_extractive_match.py``
is read at ``HEAD`` with ``git show`` and parsed exactly as Math-Verify's test files are (the
same ``cases_of``: every row of a parametrize table naming a gold, a prediction and an expected
verdict, and every literal ``compare_strings(gold, pred, ...) == verdict`` assertion; a
``Language.X`` argument is kept as the option ``language``). Two kinds of case are left out, and
counted in the summary line:

- cases run only with ``match_types=["NativeLetters"]``: the letter of a multiple-choice answer
  found in prose, which is not an equivalence of answers;
- cases whose (gold, prediction, verdict) is already in Math-Verify's suite
  (``data/math_verify_cases.jsonl``): Math-Verify grew out of this file, so many rows are
  shared, and a shared row is graded there.

Only the case strings are kept, each with its source; no lighteval code is copied. lighteval
is MIT-licensed (``LICENSE``, "Copyright (c) 2024 Hugging Face"; the test file carries the same
notice). The cases committed in ``data/lighteval_cases.jsonl`` were extracted at lighteval
commit ``3fd15266bc8448b797e61462d293aa3fd40b3580``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tests.external.extract_math_verify import _git, cases_of

REPO = "huggingface/lighteval"
FILES = ("tests/unit/metrics/test_extractive_match.py",)
DATA = Path(__file__).resolve().parent / "data"
OUT = DATA / "lighteval_cases.jsonl"
MATH_VERIFY = DATA / "math_verify_cases.jsonl"


def _key(case: dict[str, Any]) -> tuple[str, str, bool]:
    return case["gold"], case["pred"], case["expected"]


def select(
    cases: list[dict[str, Any]], known: set[tuple[str, str, bool]]
) -> tuple[list[dict[str, Any]], int, int]:
    """The cases to keep, and how many were letters-only and how many already known."""
    kept, letters, shared = [], 0, 0
    seen: set[tuple[str, str, bool]] = set()
    for case in cases:
        match_types = case["options"].get("match_types", case["options"].get("match_type"))
        if match_types == ["NativeLetters"]:
            letters += 1
        elif _key(case) in known or _key(case) in seen:
            shared += 1
        else:
            seen.add(_key(case))
            kept.append(case)
    return kept, letters, shared


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a lighteval checkout or bare clone")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    commit = _git(args.repo, "rev-parse", "HEAD").strip()
    rows: list[dict[str, Any]] = []
    for path in FILES:
        rows.extend(cases_of(_git(args.repo, "show", f"HEAD:{path}"), path, commit, REPO))
    known = {_key(json.loads(line)) for line in MATH_VERIFY.read_text().splitlines() if line}
    kept, letters, shared = select(rows, known)
    with args.out.open("w") as fh:
        for n, row in enumerate(kept):
            fh.write(json.dumps({"id": n, **row}, ensure_ascii=False) + "\n")
    print(
        f"{len(kept)} cases from {len(rows)} at {commit[:12]} "
        f"({letters} letters-only, {shared} already in Math-Verify's suite) -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
