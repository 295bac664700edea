"""The audit of stdin/stdout tests, on planted defects of each kind and on the bundled tasks
(which must come out clean): probe programs in the item's language, graded by the real grader."""

from __future__ import annotations

from pathlib import Path

import pytest

from truegrade.audit import audit_items
from truegrade.core import load_grader
from truegrade.data import read_samples

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ADD = (
    "#include <cstdio>\nint main() { long long a, b;\n"
    '    if (scanf("%lld %lld", &a, &b) == 2) printf("%lld\\n", a + b); }\n'
)
TESTS = [{"stdin": "1 2\n", "stdout": "3\n"}, {"stdin": "5 5\n", "stdout": "10\n"}]


def _item(name: str, tests=TESTS, **spec) -> dict:
    return {
        "id": name,
        "prompt": f"({name}) Read two integers and print their sum.",
        "reference": {"language": "cpp", "stdio": tests, **spec},
        "metadata": {"canonical_solution": ADD},
    }


PLANTED = {
    # a special judge that accepts everything (it never reads the output)
    "accept_all": _item(
        "accept_all", checker={"language": "python", "source": "import sys\nsys.exit(0)\n"}
    ),
    # a test that expects no output at all
    "empty_expected": _item("empty_expected", TESTS + [{"stdin": "0 0\n", "stdout": ""}]),
    # every answer is the test's input: an echo solves the item
    "echo_all": _item(
        "echo_all", [{"stdin": "7\n", "stdout": "7\n"}, {"stdin": "0\n", "stdout": "0\n"}]
    ),
    # an expected output the reference program does not produce (a typo in the key)
    "wrong_expected": _item("wrong_expected", TESTS + [{"stdin": "2 2\n", "stdout": "5\n"}]),
    # every test is an example in the statement
    "all_visible": _item("all_visible", [dict(t, visible=True) for t in TESTS]),
    "clean": _item("clean"),
}
EXPECTED = {
    "accept_all": {"accepts_any_output"},
    # the reference passes 2 of 3 tests: a passing score (fraction), so only the per-test
    # finding names the bad test
    "empty_expected": {"expects_no_output", "expected_not_produced"},
    "echo_all": {"echo_passes", "reference_fails"},  # an adder fails on one number: all tests
    "wrong_expected": {"expected_not_produced"},
    "all_visible": {"all_tests_visible"},
    "clean": set(),
}


@pytest.mark.system_tool("g++", package="g++")
def test_each_planted_defect_is_found_with_its_reason_and_the_clean_item_is_not():
    report = audit_items(load_grader("code"), list(PLANTED.values()), checks=["reference", "tests"])
    found = {item.id: {f.name for f in item.flags} for item in report.items}
    assert {k: found.get(k, set()) for k in PLANTED} == EXPECTED
    reasons = {(i.id, f.name): f.reason for i in report.items for f in i.flags}
    assert "special judge accepts" in reasons["accept_all", "accepts_any_output"]
    assert "stdio_2" in reasons["empty_expected", "expects_no_output"]
    assert "stdio_2" in reasons["wrong_expected", "expected_not_produced"]
    assert report.checks["tests"].startswith("ran")


def test_items_that_are_not_stdio_skip_the_probes():
    report = audit_items(
        load_grader("code"),
        [
            {
                "id": "f",
                "prompt": "def f(x):\n",
                "reference": {"entry_point": "f", "check": "def check(c): pass"},
            }
        ],
        checks=["tests"],
    )
    assert report.checks["tests"] == "skipped: no stdin/stdout items"


@pytest.mark.system_tool("g++", package="g++")
def test_the_bundled_stdio_tasks_have_sound_tests():
    rows = [s for _, s in read_samples(EXAMPLES / "data" / "stdio_tasks.jsonl")]
    report = audit_items(load_grader("code"), rows, checks=["reference", "tests"])
    assert report.items_flagged == 0, report.markdown()
    assert report.checks["tests"] == "ran (3 probe programs on each of 6 stdin/stdout items)"
