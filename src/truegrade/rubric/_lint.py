"""``lint_rubrics``: check the checks before anyone trains on them.

A rubric trains confidently toward whatever its criteria actually reward. The linter looks for
the ways expert-written criteria go wrong, each finding with a reason:

* ``keyword_gameable``: a response made only of the criterion's keywords (its quoted phrases
  and content words, no sentences) is judged met by the criterion's own evaluator. Needs the
  evaluator (a judge endpoint, or the criterion's check); the probe is the attack a policy
  finds first.
* ``vague``: the criterion names nothing checkable (no quoted phrase, number or specific
  content word once generic praise like "helpful", "accurate", "appropriate" is set aside).
* ``duplicate`` / ``overlapping``: two criteria of one rubric say the same thing (identical
  after normalisation / content-word Jaccard at or above ``overlap_threshold``), so one
  behaviour is paid twice.
* ``points_imbalance``: one criterion carries more than ``imbalance_share`` of the rubric's
  positive points, so the rest barely matter.
* ``no_negative_criteria``: the rubric is about something where harm is possible (a tag
  matching ``harm_tags``) and no criterion costs points: harmful advice is never penalised.
* ``never_met`` / ``always_met``: on the exemplar responses, the criterion is met by none /
  all of them (at least ``min_exemplars``), so it separates nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from truegrade.attacks import quoted_phrases, reference_keywords
from truegrade.core import Sample
from truegrade.graders.rubric import CriterionVerdict, Rubric, RubricGrader, RubricItem

__all__ = [
    "DEFAULT_HARM_TAGS",
    "LintFinding",
    "LintReport",
    "RubricSource",
    "keyword_response",
    "lint_rubrics",
]

#: Tag fragments that mark a rubric where harm is possible (``lint_rubrics``'s ``harm_tags``).
DEFAULT_HARM_TAGS = (
    "safety",
    "harm",
    "health",
    "medical",
    "emergency",
    "legal",
    "finance",
    "security",
)

Severity = Literal["error", "warning"]

# fmt: off
_GENERIC = frozenset({
    "good", "helpful", "accurate", "appropriate", "appropriately", "correct", "correctly",
    "clear", "clearly", "relevant", "useful", "quality", "high", "well", "complete",
    "completely", "comprehensive", "detailed", "thorough", "concise", "overall", "reasonable",
    "adequate", "adequately", "proper", "properly", "right", "great", "nice", "excellent",
    "informative", "sufficient", "sufficiently", "response", "content", "information",
    "answer", "question", "manner", "way", "tone", "style", "best", "better",
    "professional", "engaging", "sound", "valid", "precise", "effective", "effectively",
})
# fmt: on


@dataclass(frozen=True)
class RubricSource:
    """One rubric to lint, and where it came from.

    Attributes:
        name: How findings refer to it (a row id, a file name).
        rubric: The criteria.
        prompt: The question it grades answers to (for the keyword probe), if known.
        tags: The example's own tags (HealthBench ``example_tags``), for harm detection.
    """

    name: str
    rubric: Rubric
    prompt: Any = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class LintFinding:
    """One problem with a rubric or one of its criteria."""

    rubric: str
    code: str
    severity: Severity
    reason: str
    criterion: int | None = None
    text: str | None = None


@dataclass
class LintReport:
    """Every finding, with counts per code."""

    rubrics: int
    criteria: int
    findings: list[LintFinding] = field(default_factory=list)
    probes: int = 0
    exemplars: int = 0
    #: Criteria whose never/always-met check ran on the exemplars.
    exemplar_checked: int = 0
    #: Criteria it did not run on, by why (too few exemplars of their rubric, or no verdicts:
    #: criteria judged by an LLM when no judge was given).
    exemplar_skipped: dict[str, int] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.code] = out.get(f.code, 0) + 1
        return dict(sorted(out.items()))

    def codes(self, criterion: int | None = None, rubric: str | None = None) -> set[str]:
        """The codes found (for one criterion / rubric when given)."""
        return {
            f.code
            for f in self.findings
            if (criterion is None or f.criterion == criterion)
            and (rubric is None or f.rubric == rubric)
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "rubrics": self.rubrics,
            "criteria": self.criteria,
            "probes": self.probes,
            "exemplars": self.exemplars,
            "exemplar_checked": self.exemplar_checked,
            "exemplar_skipped": dict(self.exemplar_skipped),
            "counts": self.counts,
            "findings": [asdict(f) for f in self.findings],
        }


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def content_words(text: str) -> list[str]:
    """A criterion's content words: what remains once function words and rubric verbs go."""
    return reference_keywords(text, limit=1000)


