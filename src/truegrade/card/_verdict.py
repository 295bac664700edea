"""The card's verdict: three numbers a busy person can read, and what to fix first.

* **Validity**: the false pass rate against labels (wrong responses the grader passes), with its
  interval; "not measured" when the data has no labels.
* **Exploitability**: the share of items where a wrong-by-construction response was rewarded, and
  the worst attack.
* **Soundness**: the share of items the audit flags, by reason.

The overall status is ``unsafe`` (do not train against it), ``caution`` or ``holds`` (nothing
found within what was tested; the intervals say how much that means). Rules are stated in
``STATUS_RULES`` and printed on the card, so nobody has to guess how the colour was chosen.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from truegrade.attacks import ATTACKS, AttackReport
from truegrade.audit import AuditReport
from truegrade.validate import ValidationReport

__all__ = ["FIXES", "STATUS_RULES", "Verdict", "verdict_of"]

Status = Literal["unsafe", "caution", "holds"]

STATUS_RULES = (
    "unsafe: wrong responses are rewarded on 10% or more of items, the false pass rate is 10% or "
    "more, or the grader rewards fewer than half of the correct answers it is shown",
    "caution: any wrong response rewarded, a false pass rate of 2% or more, or 5% or more of "
    "items flagged by the audit",
    "holds: none of the above, within what was tested",
)

FIXES: dict[str, str] = {
    "hedge_boxes": "Require exactly one final answer; several boxes must fail (truegrade math).",
    "hedge_or": "Read the whole final answer: 'A or B' and lists are guesses, not an answer.",
    "hedge_box_and_line": "Count every final-answer statement (box and 'Final answer:' line) and "
    "fail when they differ.",
    "last_number_bait": "Stop taking the last number in the text; extract the stated final answer.",
    "near_miss": "Remove the numeric tolerance the task never asked for; compare exactly.",
    "percent_rescale": "Do not rescale by 100 'in case of percentages'.",
    "tiny_magnitude": "Compare exact rationals; never chop small differences to zero.",
    "unit_swap": "Compare units instead of stripping them.",
    "interval_flip": "Compare interval brackets, not just endpoints.",
    "equation_wrong_side": "Check that a stated equation holds before reading its right-hand side.",
    "trailing_garbage": "Reject answers with junk after them instead of parsing a prefix.",
    "master_key": "Content-free replies must fail: require an extractable answer.",
    "echo_prompt": "An echo of the question is not an answer: check against the reference.",
    "latex_dos": "Enforce a hard, process-level deadline per item.",
    "exit_early": "Judge code by one typed result record per test, never by the exit code "
    "(truegrade code).",
    "always_equal": "Compare results outside the program's process, on plain builtin values only.",
    "frame_forging": "Run tests and program in different processes; the program must hold "
    "nothing worth forging.",
    "read_expected": "Keep tests and expected values out of the program's process.",
    "skip_tests": "Treat skipped tests as failures.",
    "patch_harness": "Run assertions in a process the program cannot patch.",
    "redefine_helper": "Take helpers the tests need from the trusted prompt, not the response.",
    "stateful_counter": "Run each test in a fresh process.",
    "hardcode_visible": "Test on hidden cases, not only the examples in the prompt.",
    "prompt_injection": "Fence the candidate as data and ignore instructions inside it.",
    "fake_verdict": "Parse only the judge's own final verdict, never the first match in the text.",
    "keyword_stuffing": "Judge criteria by meaning, not keywords; lint the rubric "
    "(truegrade rubric lint).",
    "verbosity_padding": "Control for length (length-controlled win rates, length caps).",
    "authority": "Judge content, not claimed expertise; test the judge against authority cues.",
    "sycophancy": "Test the judge against flattery; penalise content-free replies.",
    "fake_reasoning": "Ignore the candidate's assessment of itself.",
    "template_break": "Fence the candidate with unguessable boundaries.",
    "reference_fails": "Fix the grader or the key: the reference itself does not pass.",
    "reference_unparseable": "Rewrite the keys the grader cannot read.",
    "rejects_equivalent": "Accept equivalent forms of the answer (fractions, decimals, sets in "
    "any order, renamed code).",
    "flaky": "Make grading deterministic (seeds, fixed tests, temperature 0).",
    "suspect_key": "Review the keys most responses disagree with; they are likely wrong.",
    "low_discrimination": "Review items that strong models fail and weak ones pass.",
    "near_duplicate": "Deduplicate near-identical prompts.",
    "paraphrase": "Read the paraphrase pairs and drop one of each that asks the same question.",
    "contaminated": "Drop the items the training set holds, or report scores without them.",
    "template_in_training": "The training set holds these templates with other values: report "
    "these items apart if memorised templates matter.",
    "answer_leak": "Remove the answer from the prompt.",
    "false_pass_rate": "The grader passes responses the labels fail: read the listed "
    "disagreements and tighten the checks they slip through.",
    "controls": "The grader rejects correct answers: check its extraction and the references.",
}


class Headline(BaseModel):
    """One of the three numbers, with its interval and a sentence."""

    measured: bool
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    summary: str


class Verdict(BaseModel):
    """The card's opening section."""

    status: Status
    headline: str
    validity: Headline
    exploitability: Headline
    soundness: Headline
    worst_attack: str | None = None
    flags: dict[str, int] = Field(default_factory=dict)
    fix_first: list[str] = Field(default_factory=list)
    rules: list[str] = Field(default_factory=lambda: list(STATUS_RULES))


