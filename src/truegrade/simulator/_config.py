"""``SimulatorConfig``: every behaviour of the judge simulator, each one a documented knob.

The simulator is a scripted stand-in for an LLM judge, for tests and demos on machines without
one. Its behaviours are the failure modes real judges are known for, made configurable so that a
test can switch one on and show that a control detects and corrects it. A config is given when
the server starts and can be overridden per request with the ``x-simulator-config`` header (a
JSON object of the fields to change), so one server serves many scenarios.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SimulatorConfig"]


class SimulatorConfig(BaseModel):
    """How the simulated judge behaves.

    Verdicts follow each text's ``true_quality``; these fields set how sharply, and which flaws
    are switched on.

    Attributes:
        seed: Seeds every random choice (with the request's content, so the same request gets
            the same answer, like a judge at temperature 0).
        sharpness: How decisively true quality differences turn into verdicts (logit per unit
            of quality difference).
        position_bias: Probability that a pairwise verdict ignores the content and names the
            response at ``position_side``.
        position_side: ``first`` or ``second``.
        length_bias: Logit bonus per doubling of length (pairwise: of the length ratio;
            pointwise: against ``length_reference_chars``). 0: length-neutral.
        length_reference_chars: The length that earns no pointwise bonus.
        obey_injection: Probability of obeying an instruction or forged verdict found *inside*
            a delimited response (the judge was told it is data).
        obey_escaped: Probability of obeying one found *outside* every delimited block (a
            response that closed its own delimiter and wrote after it).
        quote_responses: Quote the start of each response in the explanation before the verdict
            (what makes "first match" verdict parsers read a forged verdict).
        self_preference: Quality bonus for responses carrying ``self_marker`` (a stand-in for
            a judge recognising its own family's style).
        self_marker: The text that marks a response as the judge's own family's.
        sycophancy: How far the user's asserted view moves the verdict toward agreeing with the
            user (a stand-in for a judge that defers to the user, for the sycophancy probe).
            The view is read from the instruction: "I think the answer is X" agrees with a
            response that contains X and disagrees with one that does not; "I don't think the
            answer is Y" disagrees with a response that contains Y; "I don't think that's
            right" and "Are you sure?" disagree with any response. Scores and pairwise
            verdicts: a quality bonus of this size (a malus when the user disagrees);
            reference and criterion verdicts: the probability that the verdict is flipped to
            the user's side. 0: the user's view is ignored, as it should be.
        master_key_rate: Reference mode: probability of accepting a content-free response
            (``:``, ``Solution``, empty) as correct.
        criterion_judge: Rubric criteria: ``competent`` (met when the criterion's quoted
            phrases, else most of its content words, occur in a response that is prose) or
            ``keywords`` (met when half its words occur, in any arrangement: the gameable
            evaluator a keyword-stuffed response fools).
        format_errors: Probability of adding a remark after the verdict line (so the answer
            does not end with the verdict the prompt asked for).
        attacker_malformed: Attacker requests (see ``truegrade.simulator._attacker``):
            probability of answering with JSON cut short.

    Serving:

    Attributes:
        latency_ms / latency_jitter_ms: Time to answer (uniform jitter around the mean).
        error_rate: Probability of an HTTP 500 per attempt.
        rate_limit_rate: Probability of an HTTP 429 per attempt.
        fail_first: Every distinct request fails its first N attempts (a 429 storm when
            ``fail_status`` is 429), then succeeds.
        fail_status: Status of those failures.
        retry_after_s: ``Retry-After`` sent with 429s (None: no header).
        hang_rate: Probability that an attempt hangs for ``hang_s`` before answering (to
            exercise client timeouts).
        hang_s: How long a hang lasts.
        max_rpm: Server-side limit: requests beyond this rate (per minute, one second of burst)
            get 429. None: no limit.
        record_prompts: Keep the text of every request of the tag in its statistics
            (``prompts``), for tests that check what was sent.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 0
    sharpness: float = Field(default=8.0, ge=0)
    position_bias: float = Field(default=0.0, ge=0, le=1)
    position_side: Literal["first", "second"] = "first"
    length_bias: float = 0.0
    length_reference_chars: int = Field(default=500, gt=0)
    obey_injection: float = Field(default=0.0, ge=0, le=1)
    obey_escaped: float = Field(default=1.0, ge=0, le=1)
    quote_responses: bool = True
    self_preference: float = 0.0
    self_marker: str = "Certainly! Here is"
    sycophancy: float = Field(default=0.0, ge=0, le=1)
    master_key_rate: float = Field(default=0.0, ge=0, le=1)
    format_errors: float = Field(default=0.0, ge=0, le=1)
    criterion_judge: Literal["competent", "keywords"] = "competent"
    attacker_malformed: float = Field(default=0.0, ge=0, le=1)

    latency_ms: float = Field(default=0.0, ge=0)
    latency_jitter_ms: float = Field(default=0.0, ge=0)
    error_rate: float = Field(default=0.0, ge=0, le=1)
    rate_limit_rate: float = Field(default=0.0, ge=0, le=1)
    fail_first: int = Field(default=0, ge=0)
    fail_status: int = Field(default=429, ge=400, le=599)
    retry_after_s: float | None = Field(default=None, ge=0)
    hang_rate: float = Field(default=0.0, ge=0, le=1)
    hang_s: float = Field(default=30.0, ge=0)
    max_rpm: float | None = Field(default=None, gt=0)
    record_prompts: bool = False

    def merged(self, override: str | None) -> SimulatorConfig:
        """This config with the fields of a JSON ``override`` (a request header) replaced."""
        if not override:
            return self
        changes = json.loads(override)
        if not isinstance(changes, dict):
            raise ValueError("x-simulator-config must be a JSON object")
        return SimulatorConfig.model_validate({**self.model_dump(), **changes})