def keyword_response(item: RubricItem) -> str:
    """The probe (the keyword-stuffing attack on one criterion): its quoted phrases and
    content words, and no sentence."""
    parts = [p.strip() for p in quoted_phrases(item.criterion)]
    said = set(_words(" ".join(parts)))
    for word in content_words(item.criterion):
        if word not in said:
            parts.append(word)
    check = item.check or {}
    for key in ("all", "any"):
        values = check.get(key)
        if isinstance(values, list):
            parts.extend(str(v) for v in values if str(v) not in parts)
    return " ".join(parts)


def _is_vague(item: RubricItem) -> str | None:
    if item.check is not None or quoted_phrases(item.criterion):
        return None
    if re.search(r"\d", item.criterion):
        return None
    specific = [w for w in content_words(item.criterion) if w not in _GENERIC]
    if len(specific) >= 2:
        return None
    generic = [w for w in content_words(item.criterion) if w in _GENERIC]
    what = f" only generic words ({', '.join(generic[:5])})" if generic else ""
    return (
        f"names nothing checkable:{what or ' no content words'}; say what a response must "
        "contain (a fact, a step, a phrase) so two graders would agree"
    )


def _normal(text: str) -> str:
    return " ".join(_words(text))


def _structure(
    source: RubricSource,
    *,
    overlap_threshold: float,
    imbalance_share: float,
    harm_tags: Sequence[str],
) -> list[LintFinding]:
    findings: list[LintFinding] = []
    items = source.rubric.items
    name = source.name
    for k, item in enumerate(items):
        why = _is_vague(item)
        if why:
            findings.append(LintFinding(name, "vague", "warning", why, k, item.criterion))
    words = [set(content_words(i.criterion)) for i in items]
    for a in range(len(items)):
        for b in range(a + 1, len(items)):
            if _normal(items[a].criterion) == _normal(items[b].criterion):
                findings.append(
                    LintFinding(
                        name,
                        "duplicate",
                        "error",
                        f"criterion {b} repeats criterion {a}: one behaviour is paid twice",
                        b,
                        items[b].criterion,
                    )
                )
                continue
            union = words[a] | words[b]
            if not union:
                continue
            jaccard = len(words[a] & words[b]) / len(union)
            if jaccard >= overlap_threshold and (items[a].points > 0) == (items[b].points > 0):
                findings.append(
                    LintFinding(
                        name,
                        "overlapping",
                        "warning",
                        f"criterion {b} overlaps criterion {a} (content-word Jaccard "
                        f"{jaccard:.2f}): a response meeting one likely meets both, so the "
                        "behaviour counts double; merge them or make them distinct",
                        b,
                        items[b].criterion,
                    )
                )
    positive = source.rubric.positive_points
    if len([i for i in items if i.points > 0]) >= 2 and positive > 0:
        for k, item in enumerate(items):
            share = item.points / positive
            if share > imbalance_share:
                findings.append(
                    LintFinding(
                        name,
                        "points_imbalance",
                        "warning",
                        f"carries {share:.0%} of the positive points ({item.points:g} of "
                        f"{positive:g}): meeting it alone passes, the others barely matter",
                        k,
                        item.criterion,
                    )
                )
    tags = {t.lower() for i in items for t in i.tags} | {t.lower() for t in source.tags}
    harmful = sorted(t for t in tags if any(h.lower() in t for h in harm_tags))
    if harmful and not any(i.points < 0 for i in items):
        findings.append(
            LintFinding(
                name,
                "no_negative_criteria",
                "warning",
                f"tagged {', '.join(harmful)} (harm is possible) but no criterion costs points: "
                "a response giving harmful advice loses nothing; add negative criteria for "
                "the harms an expert would penalise",
            )
        )
    return findings


def _probe(
    sources: Sequence[RubricSource], grader: RubricGrader | None
) -> tuple[list[LintFinding], int]:
    pairs: list[tuple[Sample, RubricItem]] = []
    where: list[tuple[str, int]] = []
    for source in sources:
        for k, item in enumerate(source.rubric.items):
            if grader is None and item.check is None:
                continue  # judged criteria need a judge to probe
            probe = keyword_response(item)
            if not probe:
                continue
            pairs.append((Sample(id=len(pairs), prompt=source.prompt or "", response=probe), item))
            where.append((source.name, k))
    if not pairs:
        return [], 0
    evaluator = grader or RubricGrader.from_options({"cache": None})
    verdicts = evaluator.evaluate_criteria(pairs)
    findings = []
    for (name, k), (sample, item), verdict in zip(where, pairs, verdicts, strict=True):
        if verdict.met:
            effect = "earns its points" if item.points > 0 else "is penalised"
            findings.append(
                LintFinding(
                    name,
                    "keyword_gameable",
                    "error",
                    f"a response made only of its keywords ({sample.response_text[:80]!r}) is "
                    f"judged met by its evaluator ({verdict.by}) and {effect}: a policy will "
                    "learn to list keywords; quote what must be *said*, or use an evaluator "
                    "that reads for substance",
                    k,
                    item.criterion,
                )
            )
    return findings, len(pairs)


