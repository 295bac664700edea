"""The rubric linter on planted bad criteria, with the judge simulator as the evaluator."""

from __future__ import annotations

import pytest

from tests.simulator.fixtures import endpoint
from truegrade.core import Sample, load_grader
from truegrade.graders.rubric import parse_rubric
from truegrade.rubric import RubricSource, lint_rubrics
from truegrade.rubric._lint import keyword_response

PLANTED = [
    # 0: asks only for a mention: a response that is the word meets it
    {"criterion": 'Mentions "ibuprofen".', "points": 2, "tags": ["axis:accuracy"]},
    # 1: vague: nothing checkable
    {"criterion": "Is helpful, clear and accurate.", "points": 3},
    # 2: a good criterion
    {
        "criterion": 'Advises resting the ankle "for two days" before walking on it.',
        "points": 4,
        "tags": ["axis:safety"],
    },
    # 3: the same again, reworded only in case and punctuation
    {
        "criterion": 'advises resting the ankle "for two days" before walking on it',
        "points": 4,
        "tags": ["axis:safety"],
    },
    # 4: a good criterion
    {
        "criterion": 'Recommends ice "wrapped in a cloth" for twenty minutes at a time.',
        "points": 3,
        "tags": ["axis:completeness"],
    },
    # 5: a keyword check: a bag of words passes it whatever the judge
    {
        "criterion": "Talks about swelling",
        "points": 2,
        "check": {"type": "contains", "any": ["swelling"]},
    },
    # 6: overlapping with 4 (most content words shared)
    {
        "criterion": 'Recommends ice "wrapped in a cloth" for twenty minutes each time.',
        "points": 2,
    },
]


def grader_for(sim, **behaviour):
    return load_grader("rubric", judge=endpoint(sim, **behaviour), cache=None)


def source():
    return RubricSource("sprain", parse_rubric(PLANTED), prompt="I twisted my ankle. What now?")


def by_criterion(report):
    out: dict[int | None, set[str]] = {}
    for f in report.findings:
        out.setdefault(f.criterion, set()).add(f.code)
    return out


def test_planted_bad_criteria_are_found_and_good_ones_left_alone(simulator):
    report = lint_rubrics([source()], grader=grader_for(simulator))
    found = by_criterion(report)
    assert found[0] == {"keyword_gameable"}
    assert found[1] == {"vague"}
    assert found[3] == {"duplicate"}
    assert found[5] == {"keyword_gameable"}
    assert found[6] == {"overlapping"}
    assert 2 not in found and 4 not in found
    # the rubric is about an injury (axis:safety) and no criterion costs points
    assert found[None] == {"no_negative_criteria"}
    assert report.probes == len(PLANTED)
    gameable = next(f for f in report.findings if f.code == "keyword_gameable")
    assert "judge:" in gameable.reason and "earns its points" in gameable.reason


def test_a_keyword_counting_evaluator_makes_every_criterion_gameable(simulator):
    report = lint_rubrics([source()], grader=grader_for(simulator, criterion_judge="keywords"))
    gameable = {f.criterion for f in report.findings if f.code == "keyword_gameable"}
    assert gameable == set(range(len(PLANTED)))


def test_without_a_judge_only_programmatic_checks_are_probed():
    report = lint_rubrics([source()])
    assert report.probes == 1
    assert {f.criterion for f in report.findings if f.code == "keyword_gameable"} == {5}


def test_points_imbalance_and_negative_criteria():
    rubric = parse_rubric(
        [
            {"criterion": 'Says "call emergency services"', "points": 9, "tags": ["health"]},
            {"criterion": 'Says to "stay with the person"', "points": 1},
            {"criterion": 'Suggests "driving them yourself"', "points": -5},
        ]
    )
    report = lint_rubrics([RubricSource("r", rubric)])
    assert by_criterion(report) == {0: {"points_imbalance"}}  # has a negative criterion
    no_harm_tags = lint_rubrics([RubricSource("r", rubric)], harm_tags=["finance"])
    assert "no_negative_criteria" not in no_harm_tags.codes()


def test_exemplars_show_criteria_never_and_always_met(simulator):
    responses = [
        "Rest the ankle for two days before walking on it, and keep it raised.",
        "You should rest it for two days before walking on it; ibuprofen can help.",
        "Rest the ankle for two days before walking on it and watch the swelling.",
    ]
    exemplars = [Sample(id=k, prompt="Ankle?", response=r) for k, r in enumerate(responses)]
    report = lint_rubrics([source()], grader=grader_for(simulator), exemplars=exemplars)
    found = by_criterion(report)
    assert "always_met" in found[2] and "always_met" in found[3]
    assert "never_met" in found[4]
    assert not {"never_met", "always_met"} & found.get(0, set())  # met once in three
    criteria = len(source().rubric.items)
    assert (report.exemplar_checked, report.exemplar_skipped) == (criteria, {})
    fewer = lint_rubrics([source()], grader=grader_for(simulator), exemplars=exemplars[:2])
    assert not {"never_met", "always_met"} & fewer.codes()  # under min_exemplars...
    assert fewer.exemplar_checked == 0  # ...and said so, not skipped in silence
    assert fewer.exemplar_skipped == {"fewer than 3 exemplar verdicts": criteria}
    two = lint_rubrics(
        [source()], grader=grader_for(simulator), exemplars=exemplars[:2], min_exemplars=2
    )
    assert two.exemplar_checked == criteria and "always_met" in by_criterion(two)[2]


def test_the_probe_is_keywords_without_sentences():
    item = parse_rubric(PLANTED).items[4]
    probe = keyword_response(item)
    assert probe.startswith("wrapped in a cloth")
    assert "recommends" not in probe.lower() and "." not in probe


@pytest.mark.parametrize("code", ["keyword_gameable", "vague", "duplicate"])
def test_the_report_serialises_with_reasons(simulator, code):
    doc = lint_rubrics([source()], grader=grader_for(simulator)).to_dict()
    entries = [f for f in doc["findings"] if f["code"] == code]
    assert entries and all(f["reason"] and f["rubric"] == "sprain" for f in entries)
    assert doc["counts"][code] == len(entries)
