"""Answer and key formats met in real material, class by class: each true equivalent is
accepted, and each near miss of the same shape is still rejected.

The kernel is called directly (as a worker calls it) so each case shows its verdict and reason.
"""

from __future__ import annotations

import pytest

from truegrade.graders.math._check import MathKernel


@pytest.fixture(scope="module")
def kernel():
    return MathKernel()


# (class, response, gold): right answers
RIGHT = [
    # a short response's one math span is its answer
    ("span", "Answer $ 9 $", "9"),
    ("span", r"Answer \[ 9 \]", "9"),
    ("span", "Answer $$ \n 9 \n $$", "9"),
    ("span", r"Therefore $x \geq 5$ is the solution.", "x >= 5"),
    (
        "span",
        r"The identity matrix is $\begin{pmatrix}1 & 0 \\ 0 & 1\end{pmatrix}$.",
        r"\begin{pmatrix}1 & 0 \\ 0 & 1\end{pmatrix}",
    ),
    ("span", "$28$ percent", r"28\%"),
    ("span", "28 pct", r"28\%"),
    ("span", "Final Answer: The largest $n$ is 34.", "34"),
    # named values and assignments as the key
    ("named", r"\boxed{4, 5}", "AB=4, CD=5"),
    ("named", r"\boxed{CD=5, AB=4}", "AB=4, CD=5"),
    ("named", r"\boxed{(3,2)}", "(p,q)=(3,2)"),
    ("named", r"\boxed{1}", "|AB|=1"),
    ("named", r"\boxed{3, 2, 1}", "n=1, 2, 3"),
    ("named", r"\boxed{n=1, 2, 3}", "n=1, 2, 3"),
    ("named", r"\boxed{\frac{1}{\sqrt{6}}}", r"\frac{NO}{BO}=\frac{1}{\sqrt6}"),
    ("named", r"\boxed{7:32}", r"S_{MBCN}:S=7:32"),
    ("named", r"\boxed{(5,2),(7,2)}", "p=5,q=2;p=7,q=2"),
    # an answer written as the key's named tuples is those tuples, its names in any order
    ("named", r"\boxed{p=5, q=2; p=7, q=2}", "p=5, q=2; p=7, q=2"),
    ("named", r"$p=5,q=2;p=7,q=2$", "p = 5, q = 2 and p = 7, q = 2"),
    ("named", r"\boxed{q=2, p=7; q=2, p=5}", "p=5, q=2; p=7, q=2"),
    ("named", r"\boxed{a_{37} = 19, \quad a_3 = 2}", "a_3 = 2, a_{37} = 19"),
    ("named", r"\boxed{(x, y) = (5, 8) \text{ and } (8, 5)}", "(5, 8), (8, 5)"),
    ("named", r"\boxed{2x+3}", "y = 2x+3"),
    ("named", r"\boxed{2x - y + 3 = 0}", "y = 2x+3"),
    ("named", r"\boxed{10000}", "x = 10,000"),
    ("named", r"\boxed{10,000}", "x=10{,}000"),
    # an inequality key and the interval it is
    ("interval", r"\boxed{(-793, 10)}", "-793 < a < 10"),
    ("interval", r"\boxed{(0,1)}", "0<f(x)<1"),
    ("interval", r"\boxed{x \in [-2,7]}", r"-2 \le x \le 7"),
    ("interval", r"\boxed{x \in [-2,7]}", r"-2 \\le x \\le 7"),  # backslashes doubled
    ("interval", r"\boxed{[-\frac{3}{2}, -1] \cup [1, \frac{3}{2}]}", r"1\leq|z|\leq \frac{3}{2}"),
    ("interval", r"\boxed{7 \ge x \ge -2}", r"-2 \le x \le 7"),
    # lists
    ("list", r"\boxed{1} and \boxed{2} and \boxed{3}", "{1,2,3}"),
    ("list", r"\boxed{1},\boxed{2},\boxed{3}", "{1,2,3}"),
    ("list", r"\boxed{840}", r"so \boxed{840}. **Final Answer** \boxed{840}"),
    # formatting
    ("format", r"\boxed{11,\! 111,\! 111,\! 100}", "11111111100"),
    ("format", r"\boxed{1 000}", "1000"),
    ("format", r"\boxed{28 \text{ percent}}", r"28\%"),
    ("format", r"\boxed{28 percentage}", r"28\%"),
    ("format", r"The distance is $\boxed{125\textnormal{ miles}}.$", "$125$ miles"),
    # keys in other syntaxes
    ("syntax", r"\boxed{x^4 + 2x}", "x**4 + 2*x"),
    ("syntax", r"\boxed{2(x+1)^{n+1}}", "2*(x+1)**(n+1)"),
    ("syntax", r"\boxed{1.25 \times 10^{18}}", "1.25e+18"),
    ("syntax", r"\boxed{1.25e18}", r"1.25 \times 10^{18}"),
    ("syntax", r"\boxed{-2 x \arcsin(x) - 2\sqrt{1-x^2}}", "-2*x*asin(x) - 2*sqrt(1 - x**2)"),
    ("syntax", r"\boxed{-2 x \operatorname{asin}{\left(x \right)}}", "-2*x*asin(x)"),
    ("syntax", r"\boxed{2e^{10}e^{2x}e^{4x^2}}", "2*exp(4*x**2 + 2*x + 10)"),
    ("syntax", r"\boxed{\exp(-x^2)}", "e^{-x^2}"),
    ("syntax", r"\boxed{-\ln|x-3|}", "-log(Abs(x - 3))"),
    ("syntax", r"\boxed{e^{2x}}", "E**(2*x)"),
    ("syntax", r"\boxed{2\pi}", "2*pi"),
    ("syntax", r"\boxed{2\ln x}", "2*log(x)"),
    ("syntax", r"\boxed{6228}", "0x1854"),
    ("syntax", r"\boxed{-0x3}", "-3"),
    ("syntax", r"\boxed{5}", "0b101"),
    # a prime factorization, in any order and with powers
    ("factorization", r"\boxed{2^4 \times 41}", "2 × 2 × 2 × 2 × 41"),
    ("factorization", r"\boxed{41*2*2*2*2}", "2 × 2 × 2 × 2 × 41"),
    ("factorization", r"\boxed{42}", r"6 \times 7"),  # not primes: the key is its value
    # an antiderivative: any member of the family
    ("antiderivative", r"\boxed{(x+1)^2 + C}", "x^2 + 2x + C"),
    ("antiderivative", r"\boxed{x^2 + 2x + K}", "x**2 + 2*x + C"),
    ("antiderivative", r"\boxed{x^2 + 2x}", "x^2 + 2x + C"),
    ("antiderivative", r"\boxed{-\frac{\cos^2 x}{2} + C}", r"\frac{\sin^2 x}{2} + C"),
    # times
    ("time", r"\boxed{12:00}", "12:00"),
    ("time", r"\boxed{4:30 \text{ p.m.}}", "16:30"),
    # radicals: a reordered denominator is the same expression, decided without simplify
    (
        "radical",
        r"\boxed{\frac{\sqrt{\sqrt{11}+\sqrt{194}}}{2\sqrt{33}+15}}",
        r"\frac{\sqrt{\sqrt{11}+\sqrt{194}}}{15+2\sqrt{33}}",
    ),
    ("radical", r"\boxed{10^{\frac{\sqrt{13} - 5}{6}}}", r"x = 10^{\frac{-5+\sqrt{13}}{6}}"),
    (
        "radical",  # the denominator rationalised: exact, and without simplify's minutes
        r"\boxed{\frac{\sqrt{\sqrt{11}+\sqrt{194}}(15-2\sqrt{33})}{93}}",
        r"\frac{\sqrt{\sqrt{11}+\sqrt{194}}}{15+2\sqrt{33}}",
    ),
    ("radical", r"\boxed{\sqrt{2}+\sqrt{3}}", r"\sqrt{5+2\sqrt{6}}"),
    ("radical", r"\boxed{\sqrt{2}-1}", r"\frac{1}{\sqrt{2}+1}"),
    (
        "radical",
        r"\boxed{\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}"
        r" + \begin{pmatrix}5 & 6 \\ 7 & 8\end{pmatrix}}",
        r"\begin{pmatrix}6 & 8 \\ 10 & 12\end{pmatrix}",
    ),
    # the imaginary unit is i, and does arithmetic
    ("imaginary", r"\boxed{i+i}", "2i"),
    ("imaginary", r"\boxed{2i}", "i+i"),
    ("imaginary", r"\boxed{i^2}", "-1"),
    ("imaginary", r"\boxed{-1}", "i^2"),
    ("imaginary", r"\boxed{(2-i)(2+i)}", "5"),
    ("imaginary", r"\boxed{e^{i\pi}}", "-1"),
    ("imaginary", r"\boxed{e^{i\pi} = -1}", "-1"),
    ("imaginary", r"\boxed{\frac34i}", r"\frac34 i"),
    ("imaginary", r"\boxed{\frac34i}", "0.75i"),
    ("imaginary", r"\boxed{\frac{1}{i}}", "-i"),
    ("imaginary", r"\boxed{\frac{3+4i}{1-2i}}", "-1+2i"),
    ("imaginary", r"\boxed{\mathrm{i}^2}", "-1"),
    ("imaginary", r"\boxed{14}", r"\sum_{i=1}^{3} i^2"),  # a bound index is an index
    ("imaginary", r"\boxed{a_i + b_i}", r"b_i + a_i"),  # a subscript is part of a name
    # \bmod and \mod are the remainder
    ("mod", r"\boxed{17 \bmod 5}", "2"),
    ("mod", r"\boxed{2}", r"17 \bmod 5"),
    ("mod", r"\boxed{17 \bmod 5 = 2}", "2"),
    ("mod", r"\boxed{17 \mod 5}", r"17 \bmod 5"),
    ("mod", r"\boxed{x \equiv 2 \pmod{5}}", r"x \equiv 2 \pmod 5"),  # compared as written
    # a key escaped twice is read with single backslashes, its \\\\ as row breaks
    (
        "escaped",
        r"\boxed{\begin{pmatrix} 1 \\ 2 \end{pmatrix}}",
        r"\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
    ),
    ("escaped", r"\boxed{\frac{1}{2}}", r"\\frac{1}{2}"),
    ("escaped", r"\boxed{\sqrt{2}}", r"\\sqrt{2}"),
    (
        "escaped",
        r"\boxed{\begin{pmatrix} 1 \\ 2 \end{pmatrix}}",
        r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}",
    ),
    # a degree sign inside a trigonometric function's argument is degrees
    ("trig degrees", r"\boxed{1}", r"\sin(90^\circ)"),
    ("trig degrees", r"\boxed{\sin(90^\circ)}", "1"),
    ("trig degrees", r"\boxed{\frac12}", r"\cos 60^\circ"),
    ("trig degrees", r"\boxed{\frac{\sqrt3}{2}}", r"\sin 60°"),
    ("trig degrees", r"\boxed{\tan^2 60^{\circ}}", "3"),
    # juxtaposed powers are a product
    ("juxtaposed", r"\boxed{2^6 3^5 5^4}", r"2^6 \cdot 3^5 \cdot 5^4"),
    ("juxtaposed", r"\boxed{2^6 \cdot 3^5 \cdot 5^4}", r"2^6 3^5 5^4"),
    ("juxtaposed", r"\boxed{2^6 3^5 5^4}", "9720000"),
    ("juxtaposed", r"\boxed{2^{2} 3}", "12"),
    # a power of a quotient or a product, split without simplify
    ("power", r"\boxed{\frac{a^n}{b^n}}", r"\left(\frac{a}{b}\right)^n"),
    ("power", r"\boxed{\frac{(n-1)^n}{n^n}}", r"\left(1-\frac{1}{n}\right)^{n}"),
    ("power", r"\boxed{a^n b^n}", r"(ab)^n"),
    ("power", r"\boxed{\frac{b^n}{a^n}}", r"\left(\frac{a}{b}\right)^{-n}"),
    ("power", r"\boxed{\frac{\sqrt a}{\sqrt b}}", r"\sqrt{\frac{a}{b}}"),
    # a list keeps its repeats; a key in set braces does not count them
    ("multiset", r"\boxed{1, 1, 2}", "1, 1, 2"),
    ("multiset", r"\boxed{2, 1, 1}", "1, 1, 2"),
    ("multiset", r"\boxed{1} and \boxed{1, 2}", "1, 1, 2"),
    ("multiset", r"\boxed{\{1, 2\}}", r"\{1, 1, 2\}"),
    ("multiset", r"\boxed{1, 1, 2}", r"\{1, 2\}"),
    ("multiset", r"\boxed{1, 2}", r"\{1, 2\}"),
    ("multiset", r"\boxed{(1,2), (1,2), (3,4)}", "(1,2), (3,4), (1,2)"),
    ("multiset", r"\boxed{x = 3, 3}", "3, 3"),
    # a letter after a number: a unit beside another unit, otherwise the letter it is
    ("number-letter", r"\boxed{5h}", "5h"),
    ("number-letter", r"\boxed{5 \cdot h}", "5h"),
    ("number-letter", r"\boxed{5 \text{ hours}}", "5h"),
    ("number-letter", r"\boxed{5\text{ h}}", "5h"),
    ("number-letter", r"\boxed{10\text{ m}}", "10m"),
    ("number-letter", r"\boxed{10 m}", "10m"),
    ("number-letter", r"\boxed{10x}", "10x"),
    ("number-letter", r"\boxed{5}", r"5\text{ h}"),
    ("number-letter", r"\boxed{5}", "5 hours"),
    ("number-letter", r"\boxed{10}", "10 cm"),
    ("number-letter", r"\boxed{5 \text{ hours}}", "5"),
]

