"""A grader written outside truegrade, with only its public faces, gets the attacks, the audit
and a card that fit what it judges, with no edit to truegrade: its family says which."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

from truegrade.attacks import infer_kind, run_attacks
from truegrade.audit import audit_items
from truegrade.card import build_card
from truegrade.core import BaseGrader, Grade, Sample, SpecError, load_grader, register_grader
from truegrade.graders import GraderOptions, error_verdict, validate_options, verdict

_NUMBER = re.compile(r"-?\d+")


class LastNumberOptions(GraderOptions):
    """Its one option, validated as the built-in graders' are."""

    strict: bool = False


class LastNumber(BaseGrader):
    """The naive reward many recipes start with: the response's last number against the key."""

    kind = "last_number"
    family = "math"

    def __init__(self, options: LastNumberOptions) -> None:
        super().__init__()
        self.options = options

    def _grade_valid(self, samples: Sequence[Sample]) -> list[Grade]:
        grades = []
        for sample in samples:
            numbers = _NUMBER.findall(sample.response_text)
            if not str(sample.reference).lstrip("-").isdigit():
                grades.append(Grade(**error_verdict("the key is not a whole number")))
            else:
                ok = bool(numbers) and numbers[-1] == str(sample.reference)
                grades.append(Grade(**verdict(ok, "last number")))
        return grades


def _factory(options: dict[str, Any], base_dir: Any = None) -> LastNumber:
    return LastNumber(validate_options(LastNumberOptions, options))


class Unsaid(LastNumber):
    """The same grader, saying nothing of its family: its registration says it."""

    family = None


ROWS = [
    {"id": i, "prompt": f"What is {a} + {b}?", "reference": str(a + b), "response": f"{a + b}"}
    for i, (a, b) in enumerate([(2, 3), (10, 7), (40, 2), (8, 8), (6, 9), (12, 30)])
]


@pytest.fixture(scope="module")
def graders():
    register_grader("third_party_last_number", _factory)
    register_grader(
        "third_party_unsaid", lambda o, b=None: Unsaid(validate_options(LastNumberOptions, o))
    )
    register_grader(
        "third_party_said_at_registration",
        lambda o, b=None: Unsaid(validate_options(LastNumberOptions, o)),
        family="text",
    )
    yield {
        name: load_grader(f"third_party_{name}")
        for name in ("last_number", "unsaid", "said_at_registration")
    }
    from truegrade.core import _registry  # no public way to forget a grader: tests only

    for name in ("last_number", "unsaid", "said_at_registration"):
        _registry._registered.pop(f"third_party_{name}", None)
        _registry._families.pop(f"third_party_{name}", None)


def test_the_declared_family_picks_the_attacks_whatever_the_rows_suggest(graders):
    samples = [Sample.from_row(r) for r in ROWS]
    assert infer_kind(graders["last_number"], samples) == "math"
    # nothing declared: the short numeric keys suggest math; declared at registration: text
    assert infer_kind(graders["unsaid"], samples) == "math"
    assert infer_kind(graders["said_at_registration"], samples) == "text"
    long_keys = [s.model_copy(update={"reference": "x" * 100}) for s in samples]
    assert infer_kind(graders["unsaid"], long_keys) == "text"
    assert infer_kind(graders["last_number"], long_keys) == "math"


def test_its_hacks_are_found_and_its_items_audited_as_math(graders):
    grader = graders["last_number"]
    report = run_attacks(grader, ROWS)
    assert report.kind == "math"
    exploited = {r.name for r in report.attacks if r.exploited}
    assert {"hedge_boxes", "answer_then_garbage"} & exploited, exploited
    audit = audit_items(grader, ROWS, checks=["reference", "equivalents"])
    assert audit.kind == "math"
    assert audit.checks["equivalents"] == "ran"
    card = build_card(grader, ROWS, checks=["reference"], attacks=sorted(exploited)[:3])
    assert card.exploitability.kind == "math" and card.soundness is not None
    assert card.verdict.status == "unsafe"


def test_a_family_must_be_one_truegrade_knows(graders):
    with pytest.raises(SpecError, match="family 'prose'"):
        register_grader("third_party_bad", _factory, family="prose")
    with pytest.raises(SpecError, match="strict"):
        load_grader("third_party_last_number", strict="maybe")
