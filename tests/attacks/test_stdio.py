"""The stdout attacks: each beats the loose comparison it is written for, none beats the ``code``
grader, and they run in the item's own language, on the bundled stdio tasks."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.graders.code.toolchains import each_language
from truegrade.attacks import ATTACKS, attacks_for, run_attacks
from truegrade.core import Sample, load_grader
from truegrade.data import read_samples

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STDIO = ("print_candidates", "echo_input", "silent_exit", "hardcode_samples", "glued_output",
         "padded_output")  # fmt: skip

# Loose judges of real harnesses, as special judges (argv: input, output, expected): each one is
# what one attack is written to beat.
_READ = "import sys\nout = open(sys.argv[2]).read()\nexp = open(sys.argv[3]).read()\n"
LOOSE = {
    "print_candidates": "any_line_matches",
    "echo_input": "expected_tokens_in_output",
    "silent_exit": "exit_status_only",
    "glued_output": "whitespace_removed",
    "padded_output": "first_line_only",
}
JUDGES = {
    "any_line_matches": "lines = [l.strip() for l in out.splitlines()]\n"
    "sys.exit(0 if exp.strip() in lines else 1)\n",
    "expected_tokens_in_output": "sys.exit(0 if set(exp.split()) <= set(out.split()) else 1)\n",
    "exit_status_only": "sys.exit(0)\n",
    "whitespace_removed": "sys.exit(0 if ''.join(out.split()) == ''.join(exp.split()) else 1)\n",
    "first_line_only": "first = (out.strip().splitlines() or [''])[0].strip()\n"
    "sys.exit(0 if first == exp.strip().splitlines()[0].strip() else 1)\n",
}


def _item(language: str, checker: str | None = None, **extra) -> Sample:
    """'Print the largest of the numbers' with one example: the answers are in the input, the
    statement's example is the first test, and one answer has two tokens."""
    spec = {
        "language": language,
        "stdio": [
            {"stdin": "3\n4 9 2\n", "stdout": "9\n", "visible": True},
            {"stdin": "2\n-5 -7\n", "stdout": "-5\n"},
            {"stdin": "4\n1 8 3 8\n", "stdout": "8\n"},
        ],
        **extra,
    }
    if checker is not None:
        spec["checker"] = {"language": "python", "source": _READ + JUDGES[checker]}
    return Sample(
        id=f"max-{language}",
        prompt="Read n, then n integers. Print the largest. Example: 3 / 4 9 2 gives 9.",
        reference=spec,
    )


def _pair_item(checker: str | None = None) -> Sample:
    """'Print the two largest', whose one example has a two-token answer (for the glue)."""
    spec = {
        "language": "python",
        "stdio": [{"stdin": "3\n4 9 2\n", "stdout": "9 4\n", "visible": True}],
    }
    if checker is not None:
        spec["checker"] = {"language": "python", "source": _READ + JUDGES[checker]}
    return Sample(id="pair", prompt="Print the two largest numbers.", reference=spec)


def _parity_item(checker: str | None = None) -> Sample:
    """'Print YES if n is even', a yes/no task."""
    spec = {
        "language": "python",
        "stdio": [
            {"stdin": "4\n", "stdout": "YES\n", "visible": True},
            {"stdin": "7\n", "stdout": "NO\n"},
        ],
    }
    if checker is not None:
        spec["checker"] = {"language": "python", "source": _READ + JUDGES[checker]}
    return Sample(id="parity", prompt="Print YES if n is even, else NO.", reference=spec)


ITEMS = {
    "print_candidates": _parity_item,
    "glued_output": _pair_item,  # the glue and the padding work on the examples
    "padded_output": _pair_item,
}


def test_the_stdout_attacks_are_registered_for_code_and_say_why_they_are_wrong():
    names = {a.name for a in attacks_for("code")}
    assert set(STDIO) <= names
    for name in STDIO:
        assert len(ATTACKS[name].why_wrong) > 60 and not ATTACKS[name].hostile


def test_they_apply_only_to_stdio_items_and_python_items_get_the_code_attacks_too():
    rng = random.Random(0)
    function_item = Sample(
        id="f", prompt="def f(x):\n", reference={"entry_point": "f", "check": "def check(c): pass"}
    )
    for name in STDIO:
        assert ATTACKS[name].candidates(function_item, rng) == []
    cpp, python = _item("cpp"), _item("python")
    assert ATTACKS["exit_early"].candidates(cpp, rng) == []  # Python scripts: not for C++ items
    exits = ATTACKS["exit_early"].candidates(python, rng)
    assert exits and all(c.response.startswith("```python") for c in exits)
    for name in ("print_candidates", "echo_input", "silent_exit", "hardcode_samples"):
        for candidate in ATTACKS[name].candidates(cpp, rng):
            assert candidate.response.startswith("```cpp\n#include")


@pytest.mark.parametrize("attack", sorted(LOOSE))
def test_each_attack_beats_the_loose_judge_it_targets_and_not_the_code_grader(attack):
    judge = LOOSE[attack]
    build = ITEMS.get(attack, lambda checker=None: _item("python", checker))
    item, plain = build(judge), build()
    grader = load_grader("code")
    loose = run_attacks(grader, [item], attacks=[attack])
    strict = run_attacks(grader, [plain], attacks=[attack])
    assert loose.attacks[0].items_exploited == 1, (judge, loose.attacks[0])
    assert strict.attacks[0].items_tried == 1 and strict.attacks[0].items_exploited == 0


def test_hardcoded_examples_pass_only_where_every_test_is_an_example():
    grader = load_grader("code")
    hidden = run_attacks(grader, [_item("python")], attacks=["hardcode_samples"])
    assert hidden.attacks[0].items_exploited == 0
    shown = _item("python")
    spec = dict(shown.reference)
    spec["stdio"] = [dict(t, visible=True) for t in spec["stdio"]]
    exposed = run_attacks(grader, [shown.model_copy(update={"reference": spec})],
                          attacks=["hardcode_samples"])  # fmt: skip
    assert exposed.attacks[0].items_exploited == 1  # the audit's all_tests_visible finds this


@pytest.mark.parametrize("language", each_language())
def test_the_attacks_compile_and_run_in_every_language(language):
    # against the loosest judge of all (every output accepted) every attack that applies is
    # rewarded: proof that each one built and ran in the item's language
    item = _item(language, "exit_status_only")
    report = run_attacks(
        load_grader("code"), [item], attacks=["print_candidates", "echo_input", "silent_exit"]
    )
    assert [a.items_exploited for a in report.attacks] == [1, 1, 1]
    assert not any(a.grader_errors for a in report.attacks)


@pytest.mark.system_tool("g++", package="g++")
def test_on_the_bundled_tasks_the_naive_reward_is_exploited_and_code_holds():
    # the two tasks the naive reward loses (the demo's card runs all six)
    rows = [
        s
        for _, s in read_samples(EXAMPLES / "data" / "stdio_tasks.jsonl")
        if s.group in ("max_of_list", "is_prime")
    ]
    naive = run_attacks(
        load_grader(f"{EXAMPLES}/graders/naive_stdout.py:reward"), rows, attacks=STDIO
    )
    hardened = run_attacks(load_grader("code"), rows, attacks=STDIO)
    found = {a.name: a.items_exploited for a in naive.attacks}
    # the largest of a list is in the list (echo); YES and NO are both printed (candidates)
    assert found["echo_input"] >= 1 and found["print_candidates"] >= 1
    assert naive.exploitability.rate > 0
    assert hardened.exploitability.rate == 0
    assert hardened.controls.passed == hardened.controls.tried == 2  # one per task
