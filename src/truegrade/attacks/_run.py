"""Running the attack library (and the adaptive search) against any grader.

The runner only ever calls the grader through ``run_grader``: a user's reward function, a
composed spec and a built-in grader are attacked the same way. Attack responses are graded in
batches (through the engine, for graders that use it), and a response that hangs or crashes the
grader is recorded as such, never lost. Attack metadata is kept on the runner's side: the grader
sees exactly what a model's response would look like.
"""

from __future__ import annotations

import ast
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from truegrade.attacks._attacker import AttackerLLM, AttackerSession
from truegrade.attacks._base import KINDS, Attack, is_rewarded, reference_text
from truegrade.attacks._library import attacks_for
from truegrade.attacks._programs import fenced
from truegrade.attacks._report import (
    AttackerSummary,
    AttackExample,
    AttackReport,
    AttackResult,
    Controls,
    Exploitability,
    SearchResult,
)
from truegrade.attacks._search import adaptive_search, search_oracle
from truegrade.core import (
    Grade,
    Grader,
    Sample,
    SampleLike,
    distinct_items,
    gsm8k_final_answer,
    run_grader,
    to_samples,
)
from truegrade.graders.code import reference_solution, stdio_task
from truegrade.judge import EndpointConfig
from truegrade.stats import wilson_interval

__all__ = ["infer_kind", "is_rewarded", "reference_response", "run_attacks"]


def infer_kind(grader: Grader, samples: Sequence[Sample]) -> str:
    """Which attack family fits: the one the grader (or the first of its parts that says)
    declares (``BaseGrader.family``), else the one the references suggest."""
    from truegrade.graders import walk

    for node in walk(grader):
        # a grader running elsewhere (the Ray backend) says what it wraps
        family = getattr(node, "inner_family", None) or getattr(node, "family", None)
        if family in KINDS:
            return str(family)
    for sample in samples[:50]:
        ref: Any = sample.reference
        if "instruction_id_list" in sample.metadata or (
            isinstance(ref, dict) and "instruction_id_list" in ref
        ):
            return "instructions"
        if isinstance(ref, dict) and ({"entry_point", "cases", "stdio", "check"} & set(ref)):
            return "code"
        if isinstance(ref, (dict, list)):
            return "text"
        if isinstance(ref, (int, float)) or (isinstance(ref, str) and len(ref) <= 80):
            return "math"
    return "text"


def _entry_point(reference: Any) -> str | None:
    name = reference.get("entry_point") if isinstance(reference, Mapping) else None
    return name if isinstance(name, str) else None


def _defines(program: str, name: str | None) -> bool:
    """Whether ``program`` defines the function ``name`` at its top level."""
    if not name:
        return False
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def _states_its_answer(text: str) -> bool:
    """Whether a key is a worked solution that states its answer (a box, GSM8K's ``####``
    line): boxing it again would make a different, nested answer."""
    return "\\boxed" in text or "\\fbox" in text or gsm8k_final_answer(text) is not None


def reference_response(sample: Sample, kind: str) -> str | None:
    """The item's own reference written as a response (a control any sound grader passes):
    ``\\boxed{gold}`` for answers (a worked solution that states its answer as it is), the
    canonical solution for code (after the prompt when it does not define the function itself,
    as HumanEval's), the reference text or, for rubrics and instruction-following items, the
    item's ideal answer (``metadata.ideal``)."""
    gold = reference_text(sample)
    if kind == "math":
        if gold and _states_its_answer(gold):
            return gold  # a worked solution: read as a response as the grader reads it as a key
        return f"The answer is \\boxed{{{gold}}}." if gold else None
    if kind == "code":
        task = stdio_task(sample)
        if task is not None:  # a whole program, in the task's language
            program = reference_solution(sample.metadata, task.language)
            return fenced(task.language, program) if program else None
        solution = sample.metadata.get("canonical_solution")
        if not isinstance(solution, str):
            return None
        if _defines(solution, _entry_point(sample.reference)):
            return f"```python\n{solution}\n```"  # MBPP's programs stand alone
        return f"```python\n{sample.prompt_text}{solution}\n```"
    if kind == "repo":  # the task's gold patch
        gold_patch = sample.metadata.get("patch")
        return gold_patch if isinstance(gold_patch, str) and gold_patch.strip() else None
    ideal = sample.metadata.get("ideal")
    if isinstance(ideal, str) and ideal.strip():
        return ideal
    return gold if isinstance(sample.reference, str) and gold else None


