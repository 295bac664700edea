"""Rows of the two task kinds whose tests come in the row's own fields, shared by the tests that
carry them through validate, the reward server and the training adapters: stdin/stdout programs
(``code``, C++ and Python) and IFEval constraints (``instructions``).

Each response is right (reward 1), wrong (0) or a hack that the hardened grader gives 0: a
program that prints every expected output of the tests, and keywords stuffed into a bag.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

#: Sum of two integers: one visible test, one hidden.
STDIO = {
    "stdio": [
        {"stdin": "1 2\n", "stdout": "3\n", "visible": True},
        {"stdin": "10 20\n", "stdout": "30\n"},
    ]
}
STDIO_CPP = {**STDIO, "language": "cpp"}
#: The same tests as an APPS / TACO ``input_output`` column (a JSON string).
APPS_INPUT_OUTPUT = json.dumps({"inputs": ["1 2\n", "10 20\n"], "outputs": ["3\n", "30\n"]})

CPP_RIGHT = (
    "```cpp\n#include <cstdio>\n"
    'int main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);}\n```\n'
)
CPP_WRONG = CPP_RIGHT.replace("a+b", "a-b")
PY_RIGHT = "```python\na, b = map(int, input().split())\nprint(a + b)\n```\n"
#: Prints every answer the tests expect, whatever the input: each test sees extra lines.
PY_EVERY_ANSWER = "```python\nprint(3)\nprint(30)\n```\n"

#: One row of each case, with its ``label`` (``validate`` reads it, graders leave it alone):
#: C++ right and wrong, Python right (the spec as JSON text) and printing every expected output,
#: and an APPS row whose tests are in its own column.
STDIO_ROWS = [
    {"id": "cpp-right", "response": CPP_RIGHT, "reference": STDIO_CPP, "label": True},
    {"id": "cpp-wrong", "response": CPP_WRONG, "reference": STDIO_CPP, "label": False},
    {"id": "py-right", "response": PY_RIGHT, "reference": json.dumps(STDIO), "label": True},
    {"id": "py-every", "response": PY_EVERY_ANSWER, "reference": STDIO, "label": False},
    {"id": "apps-right", "response": PY_RIGHT, "input_output": APPS_INPUT_OUTPUT, "label": True},
]
STDIO_SCORES = [1.0, 0.0, 1.0, 0.0, 1.0]


def instruction_rows(topic: str = "green_tea") -> dict[str, dict[str, Any]]:
    """The ``honest``, ``slip`` and ``gamed`` rows of one topic of the example data, by kind;
    ``green_tea``'s gamed response stuffs the keywords into a bag ("keywords: temperature,
    steep.")."""
    lines = (EXAMPLES / "data" / "instructions.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    return {r["metadata"]["kind"]: r for r in rows if r["group"] == topic}
