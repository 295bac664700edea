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


# "Print a proper divisor of n": a checker that divides by the program's number before it looks
# at it, so printing nothing, junk or 0 crashes it (SIGFPE)
DIVIDES = r"""#include <cstdio>
int main(int argc, char **argv) {
    long n = 0, x = 0;
    FILE *in = fopen(argv[1], "r"), *out = fopen(argv[2], "r");
    if (fscanf(in, "%ld", &n) != 1) return 3;
    if (fscanf(out, "%ld", &x) != 1) x = 0;
    return n % x == 0 && x > 1 && x < n ? 0 : 1;
}
"""
DIVISOR = (
    '#include <cstdio>\nint main() { long n; if (scanf("%ld", &n) != 1) return 1;\n'
    '    for (long d = 2; d < n; d++) if (n % d == 0) { printf("%ld\\n", d); return 0; } }\n'
)


@pytest.mark.system_tool("g++", package="g++")
def test_a_checker_that_some_output_crashes_is_fragile_with_the_count():
    reference = {
        "language": "cpp",
        "stdio": [{"stdin": "6\n", "stdout": "2\n"}, {"stdin": "15\n", "stdout": "3\n"}],
        "checker": {"language": "cpp", "source": DIVIDES},
    }
    item = {
        "prompt": "Read n and print a proper divisor of n.",
        "reference": reference,
        "metadata": {"canonical_solution": DIVISOR},
        "group": "divisor",
    }
    rows = [
        {**item, "id": "right", "response": f"```cpp\n{DIVISOR}```"},
        {
            **item,
            "id": "zero",
            "response": '```cpp\n#include <cstdio>\nint main() { puts("0"); }\n```',
        },
    ]
    report = audit_items(load_grader("code"), rows, checks=["reference", "tests"])
    found = {f.name: f.reason for i in report.items for f in i.flags}
    assert set(found) == {"checker_fragile"}, report.markdown()
    # nothing printed and junk crash it, an echo of n is rejected; so does the response's 0
    assert "2 of 3 probe programs and 1 of 2 responses" in found["checker_fragile"]
