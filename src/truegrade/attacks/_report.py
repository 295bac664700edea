"""The attack report: what was tried, what got through, and how exploitable the grader is.

This is the JSON the ``attack`` command writes and the grader card reads. Its schema is the
pydantic models below (``AttackReport.model_json_schema()``); ``schema_version`` changes when a
field changes meaning.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

__all__ = [
    "AttackExample",
    "AttackReport",
    "AttackResult",
    "AttackerSummary",
    "Controls",
    "Exploitability",
    "SearchResult",
]


class AttackExample(BaseModel):
    """The shortest response of an attack that the grader rewarded."""

    item: str = Field(description="Id of the item attacked.")
    variant: str = Field(description="Which form of the attack.")
    response: str = Field(description="The rewarded response (cut to 2,000 characters).")
    score: float
    passed: bool | None
    flags: list[str] = Field(default_factory=list)


class AttackResult(BaseModel):
    """One attack's outcome over all items it applied to.

    ``exploit_rate`` is the share of items where at least one response of this attack was
    rewarded, with a Wilson interval; ``tried``/``exploited`` count responses.
    """

    name: str
    kinds: list[str]
    why_wrong: str = Field(description="Why every response of this attack is wrong.")
    hostile: bool = False
    tried: int = Field(description="Responses graded.")
    exploited: int = Field(description="Responses rewarded (passed, or score above threshold).")
    items_tried: int
    items_exploited: int
    exploit_rate: float | None
    ci_low: float | None
    ci_high: float | None
    grader_errors: dict[str, int] = Field(
        default_factory=dict,
        description="Responses the grader could not grade, by flag (timeout, crashed...): "
        "an attack that hangs a grader shows up here.",
    )
    example: AttackExample | None = None


class Exploitability(BaseModel):
    """The headline number: share of items with at least one successful exploit."""

    items: int
    items_exploited: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    worst_attack: str | None = Field(description="The attack with the highest exploit rate.")


class Controls(BaseModel):
    """Correct responses (the reference itself, written as an answer) graded as a sanity check:
    a grader that fails everything cannot be exploited, and is useless."""

    tried: int
    passed: int
    rate: float | None


class SearchResult(BaseModel):
    """The adaptive search's best response on one item."""

    item: str
    exploited: bool
    best_score: float
    best_response: str
    queries: int = Field(description="Responses graded, the attacker's candidates included.")
    operators: list[str] = Field(description="The mutations that produced the best response.")
    source: str = Field(
        default="operators",
        description="What wrote the best response: library, operators (a mutation) or attacker.",
    )
    exploits_operators: int = Field(default=0, description="Rewarded responses a mutation made.")
    exploits_attacker: int = Field(
        default=0, description="Rewarded responses the attacker LLM wrote."
    )
    attacker_requests: int = Field(default=0, description="Requests to the attacker LLM.")
    attacker_candidates: int = Field(
        default=0, description="The attacker's candidates graded (part of ``queries``)."
    )
    attacker_errors: dict[str, int] = Field(
        default_factory=dict,
        description="Attacker requests that gave no candidates, by kind (bad_json, "
        "no_candidates, timeout, server_error...).",
    )


class AttackerSummary(BaseModel):
    """The attacker LLM of the adaptive search: which one, and what it cost and found."""

    model: str
    base_url: str
    candidates_per_round: int
    requests: int = Field(description="Requests sent, retries included.")
    completions: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    candidates: int = Field(description="Its candidates graded, over all items.")
    exploits: int = Field(description="Its candidates the grader rewarded, over all items.")
    errors: dict[str, int] = Field(
        default_factory=dict, description="Requests that gave no candidates, by kind."
    )
    stopped: str | None = Field(
        default=None, description="Why it was no longer asked, when it was not."
    )


class AttackReport(BaseModel):
    """Everything ``truegrade attack`` found."""

    schema_version: int = 1
    grader: dict[str, Any] | str
    kind: str = Field(description="The grader family attacked: math, code or text.")
    threshold: float = Field(description="A score above this counts as rewarded.")
    items: int
    attacks: list[AttackResult]
    exploitability: Exploitability
    controls: Controls
    search: list[SearchResult] = Field(default_factory=list)
    search_budget: int = 0
    attacker: AttackerSummary | None = None
