"""The math kernel's two speed paths: plain numbers never reach SymPy, and each worker parses a
gold answer once (a GRPO group shares one)."""

from __future__ import annotations

import pickle

import pytest

from truegrade.graders.math import _check, _equiv
from truegrade.graders.math._check import MathKernel


@pytest.fixture
def symbolic_calls(monkeypatch):
    """Counts calls into the SymPy path (Math-Verify's parser and the equivalence check)."""
    calls: list[str] = []
    parse, equivalent = _equiv.parse_core, _equiv.equivalent

    def counted_parse(text, *args, **kwargs):
        calls.append(text)
        return parse(text, *args, **kwargs)

    def counted_equivalent(*args, **kwargs):
        calls.append("equivalent")
        return equivalent(*args, **kwargs)

    monkeypatch.setattr(_equiv, "parse_core", counted_parse)
    monkeypatch.setattr(_equiv, "equivalent", counted_equivalent)
    return calls


def _assert_grades(kernel: MathKernel, cases: list[tuple[str, str, bool, str | None]]) -> None:
    """Each ``(response, gold, passed, flag)``: the verdict, and the flag when one is given."""
    for response, gold, passed, flag in cases:
        result = kernel((response, gold))
        assert result["passed"] is passed, (response, result)
        if flag:
            assert flag in result["flags"], (response, result)


def test_plain_numbers_never_reach_sympy(symbolic_calls):
    kernel = MathKernel()
    cases = [
        ("The answer is \\boxed{12}.", "12", True, "exact_match"),
        ("\\boxed{12.0}", "12", True, "equivalent_numeric"),
        ("\\boxed{12,000}", "12000", True, "exact_match"),  # separators normalised first
        ("\\boxed{13}", "12", False, None),
        ("Final answer: -0.25", "-0.25", True, "exact_match"),
    ]
    _assert_grades(kernel, cases)
    assert symbolic_calls == []
    # an expression does go through the parser
    assert kernel(("\\boxed{x+1}", "1+x"))["passed"] is True
    assert symbolic_calls


def test_mixed_numbers_are_compared_as_fractions_without_sympy(symbolic_calls):
    kernel = MathKernel()
    cases = [
        ("\\boxed{1 \\frac{1}{10}}", "1.1", True, "equivalent_symbolic"),
        ("\\boxed{2\\dfrac{1}{2}}", "\\frac{5}{2}", True, "equivalent_symbolic"),
        ("\\boxed{1.1}", "1\\frac{1}{10}", True, "equivalent_symbolic"),
        ("\\boxed{1 \\frac{8}{91}}", "1\\frac{1}{10}", False, None),
        ("\\boxed{9999 \\frac{6}{7}}", "10{,}000", False, None),
        ("\\boxed{-1\\frac{1}{2}}", "-1.5", True, "equivalent_symbolic"),
    ]
    _assert_grades(kernel, cases)
    assert symbolic_calls == []
    # 2 \\frac{0}{3} is a product for the parser, not a mixed number: it is parsed
    assert kernel(("\\boxed{2\\frac{0}{3}}", "0"))["passed"] is True
    assert symbolic_calls


def test_a_gold_is_parsed_once_per_worker_and_the_cache_is_bounded(monkeypatch):
    prepared: list[str] = []
    prepare = _check._prepare_gold

    def counted(reference, shortcuts=True):
        prepared.append(reference)
        return prepare(reference, shortcuts)

    monkeypatch.setattr(_check, "_prepare_gold", counted)
    monkeypatch.setattr(_check, "_GOLD_CACHE_SIZE", 3)
    kernel = MathKernel()
    for response in ("\\boxed{1/2}", "\\boxed{0.5}", "\\boxed{3}", "\\boxed{\\frac12}"):
        kernel((response, "\\frac{1}{2}"))  # one group, one gold
    assert prepared == ["\\frac{1}{2}"]
    for gold in ("1", "2", "3"):  # three more golds: the oldest is evicted
        kernel(("\\boxed{1}", gold))
    assert list(kernel._gold) == ["1", "2", "3"]
    kernel(("\\boxed{1}", "\\frac{1}{2}"))
    assert prepared.count("\\frac{1}{2}") == 2
    # what travels to a worker is the settings, never a cache
    assert pickle.loads(pickle.dumps(kernel))._gold == {}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("\\sqrt{8}", "2\\sqrt{2}"),
        ("(x+1)^2", "x^2+2x+1"),
        ("\\frac{1}{\\sqrt{2}}", "\\frac{\\sqrt{2}}{2}"),
        ("2^{-98}", "\\frac{1}{2^{98}}"),
        ("\\frac{x^2-1}{x-1}", "x+1"),
    ],
)
def test_the_numeric_screen_never_parts_equal_answers(a, b):
    pa, pb = _equiv.parse_core(a), _equiv.parse_core(b)
    assert not _equiv._clearly_apart(pa.value, pb.value)
    assert _equiv.equivalent(pa.value, pb.value) is not None


@pytest.mark.parametrize(
    ("a", "b"),
    [("2^{-98}", "2^{-99}"), ("x+1", "x+2"), ("\\pi", "3.14159265358979"), ("\\sqrt{2}", "1.4142")],
)
def test_the_numeric_screen_parts_different_answers_without_simplifying(a, b, monkeypatch):
    pa, pb = _equiv.parse_core(a), _equiv.parse_core(b)
    assert _equiv._clearly_apart(pa.value, pb.value)
    monkeypatch.setattr(_equiv.sympy, "simplify", lambda *_: pytest.fail("simplify was called"))
    assert _equiv.equivalent(pa.value, pb.value) is None
