"""The Kattis default validator, reproduced in ``_conventions``, against problemtools' own test
cases of it (``tests/data/kattis_default_validator``), and the judges' verdict names."""

from __future__ import annotations

from pathlib import Path

import pytest

from truegrade.graders.code._conventions import (
    VERDICT_NAMES,
    KattisFlags,
    kattis_compare,
    parse_kattis_flags,
    verdict_name,
)
from truegrade.graders.code._stdio import VERDICTS

CASES = Path(__file__).parents[2] / "data" / "kattis_default_validator"


def _cases() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if p.is_dir())


def test_the_published_cases_are_all_there():
    assert len(_cases()) == 24


@pytest.mark.parametrize("case", _cases(), ids=lambda p: p.name)
def test_each_published_case_gets_the_validators_verdict(case):
    args = (case / "args.txt").read_text() if (case / "args.txt").exists() else ""
    expected = int((case / "expected_exit_code.txt").read_text())
    why = kattis_compare(
        (case / "user.out").read_bytes(),
        (case / "judge.ans").read_bytes(),
        parse_kattis_flags(args),
    )
    assert (42 if not why else 43) == expected, why


def test_floats_are_judged_against_the_answers_magnitude_and_only_when_finite():
    rel = KattisFlags(rel_tol=1e-3)
    assert kattis_compare("100.05", "100", rel) == ""  # 0.05 <= 1e-3 * 100
    assert kattis_compare("0.0005", "0", rel)  # relative to a zero answer: nothing fits
    assert kattis_compare("1.0005", "1", KattisFlags(abs_tol=1e-3)) == ""
    assert kattis_compare("inf", "inf", rel) == ""  # not a number to the judge: text, no case
    assert kattis_compare("nan", "1.5", rel)  # the answer is a number, the output is not
    assert kattis_compare("0x1p1", "2", rel) == ""  # C reads hexadecimal floats
    assert kattis_compare("1_0", "10", rel)  # Python's float() would read it; C does not
    assert kattis_compare("1e", "1", rel)  # part of a number is no number


def test_case_and_whitespace_rules():
    plain = KattisFlags()
    assert kattis_compare("  YES\r\n\n", "yes\n", plain) == ""
    assert kattis_compare("YES", "yes", KattisFlags(case_sensitive=True))
    spaced = KattisFlags(space_change_sensitive=True)
    assert kattis_compare("1 2\n", "1 2\n", spaced) == ""
    assert "whitespace" in kattis_compare("1  2\n", "1 2\n", spaced)
    assert "whitespace" in kattis_compare("1 2", "1 2\n", spaced)
    assert kattis_compare("1\u00a02", "1 2", plain)  # only C's whitespace separates tokens
    assert "trailing" in kattis_compare("1 2 3", "1 2", plain)
    assert "ends" in kattis_compare("1", "1 2", plain)


def test_bad_flags_are_refused_with_their_name():
    with pytest.raises(ValueError, match="float_tolerance"):
        parse_kattis_flags("float_tolerance")
    with pytest.raises(ValueError, match="loose"):
        parse_kattis_flags("loose")
    assert parse_kattis_flags(["float_tolerance", 1e-6]).abs_tol == pytest.approx(1e-6)


@pytest.mark.parametrize("judge", sorted(VERDICT_NAMES))
def test_every_verdict_has_a_name_with_every_judge(judge):
    names = {verdict_name(v, judge) for v in VERDICTS}
    assert verdict_name("accepted", judge) in {"accepted", "AC", "correct"}
    if judge != "truegrade":  # the judges fold our finer time verdicts into their one
        assert verdict_name("idle_limit", judge) == verdict_name("time_limit", judge)
        assert len(names) == len(VERDICTS) - 2