# (class, response, gold, flag or None): near misses of the same shapes
WRONG = [
    ("span", "Answer $5$ or 6.", "5", "no_answer"),
    ("span", "Answer $5$ or $6$.", "5", "no_answer"),
    ("span", "Answer $ \n 9 \n $", "9", "no_answer"),  # an inline span does not cross lines
    ("span", "I computed 5 and I'm confident.", "5", "no_answer"),
    ("span", r"Compute $\frac{1}{2}+\frac{1}{3}$.", r"\frac{5}{6}", "no_answer"),  # an echo
    ("span", "What is $2+3$?", "5", "no_answer"),
    ("span", "$28$ percent", "28", "percent_mismatch"),
    ("span", "Final Answer: The largest $n$ is 35.", "34", None),
    ("span", "Final Answer: The largest $n$ is 34 or 35.", "34", "hedged"),
    ("named", r"\boxed{5, 4}", "AB=4, CD=5", None),
    ("named", r"\boxed{AB=5, CD=4}", "AB=4, CD=5", None),
    ("named", r"\boxed{AB=4, EF=5}", "AB=4, CD=5", None),
    ("named", r"\boxed{(2,3)}", "(p,q)=(3,2)", None),
    ("named", r"\boxed{2}", "|AB|=1", None),
    ("named", r"\boxed{1, 2}", "n=1, 2, 3", None),
    ("named", r"\boxed{1, 2, 3, 4}", "n=1, 2, 3", "hedged"),
    ("named", r"\boxed{m=1, 2, 3}", "n=1, 2, 3", None),
    ("named", r"\boxed{(5,2),(7,3)}", "p=5,q=2;p=7,q=2", None),
    ("named", r"\boxed{y = 5}", "x=5", None),
    ("named", r"\boxed{2x - y + 4 = 0}", "y = 2x+3", None),
    ("named", r"\boxed{3x+3}", "y = 2x+3", None),
    ("named", r"\boxed{10, 000}", "x = 10,000", "hedged"),
    ("named", r"\boxed{10}", "x = 10,000", None),
    ("named", r"\boxed{p=5, q=2; p=7, q=3}", "p=5, q=2; p=7, q=2", None),
    ("named", r"\boxed{p=5, q=2}", "p=5, q=2; p=7, q=2", None),  # one of the two
    ("named", r"\boxed{p=5, r=2; p=7, r=2}", "p=5, q=2; p=7, q=2", "false_relation"),
    ("interval", r"\boxed{[-793, 10)}", "-793 < a < 10", "interval_mismatch"),
    ("interval", r"\boxed{(-793, 11)}", "-793 < a < 10", "interval_mismatch"),
    ("interval", r"\boxed{(0,1]}", "0<f(x)<1", "interval_mismatch"),
    ("interval", r"\boxed{[1, \frac{3}{2}]}", r"1\leq|z|\leq \frac{3}{2}", None),
    ("interval", r"\boxed{-2 \le x \le 7}", r"x \in [-2,7]", None),  # a set key wants a set
    ("list", r"\boxed{1} and \boxed{2}", "{1,2,3}", None),
    ("list", r"\boxed{1} and \boxed{2} and \boxed{4}", "{1,2,3}", None),
    ("format", r"\boxed{11,\! 111,\! 111,\! 101}", "11111111100", None),
    ("format", r"\boxed{100, 200}", "100200", "hedged"),  # comma and space: a list, not 100,200
    ("format", r"\boxed{12 13}", "1213", "parse_error"),  # not groups of three
    ("format", r"\boxed{28 pct}", "28", "percent_mismatch"),
    ("format", r"The distance is $\boxed{125\textnormal{ km}}.$", "$125$ miles", "unit_mismatch"),
    ("syntax", r"\boxed{x^4 + 3x}", "x**4 + 2*x", None),
    ("syntax", r"\boxed{18 + 1.25e}", "1.25e+18", None),
    ("syntax", r"\boxed{1.25 \times 10^{17}}", "1.25e+18", None),
    ("syntax", r"\boxed{0x1855}", "0x1854", None),
    ("syntax", r"\boxed{-6228}", "0x1854", None),
    ("syntax", r"\boxed{\arccos(x)}", "asin(x)", None),
    ("syntax", r"\boxed{2\log(x)}", "2*log(x)", None),  # natural in * syntax: \log is base 10
    ("syntax", r"\boxed{-7+1j}", "-7 + i", None),
    ("factorization", r"\boxed{656}", "2 × 2 × 2 × 2 × 41", None),
    ("factorization", r"\boxed{4 \times 4 \times 41}", "2 × 2 × 2 × 2 × 41", None),
    ("factorization", r"\boxed{2 \times 2 \times 2 \times 41}", "2 × 2 × 2 × 2 × 41", None),
    ("antiderivative", r"\boxed{2x^2 + C}", "x^2 + C", None),
    ("antiderivative", r"\boxed{x^2 + x}", "x^2 + C", None),
    ("antiderivative", r"\boxed{x^3 + C}", "x^2 + C", None),
    ("time", r"\boxed{1:00}", "12:00", None),
    ("time", r"\boxed{3:00}", "12:00", None),
    ("time", r"\boxed{1:15}", "2:30", None),
    ("time", r"\boxed{4:30}", "4:30 p.m.", None),
    ("time", r"\boxed{12}", "12:00", None),
    (
        "radical",
        r"\boxed{\frac{\sqrt{\sqrt{11}+\sqrt{194}}}{2\sqrt{33}+16}}",
        r"\frac{\sqrt{\sqrt{11}+\sqrt{194}}}{15+2\sqrt{33}}",
        None,
    ),
    ("radical", r"\boxed{10^{10^{10^{10}}}}", "1", "too_complex"),
    ("radical", r"\boxed{\sqrt{2}+\sqrt{3}}", r"\sqrt{5+2\sqrt{7}}", None),
    ("radical", r"\boxed{\sqrt{2}+1}", r"\frac{1}{\sqrt{2}+1}", None),
    ("imaginary", r"\boxed{i^2}", "1", None),
    ("imaginary", r"\boxed{i+i}", "i", None),
    ("imaginary", r"\boxed{3-4i}", "3+4i", None),
    ("imaginary", r"\boxed{(2-i)(2+i)}", "3", None),
    ("imaginary", r"\boxed{e^{i\pi} = 1}", "1", "false_relation"),
    ("imaginary", r"\boxed{\frac34i}", r"\frac43 i", None),
    ("imaginary", r"\boxed{i}", "-i", None),
    ("imaginary", r"\boxed{-7+1j}", "-7 + i", None),
    ("mod", r"\boxed{17 \bmod 5}", "3", None),
    ("mod", r"\boxed{3}", r"17 \bmod 5", None),
    ("mod", r"\boxed{17 \bmod 5 = 3}", "3", "false_relation"),
    ("mod", r"\boxed{17 \bmod{} 5 = 2}", "2", "parse_error"),  # unreadable, not false
    (
        "escaped",
        r"\boxed{\begin{pmatrix} 1 \\ 3 \end{pmatrix}}",
        r"\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
        None,
    ),
    (
        "escaped",
        r"\boxed{\begin{pmatrix} 1 & 2 \end{pmatrix}}",
        r"\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
        None,
    ),
    ("escaped", r"\boxed{\frac{1}{3}}", r"\\frac{1}{2}", None),
    ("trig degrees", r"\boxed{\frac{\sqrt3}{2}}", r"\cos 60^\circ", None),
    ("trig degrees", r"\boxed{\sin 30}", r"\sin 30^\circ", None),
    ("trig degrees", r"\boxed{0}", r"\sin(90^\circ)", None),
    ("juxtaposed", r"\boxed{2^6 3^5 5^3}", r"2^6 \cdot 3^5 \cdot 5^4", None),
    ("juxtaposed", r"\boxed{9720000}", r"2^6 3^5 5^4", None),  # a factorization wants factors
    ("juxtaposed", r"\boxed{2 3}", "6", "parse_error"),  # two numbers are no product
    ("juxtaposed", r"\boxed{2 3}", "23", "parse_error"),
    ("power", r"\boxed{\frac{a^n}{b^{n+1}}}", r"\left(\frac{a}{b}\right)^n", None),
    ("power", r"\boxed{\frac{a^n}{b^n}}", r"\left(\frac{b}{a}\right)^n", None),
    ("power", r"\boxed{a^n}", r"(-a)^n", None),
    ("power", r"\boxed{x}", r"\sqrt{x^2}", None),
    ("power", r"\boxed{ab}", r"\sqrt{a^2 b^2}", None),
    ("multiset", r"\boxed{1, 2}", "1, 1, 2", None),
    ("multiset", r"\boxed{1, 2, 2}", "1, 1, 2", None),
    ("multiset", r"\boxed{1, 1, 1, 2}", "1, 1, 2", None),
    ("multiset", r"\boxed{\{1, 2\}}", "1, 1, 2", None),
    ("multiset", r"\boxed{(1,2), (3,4)}", "(1,2), (3,4), (1,2)", None),
    ("multiset", r"\boxed{1, 1, 3}", r"\{1, 2\}", None),
    ("number-letter", r"\boxed{5}", "5h", None),
    ("number-letter", r"\boxed{10}", "10m", None),
    ("number-letter", r"\boxed{3}", "3s", None),
    ("number-letter", r"\boxed{6}", "6g", None),
    ("number-letter", r"\boxed{10}", "10x", None),
    ("number-letter", r"\boxed{4}", "4n", None),
    ("number-letter", r"\boxed{5h}", "5", None),
    ("number-letter", r"\boxed{10\text{ cm}}", "10m", "unit_mismatch"),
    ("number-letter", r"\boxed{5 \text{ minutes}}", "5h", "unit_mismatch"),
    ("number-letter", r"\boxed{6h}", "5h", None),
]


