"""The attack engine: responses that are wrong by construction, thrown at a grader to find what
it rewards anyway.

``ATTACKS`` is the library (math answers, code hacks, free-text tricks), ``run_attacks`` grades
it (plus an optional adaptive search, optionally helped by an attacker LLM: ``AttackerLLM``)
against any grader and returns an ``AttackReport``.
"""

from truegrade.attacks._attacker import AttackerLLM
from truegrade.attacks._base import ATTACKS, KINDS, Attack, Candidate, attack, is_rewarded
from truegrade.attacks._library import UnknownAttack, attacks_for
from truegrade.attacks._programs import fenced, table_program
from truegrade.attacks._report import (
    AttackerSummary,
    AttackExample,
    AttackReport,
    AttackResult,
    Controls,
    Exploitability,
    SearchResult,
)
from truegrade.attacks._run import infer_kind, reference_response, run_attacks
from truegrade.attacks._text import quoted_phrases, reference_keywords

__all__ = [
    "ATTACKS",
    "KINDS",
    "Attack",
    "AttackExample",
    "AttackReport",
    "AttackResult",
    "AttackerLLM",
    "AttackerSummary",
    "Candidate",
    "Controls",
    "Exploitability",
    "SearchResult",
    "UnknownAttack",
    "attack",
    "attacks_for",
    "fenced",
    "infer_kind",
    "is_rewarded",
    "quoted_phrases",
    "reference_keywords",
    "reference_response",
    "run_attacks",
    "table_program",
]