def _exemplar_stats(
    sources: Sequence[RubricSource],
    exemplars: Sequence[Sample],
    grader: RubricGrader,
    rubric_of: Any,
    min_exemplars: int,
) -> tuple[list[LintFinding], int, dict[str, int]]:
    """never/always-met findings, how many criteria were checked, and why the rest were not."""
    by_name = {s.name: s for s in sources}
    pairs: list[tuple[Sample, RubricItem]] = []
    where: list[tuple[str, int]] = []
    for sample in exemplars:
        name = rubric_of(sample)
        source = by_name.get(name)
        if source is None:
            continue
        for k, item in enumerate(source.rubric.items):
            pairs.append((sample, item))
            where.append((name, k))
    verdicts: list[CriterionVerdict] = grader.evaluate_criteria(pairs) if pairs else []
    tally: dict[tuple[str, int], list[bool]] = {key: [] for key in where}
    for key, verdict in zip(where, verdicts, strict=True):
        if verdict.met is not None:
            tally[key].append(verdict.met)
    findings = []
    skipped: dict[str, int] = {}
    checked = 0
    with_exemplars = {name for name, _ in where}
    unseen = sum(len(s.rubric.items) for s in sources if s.name not in with_exemplars)
    if unseen:
        skipped["no exemplars of its rubric"] = unseen
    for (name, k), results in sorted(tally.items()):
        if len(results) < min_exemplars:
            reason = (
                "no verdicts (judged by an LLM, and no judge was given)"
                if not results
                else f"fewer than {min_exemplars} exemplar verdicts"
            )
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        checked += 1
        item = by_name[name].rubric.items[k]
        if not any(results):
            findings.append(
                LintFinding(
                    name,
                    "never_met",
                    "warning",
                    f"met by none of {len(results)} exemplar responses: it separates nothing "
                    "here (too strict, mis-worded, or the exemplars miss it)",
                    k,
                    item.criterion,
                )
            )
        elif all(results):
            findings.append(
                LintFinding(
                    name,
                    "always_met",
                    "warning",
                    f"met by all {len(results)} exemplar responses: it separates nothing here "
                    "(too easy, or it rewards something every response says)",
                    k,
                    item.criterion,
                )
            )
    return findings, checked, skipped


def lint_rubrics(
    sources: Sequence[RubricSource],
    *,
    grader: RubricGrader | None = None,
    exemplars: Sequence[Sample] = (),
    exemplar_rubric: Any = None,
    overlap_threshold: float = 0.6,
    imbalance_share: float = 0.5,
    harm_tags: Sequence[str] = DEFAULT_HARM_TAGS,
    min_exemplars: int = 3,
) -> LintReport:
    """Lint rubrics (see the module docstring for the checks).

    Args:
        sources: The rubrics.
        grader: The rubric grader whose evaluators are probed (its judge judges the criteria
            without a check). None: only criteria with a programmatic check are probed.
        exemplars: Responses to measure how often each criterion is met.
        exemplar_rubric: ``sample -> rubric name`` for exemplars (default: the only rubric, or
            the sample's ``group`` / ``id`` prefix before ``#``).
        overlap_threshold: Content-word Jaccard at which two criteria overlap.
        imbalance_share: Share of the positive points one criterion may carry.
        harm_tags: Tag fragments that mark a rubric where harm is possible.
        min_exemplars: Exemplars a criterion needs before never/always-met is judged.
    """
    findings: list[LintFinding] = []
    for source in sources:
        findings.extend(
            _structure(
                source,
                overlap_threshold=overlap_threshold,
                imbalance_share=imbalance_share,
                harm_tags=harm_tags,
            )
        )
    probed, probes = _probe(sources, grader)
    findings.extend(probed)
    checked, skipped = 0, dict[str, int]()
    if exemplars:
        if grader is None:
            grader = RubricGrader.from_options({"cache": None})

        def default_rubric_of(sample: Sample) -> str:
            if len(sources) == 1:
                return sources[0].name
            return sample.group or str(sample.id).split("#")[0]

        found, checked, skipped = _exemplar_stats(
            sources, exemplars, grader, exemplar_rubric or default_rubric_of, min_exemplars
        )
        findings.extend(found)
    order = {s.name: i for i, s in enumerate(sources)}
    findings.sort(key=lambda f: (order.get(f.rubric, 0), f.criterion or -1, f.code))
    return LintReport(
        rubrics=len(sources),
        criteria=sum(len(s.rubric) for s in sources),
        findings=findings,
        probes=probes,
        exemplars=len(exemplars),
        exemplar_checked=checked,
        exemplar_skipped=skipped,
    )
