"""Test specs of the common competitive-programming datasets, read from their rows as they are.

* APPS and TACO: ``input_output``, a JSON string ``{"inputs": [...], "outputs": [...]}`` (each
  item a string, or a list of lines), with ``fn_name`` for call-based problems, whose inputs are
  argument lists and whose outputs are the return values (APPS's own harness also accepts the
  single item of a one-item list, and so does this reading); where the ``starter_code`` is
  LeetCode's ``class Solution``, the function is its method, called as LiveCodeBench's are;
* CodeContests: ``public_tests``, ``private_tests``, ``generated_tests`` (each
  ``{"input": [...], "output": [...]}``), ``time_limit`` (``{"seconds", "nanos"}``),
  ``memory_limit_bytes``, and a language given as the dataset's id (1 Python 2, 2 C++,
  3 Python 3, 4 Java);
* LiveCodeBench: ``public_test_cases`` and ``private_test_cases``, JSON lists of
  ``{"input", "output", "testtype"}``; the private ones may come compressed as the dataset ships
  them (base64 of zlib of a pickled JSON string). That pickle is read by an unpickler that
  refuses every class, so it can only ever yield the string; anything else is an error.

  Its ``functional`` tests (LeetCode style) become call cases of the method named by the row's
  ``metadata`` (``{"func_name": ...}``) of ``class Solution``: each input line is one argument
  as JSON, the output is the return value as JSON. A row mixing both kinds is refused.

Public tests are marked visible (shown to the model), which feeds the hard-coding tells.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import re
import zlib
from collections.abc import Mapping
from typing import Any

__all__ = ["CODECONTESTS_LANGUAGES", "DATASET_COLUMNS", "from_dataset_row", "reference_solution"]

CODECONTESTS_LANGUAGES = {2: "cpp", 3: "python", 4: "java"}
"""CodeContests' language ids (its ``Language`` enumeration) that run here; 1 is Python 2."""

DATASET_COLUMNS = (
    "input_output",
    "public_tests",
    "private_tests",
    "generated_tests",
    "public_test_cases",
    "private_test_cases",
)


def from_dataset_row(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The spec (``stdio`` or ``cases`` form) of a dataset row, or None when it has none of
    the datasets' test columns.

    Raises:
        ValueError: the columns are there but malformed; the message says which.
    """
    if not any(row.get(c) is not None for c in DATASET_COLUMNS):
        return None
    if row.get("input_output") is not None:
        spec = _apps(row["input_output"], row.get("starter_code"))
    elif row.get("public_test_cases") is not None or row.get("private_test_cases") is not None:
        spec = _livecodebench(row)
    else:
        spec = _codecontests(row)
    language = _language(row.get("language"))
    if language is not None and "stdio" in spec:
        spec["language"] = language
    return spec


def _language(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if value == 1:
            raise ValueError("CodeContests language 1 is Python 2, which is not supported")
        if value in CODECONTESTS_LANGUAGES:
            return CODECONTESTS_LANGUAGES[value]
    raise ValueError(f"'language' {value!r} is neither a name nor a CodeContests language id")


def _json(value: Any, what: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise ValueError(f"{what} is a string but not JSON ({exc})") from None
    return value


def _text(value: Any, what: str) -> str:
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value) + ("\n" if value and not value[-1].endswith("\n") else "")
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string or a list of lines")
    return value


def _apps(raw: Any, starter_code: Any = None) -> dict[str, Any]:
    data = _json(raw, "'input_output'")
    if not isinstance(data, dict):
        raise ValueError("'input_output' must hold an object with 'inputs' and 'outputs'")
    inputs, outputs = data.get("inputs"), data.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or not inputs:
        raise ValueError("'input_output' needs non-empty lists 'inputs' and 'outputs'")
    if len(inputs) != len(outputs):
        raise ValueError(f"'input_output' has {len(inputs)} inputs but {len(outputs)} outputs")
    name = data.get("fn_name")
    if name is not None:
        cases = []
        for i, (args, expected) in enumerate(zip(inputs, outputs, strict=True)):
            if not isinstance(args, list):
                raise ValueError(f"'input_output' call input {i} must be a list of arguments")
            case: dict[str, Any] = {"args": args, "expected": expected}
            if isinstance(expected, list) and len(expected) == 1:
                case["also"] = [expected[0]]
            cases.append(case)
        spec: dict[str, Any] = {"entry_point": name, "cases": cases}
        if isinstance(starter_code, str) and re.search(r"^class Solution\b", starter_code, re.M):
            spec["method_of"] = "Solution"  # a LeetCode problem: the method of a new Solution
        return spec
    stdio = [
        {"stdin": _text(i, f"input {n}"), "stdout": _text(o, f"output {n}")}
        for n, (i, o) in enumerate(zip(inputs, outputs, strict=True))
    ]
    return {"stdio": stdio}


def _codecontests(row: Mapping[str, Any]) -> dict[str, Any]:
    stdio: list[dict[str, Any]] = []
    for column in ("public_tests", "private_tests", "generated_tests"):
        tests = _json(row.get(column), f"'{column}'")
        if tests is None:
            continue
        if not isinstance(tests, dict):
            raise ValueError(f"'{column}' must be an object with 'input' and 'output' lists")
        inputs, outputs = tests.get("input") or [], tests.get("output") or []
        if not isinstance(inputs, list) or not isinstance(outputs, list):
            raise ValueError(f"'{column}' must hold 'input' and 'output' lists")
        if len(inputs) != len(outputs):
            raise ValueError(f"'{column}' has {len(inputs)} inputs but {len(outputs)} outputs")
        for n, (stdin, stdout) in enumerate(zip(inputs, outputs, strict=True)):
            test: dict[str, Any] = {
                "stdin": _text(stdin, f"'{column}' input {n}"),
                "stdout": _text(stdout, f"'{column}' output {n}"),
            }
            if column == "public_tests":
                test["visible"] = True
            stdio.append(test)
    if not stdio:
        raise ValueError("the CodeContests row has no tests")
    spec: dict[str, Any] = {"stdio": stdio}
    limit = _json(row.get("time_limit"), "'time_limit'")
    if isinstance(limit, dict):
        seconds = float(limit.get("seconds") or 0) + float(limit.get("nanos") or 0) / 1e9
        if seconds > 0:
            spec["time_limit_s"] = seconds
    memory = row.get("memory_limit_bytes")
    if isinstance(memory, int) and not isinstance(memory, bool) and memory > 0:
        spec["memory_mb"] = max(16, memory // (1 << 20))
    return spec


class _NoClasses(pickle.Unpickler):
    """Unpickles strings, numbers and containers only: every class lookup is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise ValueError(f"the test cases' pickle names {module}.{name}, which is refused")


def _lcb_cases(raw: Any, what: str) -> list[Any]:
    if raw is None or raw == "":
        return []
    if isinstance(raw, str) and not raw.lstrip().startswith("["):
        try:
            packed = zlib.decompress(base64.b64decode(raw, validate=True))
            raw = _NoClasses(io.BytesIO(packed)).load()
        except (ValueError, zlib.error, pickle.UnpicklingError, EOFError) as exc:
            raise ValueError(
                f"{what} is neither JSON nor LiveCodeBench's packing ({exc})"
            ) from None
    cases = _json(raw, what)
    if not isinstance(cases, list):
        raise ValueError(f"{what} must be a list of test cases")
    return cases


def _lcb_call(column: str, n: int, case: Mapping[str, Any]) -> Any:
    """One functional test as a call case: a JSON value per input line, JSON output."""
    where = f"'{column}' case {n}"
    try:
        args = [json.loads(line) for line in str(case["input"]).split("\n") if line.strip()]
        expected = json.loads(str(case["output"]))
    except ValueError as exc:
        raise ValueError(
            f"{where}: a functional test's input and output must be JSON ({exc})"
        ) from None
    call: dict[str, Any] = {"args": args, "expected": expected}
    if column == "public_test_cases":
        call["visible"] = True
    return call


def _lcb_method(row: Mapping[str, Any]) -> str:
    metadata = _json(row.get("metadata"), "'metadata'")
    name = metadata.get("func_name") if isinstance(metadata, dict) else None
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            "a LiveCodeBench functional row needs 'metadata' with the method's 'func_name'"
        )
    return name