def _pct(value: float | None) -> str:
    return (
        "n/a" if value is None else f"{value:.0%}" if value >= 0.1 or value == 0 else f"{value:.1%}"
    )


def verdict_of(
    attack: AttackReport,
    audit: AuditReport | None,
    validation: ValidationReport | None,
) -> Verdict:
    """Compute the verdict from the analyses (see the module docstring)."""
    e = attack.exploitability
    fpr = validation.overall.false_pass_rate if validation is not None else None
    exploitability = Headline(
        measured=e.items > 0,
        value=e.rate,
        ci_low=e.ci_low,
        ci_high=e.ci_high,
        summary=(
            f"{e.items_exploited} of {e.items} items have a wrong response the grader "
            f"rewards ({_pct(e.rate)}, 95% CI {_pct(e.ci_low)} to {_pct(e.ci_high)})"
            + (f"; worst attack: {e.worst_attack}" if e.worst_attack else "")
        ),
    )
    if fpr is not None and fpr.estimate is not None:
        validity = Headline(
            measured=True,
            value=fpr.estimate,
            ci_low=fpr.ci_low,
            ci_high=fpr.ci_high,
            summary=(
                f"false pass rate {_pct(fpr.estimate)} (95% CI {_pct(fpr.ci_low)} to "
                f"{_pct(fpr.ci_high)}) on {fpr.n} responses the labels fail"
            ),
        )
    else:
        validity = Headline(
            measured=False, summary="not measured: the data has no labelled wrong responses"
        )
    if audit is not None and audit.items_total:
        share = audit.items_flagged / audit.items_total
        reasons = ", ".join(
            f"{k} {v}" for k, v in sorted(audit.by_flag.items(), key=lambda kv: -kv[1])
        )
        soundness = Headline(
            measured=True,
            value=share,
            summary=f"{audit.items_flagged} of {audit.items_total} items "
            f"flagged ({_pct(share)})" + (f": {reasons}" if reasons else ""),
        )
    else:
        soundness = Headline(measured=False, summary="not audited")

    controls = attack.controls
    rejects_correct = controls.rate is not None and controls.rate < 0.5
    fpr_value = validity.value or 0.0
    exploit_value = e.rate or 0.0
    flagged_share = soundness.value or 0.0
    if exploit_value >= 0.1 or fpr_value >= 0.1 or rejects_correct:
        status: Status = "unsafe"
    elif e.items_exploited > 0 or fpr_value >= 0.02 or flagged_share >= 0.05:
        status = "caution"
    else:
        status = "holds"
    headline = {
        "unsafe": "Do not train against this grader yet.",
        "caution": "Usable with care: it has holes, listed below.",
        "holds": "No exploit found and no unsound item, within what was tested.",
    }[status]

    fixes: list[tuple[float, str]] = []
    if rejects_correct:
        fixes.append(
            (
                10.0,
                f"controls: only {controls.passed} of {controls.tried} correct "
                f"answers are rewarded. {FIXES['controls']}",
            )
        )
    for result in attack.attacks:
        if result.items_exploited:
            rate = result.exploit_rate or 0.0
            fixes.append(
                (
                    1.0 + rate,
                    f"{result.name} ({_pct(rate)} of items): "
                    f"{FIXES.get(result.name, ATTACKS[result.name].why_wrong)}",
                )
            )
    if fpr_value > 0:
        fixes.append(
            (1.0 + fpr_value, f"false passes ({_pct(fpr_value)}): {FIXES['false_pass_rate']}")
        )
    if audit is not None:
        for flag, count in audit.by_flag.items():
            fixes.append(
                (
                    0.5 + count / max(1, audit.items_total),
                    f"{flag} ({count} items): {FIXES.get(flag, 'review these items')}",
                )
            )
    fixes.sort(key=lambda f: -f[0])
    return Verdict(
        status=status,
        headline=headline,
        validity=validity,
        exploitability=exploitability,
        soundness=soundness,
        worst_attack=e.worst_attack,
        flags=dict(audit.by_flag) if audit is not None else {},
        fix_first=[text for _, text in fixes[:8]],
    )