@pytest.mark.parametrize(("kind", "response", "gold"), RIGHT)
def test_true_equivalents_are_accepted(kernel, kind, response, gold):
    result = kernel((response, gold))
    assert result["passed"] is True, (kind, response, gold, result)


@pytest.mark.parametrize(("kind", "response", "gold", "flag"), WRONG)
def test_near_misses_are_rejected(kernel, kind, response, gold, flag):
    result = kernel((response, gold))
    assert result["passed"] is False, (kind, response, gold, result)
    assert result["explanation"]
    if flag:
        assert flag in result["flags"], (kind, response, result)


def test_a_key_boxing_different_answers_in_different_sentences_is_refused(kernel):
    result = kernel((r"\boxed{1,2}", r"\boxed{1} no no no no no \boxed{2}"))
    assert result["passed"] is None and "bad_reference" in result["flags"]
    listed = kernel((r"\boxed{1,2}", r"\boxed{1} papers and \boxed{2} bins"))
    assert listed["passed"] is True


def test_a_key_the_parser_refuses_is_an_error_where_an_answer_must_be_checked(kernel):
    refused = kernel((r"\boxed{2}", r"2^{x^{x}}"))
    assert refused["passed"] is None and refused["error"] and "bad_reference" in refused["flags"]
    assert kernel((r"\boxed{2^{x^{x}}}", r"2^{x^{x}}"))["passed"] is True  # the key's own text


