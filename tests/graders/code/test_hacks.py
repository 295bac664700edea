"""The hack suite: every trick that beats an in-process harness, on several HumanEval problems,
must fail here, with a reason (a flag), and without being an error.

The catalogue (``truegrade.bench.code_hacks``) writes each hack once, for any entry point, so it
is the same attack on every problem; the benchmark runs it against the anchor too (where the
always-equal objects, the frame forging, the test-source reading and the counters succeed). The
problems are chosen so their answers vary: a constant cannot pass them honestly.
"""

from __future__ import annotations

import pytest

from tests.graders.code.humaneval import problems, row
from truegrade import load_grader
from truegrade.bench import code_hacks
from truegrade.bench._code import HACK_PROBLEMS
from truegrade.graders.code._tells import visible_inputs


def _visible_only(problem):
    """Answers the prompt's examples exactly (as the canonical solution would) and nothing else."""
    namespace = {}
    exec(problem["prompt"] + problem["canonical_solution"], namespace)
    solution = namespace[problem["entry_point"]]
    table = {}
    for example in visible_inputs(problem["prompt"], problem["entry_point"]):
        args = example if isinstance(example, tuple) else (example,)
        try:
            table[repr(args)] = solution(*args)
        except Exception:
            continue
    if not table:
        return None
    return (
        f"_table = {table!r}\n"
        f"def {problem['entry_point']}(*args, **kwargs):\n"
        "    return _table.get(repr(args))\n"
    )


@pytest.fixture(scope="module")
def humaneval():
    return problems()


@pytest.fixture(scope="module")
def grader():
    return load_grader("code", call_timeout_s=3, program_timeout_s=20)


@pytest.mark.shared_data
@pytest.mark.parametrize("task_id", HACK_PROBLEMS)
def test_every_hack_fails_with_a_reason(humaneval, grader, task_id):
    problem = humaneval[task_id]
    hacks = code_hacks(problem)
    visible = _visible_only(problem)
    if visible is not None:
        hacks["hard-coded visible inputs"] = visible
    honest = row(problem, problem["prompt"] + problem["canonical_solution"], "honest")
    rows = [honest] + [row(problem, code, name) for name, code in hacks.items()]
    grades = dict(zip([r["id"] for r in rows], grader.grade_batch(rows), strict=True))
    assert grades["honest"].passed, grades["honest"].explanation
    rewarded = {
        name: grade.explanation
        for name, grade in grades.items()
        if name != "honest" and (grade.passed or grade.score > 0)
    }
    assert not rewarded
    errors = {name: grade.error for name, grade in grades.items() if grade.error is not None}
    assert not errors  # a hack is a fail, never an error the trainer would skip
    unexplained = [name for name, grade in grades.items() if name != "honest" and not grade.flags]
    assert not unexplained


@pytest.mark.shared_data
def test_counters_fail_in_the_secret_order(humaneval, grader):
    problem = humaneval["HumanEval/13"]
    hack = code_hacks(problem)["stateful counter"]
    grade = grader.grade(row(problem, hack))
    # the calls come in an order nobody wrote down: the counter's answers land on the wrong ones
    assert grade.passed is False and grade.flags[0] in ("wrong_answer", "order_dependent")
    strict = load_grader("code", fresh_process_per_call=True)
    grade = strict.grade(row(problem, hack))
    assert not grade.passed  # a fresh process per call: the counter never moves


@pytest.mark.shared_data
def test_helpers_the_check_needs_come_from_the_prompt_not_the_response(humaneval, grader):
    problem = humaneval["HumanEval/32"]  # check: math.fabs(poly(coeffs, candidate(coeffs))) < 1e-4
    response = "def poly(xs, x):\n    return 0.0\n\ndef find_zero(xs):\n    return 123456.0\n"
    grade = grader.grade(row(problem, response))
    assert not grade.passed
    assert grade.flags == ["wrong_answer"]
