"""Building a grader card: every analysis truegrade has, run on one grader and one dataset.

The card runs, through the ``Grader`` contract only:

* validation against labels, when rows carry a ``label`` and a response, or pairwise agreement
  when they are preference rows (``chosen`` and ``rejected``);
* the attack library (and the adaptive search when given a budget) on the distinct items;
* the item audit on all rows (responses sharing a ``group`` are one item's responses);
* the best-of-n overoptimization analysis, when proxy and gold score columns are named.

and puts the results, and the verdict drawn from them, in one ``Card``.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from truegrade.attacks import AttackerLLM, AttackReport, run_attacks
from truegrade.audit import CHECKS, AuditReport, audit_items
from truegrade.bench import machine
from truegrade.card._verdict import Verdict, verdict_of
from truegrade.core import Grader, Sample, SampleLike, distinct_items, run_grader, to_samples
from truegrade.judge import EndpointConfig
from truegrade.validate import (
    PairwiseReport,
    ValidationReport,
    is_preference_row,
    validate_grades,
    validate_pairwise,
)

__all__ = ["Card", "build_card"]


class Card(BaseModel):
    """Everything on a grader card (the JSON behind the HTML and Markdown)."""

    schema_version: int = 1
    title: str
    grader: dict[str, Any] | str
    data: str
    created: str
    rows: int
    verdict: Verdict
    validity: ValidationReport | None = None
    pairwise: PairwiseReport | None = Field(
        None, description="Agreement with preference labels, when the rows are pairs."
    )
    exploitability: AttackReport
    soundness: AuditReport | None = None
    overoptimization: dict[str, Any] | None = None
    machine: dict[str, Any] = Field(default_factory=machine)
    seconds: dict[str, float] = Field(default_factory=dict, description="Time each analysis took.")


def _title(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    if spec.get("type") == "python" and spec.get("path"):
        return f"{str(spec['path']).rsplit('/', 1)[-1]}:{spec.get('function')}"
    return str(spec.get("type", "grader"))


def _column(sample: Sample, path: str) -> float:
    from truegrade.data import get_field

    value = get_field(sample.model_dump(), path)
    if value is None:
        value = get_field(sample.metadata, path)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"row {sample.key}: column {path!r} is not a number ({value!r})")
    return float(value)


#: Column pairs the card finds by itself: rows that carry both get an overoptimization section.
PROXY_GOLD_COLUMNS = (
    ("metadata.proxy", "metadata.gold"),
    ("metadata.proxy_score", "metadata.gold_score"),
)


def _proxy_and_gold(rows: Sequence[Sample]) -> tuple[str | None, str | None]:
    """The first of ``PROXY_GOLD_COLUMNS`` that every row holds as numbers (None, None if none)."""
    for proxy, gold in PROXY_GOLD_COLUMNS:
        keys = (proxy.removeprefix("metadata."), gold.removeprefix("metadata."))
        if rows and all(
            isinstance(r.metadata.get(k), (int, float)) and not isinstance(r.metadata.get(k), bool)
            for r in rows
            for k in keys
        ):
            return proxy, gold
    return None, None


def build_card(
    grader: Grader,
    samples: Sequence[SampleLike],
    *,
    title: str = "",
    data_name: str = "",
    kind: str | None = None,
    attacks: Sequence[str] | None = None,
    hostile: bool = False,
    unsafe_hostile: bool = False,
    budget: int = 0,
    threshold: float = 0.5,
    checks: Sequence[str] = CHECKS,
    reruns: int = 2,
    labels: bool = True,
    proxy: str | None = None,
    gold: str | None = None,
    oracle: Grader | None = None,
    attacker: AttackerLLM | EndpointConfig | Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Card:
    """Run every applicable analysis and compute the verdict (see the module docstring).

    Args:
        grader: The grader the card is about.
        samples: The rows: prompts and references; responses and labels where available.
        title: The card's title (default: the grader spec).
        data_name: Where the rows came from, for the record.
        kind: Attack family (``math``, ``code``, ``text``, ``instructions``); inferred when None.
        attacks: Attack names (default: every non-hostile one for the kind).
        hostile: Also run denial-of-service, escape and file-tampering attacks.
        unsafe_hostile: Run hostile code attacks even against a grader that does not sandbox
            programs (see :func:`truegrade.attacks.run_attacks`).
        budget: Adaptive-search queries per item.
        threshold: A score above it counts as a pass when a grade has no verdict.
        checks: Audit checks to run.
        reruns: Gradings per response in the audit's flakiness check.
        labels: Validate against labels when rows have them.
        proxy: The proxy score column for the overoptimization analysis (a dotted path
            allowed). Neither ``proxy`` nor ``gold`` given: ``metadata.proxy`` /
            ``metadata.gold`` (or ``proxy_score`` / ``gold_score``) when every row has them as
            numbers.
        gold: The gold score column, as for ``proxy``.
        oracle: The grader that knows right from wrong, for the adaptive search.
        attacker: An attacker LLM the adaptive search asks for candidates (see
            :func:`truegrade.attacks.run_attacks`); needs a budget.
        progress: Told which analysis is running.
    """
    rows = to_samples(samples)
    spec = getattr(grader, "spec", None) or repr(grader)
    say = progress or (lambda _msg: None)
    seconds: dict[str, float] = {}

    validation = None
    labelled = [r for r in rows if r.label is not None and r.response is not None]
    if labels and labelled:
        say(f"validating against {len(labelled)} labels")
        start = time.perf_counter()
        grades = run_grader(grader, labelled)
        validation = validate_grades(labelled, grades, grader=spec, threshold=threshold)
        seconds["validity"] = time.perf_counter() - start
    pairwise = None
    preferences = [r for r in rows if is_preference_row(r)]
    if labels and not labelled and preferences:
        say(f"measuring agreement on {len(preferences)} preference pairs")
        start = time.perf_counter()
        pairwise = validate_pairwise(grader, preferences)
        seconds["validity"] = time.perf_counter() - start

    items = distinct_items(rows)
    say(f"attacking {len(items)} items")
    start = time.perf_counter()
    attack = run_attacks(
        grader,
        items,
        kind=kind,
        attacks=attacks,
        hostile=hostile,
        unsafe_hostile=unsafe_hostile,
        threshold=threshold,
        budget=budget,
        oracle=oracle,
        attacker=attacker,
    )
    seconds["exploitability"] = time.perf_counter() - start

    audit = None
    if checks:
        say(f"auditing {len(items)} items")
        start = time.perf_counter()
        audit = audit_items(
            grader, rows, kind=attack.kind, checks=checks, reruns=reruns, threshold=threshold
        )
        seconds["soundness"] = time.perf_counter() - start

    overopt = None
    if proxy is None and gold is None:
        proxy, gold = _proxy_and_gold(rows)
    if proxy and gold:
        from truegrade.goodhart import overoptimization

        say("measuring overoptimization")
        start = time.perf_counter()
        groups = [r.item for r in rows]
        result = overoptimization(
            [_column(r, proxy) for r in rows], [_column(r, gold) for r in rows], groups
        )
        overopt = result.to_dict()
        seconds["overoptimization"] = time.perf_counter() - start

    return Card(
        title=title or _title(spec),
        grader=spec,
        data=data_name,
        created=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        rows=len(rows),
        verdict=verdict_of(attack, audit, validation),
        validity=validation,
        pairwise=pairwise,
        exploitability=attack,
        soundness=audit,
        overoptimization=overopt,
        seconds={k: round(v, 2) for k, v in seconds.items()},
    )
