"""The item audit: is a failure a real failure, or is the question (or its key) wrong?

Every check flags items with a reason a reviewer can act on:

* ``reference_fails`` / ``reference_unparseable``: the item's own reference, written as a
  response, fails its grader (or the grader cannot read the reference);
* ``rejects_equivalent``: a correct answer in another form (fraction/decimal, ``x = ...``, a
  reordered set, the canonical solution reformatted or renamed) is rejected;
* ``flaky``: the same response graded several times gets different verdicts;
* ``suspect_key``: most responses to an item agree on one answer, it is not the key, and the
  grader fails all of them (the key is more likely wrong than they are);
* ``low_discrimination``: across models, doing well on this item goes with doing badly on the rest
  (item-rest correlation near zero or negative);
* ``near_duplicate``: prompts that are near copies of each other (MinHash, estimated Jaccard);
* ``answer_leak``: the reference appears in the prompt.

The audit calls the grader only through ``run_grader``, in batches, so it works for any grader.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from truegrade.attacks import infer_kind, is_rewarded, reference_response
from truegrade.audit._equivalents import equivalent_responses
from truegrade.core import Grade, Grader, Sample, SampleLike, run_grader, to_samples

__all__ = ["CHECKS", "AuditFlag", "AuditItem", "AuditReport", "audit_items"]

CHECKS = (
    "reference",
    "equivalents",
    "flaky",
    "suspect_key",
    "discrimination",
    "duplicates",
    "leak",
)


class AuditFlag(BaseModel):
    """One finding about an item."""

    name: str
    reason: str


class AuditItem(BaseModel):
    """An item and everything found about it."""

    id: str
    flags: list[AuditFlag] = Field(default_factory=list)


class AuditReport(BaseModel):
    """What ``truegrade audit`` found. Only flagged items are listed in ``items``."""

    schema_version: int = 1
    grader: dict[str, Any] | str
    kind: str
    items_total: int
    items_flagged: int
    by_flag: dict[str, int]
    checks: dict[str, str] = Field(description="Each check: 'ran', or why it was skipped.")
    items: list[AuditItem]

    def markdown(self) -> str:
        """A table of the flagged items, for a README or a pull request."""
        lines = [
            f"{self.items_flagged} of {self.items_total} items flagged "
            + (", ".join(f"{k}: {v}" for k, v in sorted(self.by_flag.items())) or ""),
            "",
            "| item | flag | reason |",
            "|---|---|---|",
        ]
        for item in self.items:
            for flag in item.flags:
                reason = flag.reason.replace("|", "\\|").replace("\n", " ")
                lines.append(f"| {item.id} | {flag.name} | {reason} |")
        return "\n".join(lines) + "\n"


def _item_id(sample: Sample) -> str:
    return sample.group if sample.group is not None else sample.key


def audit_items(
    grader: Grader,
    samples: Sequence[SampleLike],
    *,
    kind: str | None = None,
    checks: Sequence[str] = CHECKS,
    reruns: int = 3,
    threshold: float = 0.5,
    duplicate_threshold: float = 0.8,
    majority: float = 0.5,
    min_responses: int = 3,
    discrimination_floor: float = 0.1,
    batch_size: int = 512,
    progress: Callable[[int, int], None] | None = None,
) -> AuditReport:
    """Audit the items behind ``samples`` (rows sharing ``group`` are responses to one item).

    Args:
        grader: Any grader.
        samples: Rows: prompt and reference, optionally responses, labels and ``metadata.model``.
        kind: ``math``, ``code``, ``text`` or ``instructions`` (inferred when None).
        checks: Which checks to run (see ``CHECKS``).
        reruns: Gradings of each response for the flakiness check (at least 2 to check).
        threshold: A score above it counts as a pass when a grade has no verdict.
        duplicate_threshold: Estimated Jaccard similarity from which prompts are near copies.
        majority: Share of responses that must agree for ``suspect_key``.
        min_responses: Fewest responses to an item for ``suspect_key``.
        discrimination_floor: Item-rest correlations below this are flagged.
    """
    unknown = set(checks) - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown checks {sorted(unknown)}; choose from {', '.join(CHECKS)}")
    rows = to_samples(samples)
    items: dict[str, Sample] = {}
    responses: dict[str, list[Sample]] = defaultdict(list)
    for row in rows:
        items.setdefault(_item_id(row), row)
        if row.response is not None:
            responses[_item_id(row)].append(row)
    the_kind = kind or infer_kind(grader, list(items.values()))
    flags: dict[str, list[AuditFlag]] = defaultdict(list)
    ran: dict[str, str] = {}

    queue: list[Sample] = []
    tags: list[tuple[str, str, str]] = []  # (check, item id, detail)

    def add(check: str, item: str, detail: str, sample: Sample) -> None:
        queue.append(sample)
        tags.append((check, item, detail))

    if "reference" in checks or "equivalents" in checks:
        for item_id, item in items.items():
            control = reference_response(item, the_kind)
            if control is None:
                continue
            add(
                "reference",
                item_id,
                "",
                item.model_copy(
                    update={"id": f"{item_id}::reference", "response": control, "label": None}
                ),
            )
            if "equivalents" in checks:
                for name, form in equivalent_responses(item, the_kind):
                    add(
                        "equivalents",
                        item_id,
                        name,
                        item.model_copy(
                            update={
                                "id": f"{item_id}::equivalent::{name}",
                                "response": form,
                                "label": None,
                            }
                        ),
                    )
    runs = max(1, reruns if "flaky" in checks else 1)
    for item_id, group in responses.items():
        for row in group:
            for k in range(runs):
                add(
                    "response",
                    item_id,
                    f"{row.key}\x00{k}",
                    row.model_copy(update={"id": f"{row.key}::run::{k}"}),
                )
    grades: list[Grade] = []
    for start in range(0, len(queue), batch_size):
        grades.extend(run_grader(grader, queue[start : start + batch_size]))
        if progress is not None:
            progress(len(grades), len(queue))

    reference_ok: dict[str, bool] = {}
    response_grades: dict[str, list[Grade]] = defaultdict(list)
    for (check, item_id, detail), sample, grade in zip(tags, queue, grades, strict=True):
        if check == "reference":
            reference_ok[item_id] = _reference_flags(grade, threshold, flags[item_id])
        elif check == "equivalents":
            if reference_ok.get(item_id) and not _passes(grade, threshold):
                why = grade.error or grade.explanation or "rejected"
                flags[item_id].append(
                    AuditFlag(
                        name="rejects_equivalent",
                        reason=f"rejects the reference written as {detail} "
                        f"({_short(sample.response_text)}): {why[:120]}",
                    )
                )
        else:
            response_grades[detail.split("\x00")[0]].append(grade)
    if "reference" in checks or "equivalents" in checks:
        ran["reference"] = "ran" if reference_ok else "skipped: no reference to write as an answer"
        if "equivalents" in checks:
            ran["equivalents"] = "ran" if reference_ok else "skipped: no reference control"
    if "reference" not in checks:
        for item_id in list(flags):
            flags[item_id] = [f for f in flags[item_id] if not f.name.startswith("reference")]

    first = {key: gs[0] for key, gs in response_grades.items()}
    if "flaky" in checks:
        ran["flaky"] = (
            f"ran ({runs} gradings per response)"
            if runs > 1 and response_grades
            else "skipped: needs responses and reruns >= 2"
        )
        if runs > 1:
            _flaky(responses, response_grades, flags)
    if "suspect_key" in checks:
        ran["suspect_key"] = _suspect_keys(
            items, responses, first, the_kind, threshold, majority, min_responses, flags
        )
    if "discrimination" in checks:
        ran["discrimination"] = _discrimination(responses, first, discrimination_floor, flags)
    if "duplicates" in checks:
        ran["duplicates"] = _duplicates(items, duplicate_threshold, flags)
    if "leak" in checks:
        ran["leak"] = _leaks(items, the_kind, flags)

    flagged = [
        AuditItem(id=item_id, flags=flags[item_id]) for item_id in items if flags.get(item_id)
    ]
    counts = Counter(f.name for item in flagged for f in item.flags)
    return AuditReport(
        grader=getattr(grader, "spec", None) or repr(grader),
        kind=the_kind,
        items_total=len(items),
        items_flagged=len(flagged),
        by_flag=dict(sorted(counts.items())),
        checks=ran,
        items=flagged,
    )


def _passes(grade: Grade, threshold: float) -> bool:
    return is_rewarded(grade, threshold)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _reference_flags(grade: Grade, threshold: float, out: list[AuditFlag]) -> bool:
    """Flag a reference the grader cannot read or does not accept; True when it passes."""
    if grade.error is not None:
        if {"bad_reference", "parse_error"} & set(grade.flags) or "reference" in grade.error:
            out.append(AuditFlag(name="reference_unparseable", reason=grade.error[:200]))
        else:
            out.append(
                AuditFlag(
                    name="reference_fails",
                    reason=f"grading the reference failed: {grade.error[:160]}",
                )
            )
        return False
    if not _passes(grade, threshold):
        why = grade.explanation or ", ".join(grade.flags) or f"score {grade.score:g}"
        out.append(
            AuditFlag(
                name="reference_fails",
                reason=f"the reference, given as the answer, fails: {why[:160]}",
            )
        )
        return False
    return True


def _verdict(grade: Grade) -> tuple[Any, ...]:
    return (grade.error is None, grade.passed, round(grade.score, 6))


def _flaky(
    responses: dict[str, list[Sample]],
    grades: dict[str, list[Grade]],
    flags: dict[str, list[AuditFlag]],
) -> None:
    for item_id, group in responses.items():
        for row in group:
            runs = grades.get(row.key, [])
            seen = [_verdict(g) for g in runs]
            if len(set(seen)) > 1:
                scores = ", ".join(
                    f"{g.score:g}" + ("" if g.error is None else " (error)") for g in runs
                )
                flags[item_id].append(
                    AuditFlag(
                        name="flaky",
                        reason=f"response {row.key} got different grades in {len(runs)} runs: "
                        f"{scores}",
                    )
                )
                break


def _answer_of(sample: Sample) -> str | None:
    from truegrade.graders._extract import final_answers
    from truegrade.graders.math import normalize_answer

    statements = final_answers(sample.response_text).statements
    if not statements:
        return None
    return re.sub(r"\s+", "", normalize_answer(statements[-1]).core) or None


def _suspect_keys(
    items: dict[str, Sample],
    responses: dict[str, list[Sample]],
    first: dict[str, Grade],
    kind: str,
    threshold: float,
    majority: float,
    min_responses: int,
    flags: dict[str, list[AuditFlag]],
) -> str:
    if kind != "math":
        return f"skipped: compares final answers, not available for {kind} items"
    checked = 0
    for item_id, group in responses.items():
        if len(group) < min_responses:
            continue
        checked += 1
        answers = {row.key: _answer_of(row) for row in group}
        counts = Counter(a for a in answers.values() if a)
        if not counts:
            continue
        modal, count = counts.most_common(1)[0]
        if count / len(group) <= majority or count < min_responses:
            continue
        backing = [row for row in group if answers[row.key] == modal]
        if any(_passes(first[row.key], threshold) for row in backing if row.key in first):
            continue
        key = items[item_id].reference
        flags[item_id].append(
            AuditFlag(
                name="suspect_key",
                reason=f"{count} of {len(group)} responses answer {modal!r}, the key is {key!r}, "
                f"and the grader fails all {count}",
            )
        )
    if not checked:
        return f"skipped: no item has {min_responses}+ responses (rows sharing 'group')"
    return "ran"


def _discrimination(
    responses: dict[str, list[Sample]],
    first: dict[str, Grade],
    floor: float,
    flags: dict[str, list[AuditFlag]],
) -> str:
    table: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for item_id, group in responses.items():
        for row in group:
            model = row.metadata.get("model")
            if model is not None and row.key in first and first[row.key].error is None:
                table[str(model)][item_id].append(first[row.key].score)
    models = sorted(table)
    if len(models) < 3:
        return "skipped: needs responses from 3+ models (metadata.model)"
    item_ids = sorted({i for m in models for i in table[m]})
    means = {m: {i: sum(v) / len(v) for i, v in table[m].items()} for m in models}
    for item_id in item_ids:
        xs, ys = [], []
        for m in models:
            if item_id not in means[m]:
                continue
            rest = [v for i, v in means[m].items() if i != item_id]
            if not rest:
                continue
            xs.append(means[m][item_id])
            ys.append(sum(rest) / len(rest))
        r = _pearson(xs, ys)
        if r is not None and r < floor:
            flags[item_id].append(
                AuditFlag(
                    name="low_discrimination",
                    reason=f"item-rest correlation {r:+.2f} across {len(xs)} models: models that "
                    "do well elsewhere do not do better here",
                )
            )
    return "ran"


def _pearson(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    if n < 3:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / math.sqrt(sxx * syy)


def _word_triples(text: str) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    return {" ".join(words[i : i + 3]) for i in range(max(1, len(words) - 2))}


_DUPLICATE_PREFIX_CHARS = 100_000
"""Prompts are compared for near-duplicates on this many leading characters: ample for any
real prompt, and a 20 MB one costs a bounded hashing step instead of tens of seconds."""


def _char_grams(text: str, n: int = 5) -> set[bytes]:
    # character 5-grams of the normalised words: robust to a changed word or punctuation
    flat = " ".join(re.findall(r"\w+", text[:_DUPLICATE_PREFIX_CHARS].lower()))
    return {flat[i : i + n].encode() for i in range(max(1, len(flat) - n + 1))}


def _duplicates(
    items: dict[str, Sample], threshold: float, flags: dict[str, list[AuditFlag]]
) -> str:
    from datasketch import MinHash, MinHashLSH

    prompts = {i: s.prompt_text for i, s in items.items() if s.prompt_text.strip()}
    if len(prompts) < 2:
        return "skipped: fewer than two prompts"
    lsh = MinHashLSH(threshold=threshold, num_perm=128)
    hashes = {}
    for item_id, prompt in prompts.items():
        m = MinHash(num_perm=128, seed=1)
        m.update_batch(list(_char_grams(prompt)))
        hashes[item_id] = m
        lsh.insert(item_id, m)
    for item_id, m in hashes.items():
        for other in lsh.query(m):
            if other == item_id:
                continue
            similarity = m.jaccard(hashes[other])
            if similarity >= threshold:
                flags[item_id].append(
                    AuditFlag(
                        name="near_duplicate",
                        reason=f"prompt nearly identical to that of {other} "
                        f"(Jaccard ~{similarity:.2f})",
                    )
                )
    return f"ran (MinHash, Jaccard >= {threshold:g})"


def _leaks(items: dict[str, Sample], kind: str, flags: dict[str, list[AuditFlag]]) -> str:
    from truegrade.graders.math import normalize_answer

    for item_id, item in items.items():
        prompt = item.prompt_text
        ref: Any = item.reference
        if not prompt or ref is None:
            continue
        if kind == "code":
            solution = item.metadata.get("canonical_solution")
            body = [ln.strip() for ln in str(solution or "").splitlines() if len(ln.strip()) > 12]
            if len(body) >= 2 and all(line in prompt for line in body):
                flags[item_id].append(
                    AuditFlag(
                        name="answer_leak",
                        reason="the canonical solution's lines are in the prompt",
                    )
                )
            continue
        text = ref if isinstance(ref, str) else str(ref)
        if kind == "math":
            core = re.sub(r"\s+", "", normalize_answer(text).core)
            trivial = core.isdigit() and len(core) < 3
            spaced = r"\s*".join(re.escape(ch) for ch in core[:80])
            if len(core) >= 2 and not trivial and re.search(rf"(?<![\w.]){spaced}(?![\w])", prompt):
                flags[item_id].append(
                    AuditFlag(
                        name="answer_leak", reason=f"the answer {core!r} appears in the prompt"
                    )
                )
        elif len(text) >= 20:
            ref_grams = _word_triples(text)
            overlap = len(ref_grams & _word_triples(prompt)) / max(1, len(ref_grams))
            if overlap >= 0.5:
                flags[item_id].append(
                    AuditFlag(
                        name="answer_leak",
                        reason=f"{overlap:.0%} of the reference's word triples are in the prompt",
                    )
                )
    return "ran"