@dataclass
class _Tried:
    item: str
    attack: str
    variant: str
    response: str


def run_attacks(
    grader: Grader,
    samples: Sequence[SampleLike],
    *,
    kind: str | None = None,
    attacks: Sequence[str] | None = None,
    hostile: bool = False,
    threshold: float = 0.5,
    budget: int = 0,
    seed: int = 0,
    batch_size: int = 512,
    oracle: Grader | None = None,
    attacker: AttackerLLM | EndpointConfig | Mapping[str, Any] | None = None,
    unsafe_hostile: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> AttackReport:
    """Attack ``grader`` on ``samples`` and report how exploitable it is.

    Args:
        grader: Any grader (``grade_batch``).
        samples: Items to attack (prompt and reference; any response is ignored; rows sharing a
            ``group`` are one item).
        kind: ``math``, ``code``, ``text`` or ``instructions``; inferred when None.
        attacks: Attack names to run (default: every non-hostile attack for ``kind``).
        hostile: Also run attacks built to hang or escape (denial of service, fork bombs).
        threshold: A score above it counts as rewarded (a pass always does).
        budget: Adaptive-search queries per item after the library (0: no search).
        seed: Seeds every random choice, so a run can be repeated exactly.
        batch_size: Responses per call to the grader.
        oracle: A grader that knows right from wrong (the hardened ``math`` or ``code``), used by
            the search to keep only responses that are still wrong.
        attacker: An attacker LLM the search asks for new candidates each generation (an
            ``AttackerLLM``, an ``EndpointConfig`` or a dict of their fields); needs a budget,
            and an oracle for items other than math.
        unsafe_hostile: Run the hostile code attacks against a grader that does not run
            programs in truegrade's sandbox (they fork-bomb, escape and rewrite files wherever
            that grader runs them: only on a throwaway machine).
        progress: Called as ``(graded, total)`` after each batch.

    Raises:
        UnknownAttack: an unknown attack name (a ``KeyError`` too).
        ValueError: an attacker without a budget, or without an oracle; hostile code attacks
            against a grader that does not sandbox programs (without ``unsafe_hostile``).

    Examples:
        >>> report = run_attacks(load_grader("naive.py:reward"), rows)  # doctest: +SKIP
        >>> report.exploitability.rate  # doctest: +SKIP
        0.92
    """
    # an item is a prompt with its reference: rows that share one (a prompt's rollouts) are
    # attacked once, and counted once, as the audit and the card count them
    items = [s.model_copy(update={"response": None}) for s in distinct_items(to_samples(samples))]
    the_kind = kind or infer_kind(grader, items)
    session = None
    if attacker is not None:
        # checked before anything is graded: these mistakes should cost nothing
        if budget <= 0:
            raise ValueError("an attacker LLM joins the adaptive search: give it a budget > 0")
        oracle = search_oracle(the_kind, oracle, attacker=True)
        session = AttackerSession(AttackerLLM.coerce(attacker), threshold=threshold)
    chosen = attacks_for(the_kind, attacks)
    if attacks is None and not hostile:
        chosen = [a for a in chosen if not a.hostile]
    running = [a.name for a in chosen if a.hostile and "code" in a.kinds]
    from truegrade.graders.code import runs_programs_sandboxed  # the sandbox, only when asked

    if running and not unsafe_hostile and not runs_programs_sandboxed(grader):
        raise ValueError(
            f"the hostile code attacks ({', '.join(running)}) are programs that exhaust, escape "
            "or rewrite files where they run, and this grader does not run programs in "
            "truegrade's sandbox: run them against `code`, or only on a throwaway machine with "
            "unsafe_hostile (on the command line: --unsafe-hostile)"
        )
    rng = random.Random(seed)
    tried: list[_Tried] = []
    queue: list[Sample] = []
    controls: list[Sample] = []
    for item in items:
        for spec in chosen:
            for k, candidate in enumerate(spec.candidates(item, rng)):
                tried.append(_Tried(item.key, spec.name, candidate.variant, candidate.response))
                queue.append(
                    item.model_copy(
                        update={
                            "id": f"{item.key}::{spec.name}::{k}",
                            "response": candidate.response,
                            "label": None,
                            "group": item.key,
                        }
                    )
                )
        control = reference_response(item, the_kind)
        if control is not None:
            controls.append(
                item.model_copy(
                    update={"id": f"{item.key}::control", "response": control, "label": None}
                )
            )
    everything = queue + controls
    grades: list[Grade] = []
    for start in range(0, len(everything), batch_size):
        grades.extend(run_grader(grader, everything[start : start + batch_size]))
        if progress is not None:
            progress(len(grades), len(everything))
    attack_grades, control_grades = grades[: len(queue)], grades[len(queue) :]
    results = [_summarize(spec, tried, attack_grades, threshold) for spec in chosen]
    exploited_items = {
        t.item for t, g in zip(tried, attack_grades, strict=True) if is_rewarded(g, threshold)
    }
    search: list[SearchResult] = []
    if budget > 0:
        search = adaptive_search(
            grader,
            items,
            tried,
            attack_grades,
            kind=the_kind,
            budget=budget,
            threshold=threshold,
            rng=rng,
            oracle=oracle,
            batch_size=batch_size,
            attacker=session,
        )
        exploited_items |= {s.item for s in search if s.exploited}
    attacked_items = {t.item for t in tried}
    n_items = len(attacked_items) if attacked_items else len(items)
    overall = wilson_interval(len(exploited_items), n_items) if n_items else None
    rated = [r for r in results if r.exploit_rate is not None]
    worst = max(rated, key=lambda r: (r.exploit_rate or 0, r.exploited)).name if rated else None
    if worst is not None and not any((r.exploit_rate or 0) > 0 for r in rated):
        worst = None
    passed_controls = sum(1 for g in control_grades if is_rewarded(g, threshold))
    return AttackReport(
        grader=getattr(grader, "spec", None) or repr(grader),
        kind=the_kind,
        threshold=threshold,
        items=len(items),
        attacks=results,
        exploitability=Exploitability(
            items=n_items,
            items_exploited=len(exploited_items),
            rate=None if overall is None else overall.estimate,
            ci_low=None if overall is None else overall.ci_low,
            ci_high=None if overall is None else overall.ci_high,
            worst_attack=worst,
        ),
        controls=Controls(
            tried=len(control_grades),
            passed=passed_controls,
            rate=passed_controls / len(control_grades) if control_grades else None,
        ),
        search=search,
        search_budget=budget,
        attacker=None if session is None else _attacker_summary(session, search),
    )


def _attacker_summary(session: AttackerSession, search: list[SearchResult]) -> AttackerSummary:
    usage = session.usage.to_dict()
    errors: Counter[str] = Counter()
    for result in search:
        errors.update(result.attacker_errors)
    return AttackerSummary(
        model=session.attacker.endpoint.model,
        base_url=session.attacker.endpoint.base_url,
        candidates_per_round=session.attacker.candidates,
        requests=usage["requests"],
        completions=usage["completions"],
        prompt_tokens=usage["prompt_tokens"],
        completion_tokens=usage["completion_tokens"],
        cost_usd=usage["cost_usd"],
        candidates=sum(r.attacker_candidates for r in search),
        exploits=sum(r.exploits_attacker for r in search),
        errors=dict(errors),
        stopped=session.stopped,
    )


def _summarize(
    spec: Attack, tried: list[_Tried], grades: list[Grade], threshold: float
) -> AttackResult:
    mine = [(t, g) for t, g in zip(tried, grades, strict=True) if t.attack == spec.name]
    items: dict[str, bool] = defaultdict(bool)
    errors: Counter[str] = Counter()
    best: tuple[_Tried, Grade] | None = None
    exploited = 0
    for t, g in mine:
        hit = is_rewarded(g, threshold)
        items[t.item] |= hit
        if g.error is not None:
            for flag in g.flags or ["error"]:
                errors[flag] += 1
        if hit:
            exploited += 1
            if best is None or len(t.response) < len(best[0].response):
                best = (t, g)
    hits = sum(items.values())
    rate = wilson_interval(hits, len(items)) if items else None
    example = None
    if best is not None:
        t, g = best
        example = AttackExample(
            item=t.item,
            variant=t.variant,
            response=t.response[:2000],
            score=g.score,
            passed=g.passed,
            flags=g.flags,
        )
    return AttackResult(
        name=spec.name,
        kinds=sorted(spec.kinds),
        why_wrong=spec.why_wrong,
        hostile=spec.hostile,
        tried=len(mine),
        exploited=exploited,
        items_tried=len(items),
        items_exploited=hits,
        exploit_rate=None if rate is None else rate.estimate,
        ci_low=None if rate is None else rate.ci_low,
        ci_high=None if rate is None else rate.ci_high,
        grader_errors=dict(errors),
        example=example,
    )