def _livecodebench(row: Mapping[str, Any]) -> dict[str, Any]:
    stdio = []
    calls = []
    for column in ("public_test_cases", "private_test_cases"):
        for n, case in enumerate(_lcb_cases(row.get(column), f"'{column}'")):
            if not isinstance(case, dict) or not {"input", "output"} <= set(case):
                raise ValueError(f"'{column}' case {n} needs 'input' and 'output'")
            kind = case.get("testtype", "stdin")
            if kind == "functional":
                calls.append(_lcb_call(column, n, case))
                continue
            if kind != "stdin":
                raise ValueError(f"'{column}' case {n} has an unknown testtype {kind!r}")
            test: dict[str, Any] = {
                "stdin": _text(case["input"], f"'{column}' case {n} input"),
                "stdout": _text(case["output"], f"'{column}' case {n} output"),
            }
            if column == "public_test_cases":
                test["visible"] = True
            stdio.append(test)
    if stdio and calls:
        raise ValueError("the LiveCodeBench row mixes stdin and functional tests")
    if calls:
        return {"entry_point": _lcb_method(row), "method_of": "Solution", "cases": calls}
    if not stdio:
        raise ValueError("the LiveCodeBench row has no test cases")
    return {"stdio": stdio}


def reference_solution(row: Mapping[str, Any], language: str) -> str | None:
    """A correct program for the row in ``language``, when the row ships one: its
    ``canonical_solution`` (the whole program, for a stdin/stdout task), else the dataset's
    ``solutions`` column (APPS / TACO: a JSON list of Python programs; CodeContests:
    ``{"language": [ids], "solution": [programs]}``), the first one in that language. The audit
    and the attack runner use it as the control a sound grader must pass."""
    solution = row.get("canonical_solution")
    if isinstance(solution, str) and solution.strip():
        return solution
    solutions = row.get("solutions")
    if isinstance(solutions, str):
        try:
            solutions = json.loads(solutions)
        except ValueError:
            return None
    if isinstance(solutions, list):  # APPS / TACO: Python programs
        found = [s for s in solutions if isinstance(s, str) and s.strip()]
        return found[0] if found and language == "python" else None
    if isinstance(solutions, Mapping):  # CodeContests
        ids, programs = solutions.get("language"), solutions.get("solution")
        if isinstance(ids, list) and isinstance(programs, list):
            for lang_id, program in zip(ids, programs, strict=False):
                if CODECONTESTS_LANGUAGES.get(lang_id) == language and isinstance(program, str):
                    return program
    return None