def test_a_congruence_is_compared_only_as_written(kernel):
    # read by the parser, \\pmod is \\pm o d and \\equiv ... \\mod drops the modulus: x = 2 (mod 7)
    # would pass for x = 2 (mod 5); the key is its own text, anything else an error
    for response in (r"\boxed{x \equiv 2 \pmod{7}}", r"\boxed{x \equiv 7 \pmod{5}}"):
        result = kernel((response, r"x \equiv 2 \pmod 5"))
        assert result["passed"] is None and "bad_reference" in result["flags"], result
    result = kernel((r"\boxed{x \equiv 2 \mod 7}", r"x \equiv 2 \mod 5"))
    assert result["passed"] is None and "bad_reference" in result["flags"], result
    answer = kernel((r"\boxed{x \equiv 2 \pmod 7}", "2"))
    assert answer["passed"] is False and "parse_error" in answer["flags"], answer


def test_every_class_has_right_and_wrong_cases():
    assert {k for k, *_ in RIGHT} == {k for k, *_ in WRONG}


@pytest.mark.timeout(60)
def test_an_inequality_answer_too_big_to_solve_is_rejected_not_solved(kernel):
    # solving a degree-99 inequality could stall a worker until its deadline; it is not solved
    result = kernel((r"\boxed{x^{99} - 3x + 1 > 0}", "-793 < x < 10"))
    assert result["passed"] is False
    assert kernel((r"\boxed{x^2 < 4}", "-2 < x < 2"))["passed"] is True


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        (r"\boxed{\frac{a^n}{b^n}}", r"\left(\frac{a}{b}\right)^n"),
        (r"\boxed{\frac{(n-1)^n}{n^n}}", r"\left(1-\frac{1}{n}\right)^{n}"),
        (r"\boxed{\frac{a^{n+1}}{b^{n+1}}}", r"\left(\frac{a}{b}\right)^{n+1}"),
        (r"\boxed{a^n b^n}", r"(ab)^n"),
    ],
)
def test_a_power_of_a_quotient_is_decided_without_simplify(kernel, monkeypatch, response, gold):
    # simplify took a large part of the deadline on these (and then failed): the bounded fast
    # path decides them, so the verdict cannot depend on how busy the machine is
    import sympy

    def no_simplify(*args, **kwargs):
        raise AssertionError("simplify was called")

    monkeypatch.setattr(sympy, "simplify", no_simplify)
    kernel._gold.clear()
    assert kernel((response, gold))["passed"] is True
