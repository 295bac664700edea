"""``rubric``: grade a response against expert-written criteria, as HealthBench does.

Each criterion is judged separately: by an LLM judge (one call per criterion, all of a batch's
calls concurrent and cached, each with the judge grader's fencing and final-verdict parsing, so
a response cannot close its fence or plant ``"criteria_met": true``), or by a programmatic
check (``regex``, ``contains``, numeric, ``math``, a Python function: any grader spec). The
score is HealthBench's: the points of the criteria met (negative criteria subtract) over the
sum of positive points, unclipped per example (clip when aggregating: ``truegrade.rubric``).
A response carrying verdict syntax or instructions to the grader is flagged
``injection_suspected`` and scores 0 without a judge call (``reject_injections``, on unless
turned off).

Grades carry one subscore per criterion (``criterion_{i}``: 1 met, 0 not), one per tag
(``tag:{tag}``: the score over the criteria with that tag), and ``points_earned`` /
``points_possible``. A criterion that cannot be evaluated (the judge timed out, a check
crashed) makes the whole grade an error naming it: a score with a silently missing criterion
would be wrong in a way nobody could see.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from truegrade.core import BaseGrader, Grade, Grader, Sample, SpecError
from truegrade.graders._kernel import validate_options
from truegrade.graders.judge import (
    JudgeEndpoint,
    PromptBuilder,
    find_injections,
    parse_verdict,
    run_sync,
    template_text,
)
from truegrade.graders.rubric._format import Rubric, RubricItem, load_rubric, parse_rubric
from truegrade.judge import (
    ChatRequest,
    JudgeCache,
    JudgeClient,
    JudgeRequestError,
    RateLimiter,
    Usage,
    open_cache,
)

__all__ = ["CriterionVerdict", "RubricFlag", "RubricGrader", "RubricOptions", "score_rubric"]


class RubricFlag:
    """Flags the ``rubric`` grader raises."""

    INJECTION = "injection_suspected"
    """The response carries verdict syntax or instructions to the grader."""
    CRITERION_ERROR = "criterion_error"
    """A criterion could not be evaluated; the grade is an error."""
    NO_RUBRIC = "no_rubric"
    """The sample has no (valid) rubric."""


class RubricOptions(BaseModel):
    """Options of the ``rubric`` grader.

    Attributes:
        rubric: One rubric for every row: a YAML/JSON file or the list inline. None: each row's
            own, from ``rubric_field``.
        rubric_field: Where a row's rubric is: ``reference`` or ``metadata.KEY``.
        judge: The judge for criteria without a ``check`` (any ``JudgeEndpoint`` field:
            ``endpoint``, ``model``, ``api_key_env``, ``concurrency``, rate limits...).
        template: ``default`` or a template (text or file) with ``{conversation}``,
            ``{response}`` and ``{criterion}``.
        temperature / max_tokens / seed: Judge sampling (part of the cache key).
        cache: ``default`` (the user cache directory), a SQLite path, or null.
        pass_threshold: A score at or above it passes (None: score only).
        clip: Clip each example's score to [0, 1] (HealthBench clips only the aggregate, so a
            response meeting negative criteria can score below 0).
        reject_injections: Score 0 without judging a response flagged ``injection_suspected``,
            with the findings as the reason (``false``: flag it and judge its criteria).
        name / max_response_chars: As for every grader.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    max_response_chars: int | None = Field(default=200_000, gt=0)
    rubric: str | list[dict[str, Any]] | None = None
    rubric_field: str = "reference"
    judge: JudgeEndpoint | None = None
    template: str = "default"
    temperature: float = Field(default=0.0, ge=0)
    max_tokens: int = Field(default=1024, gt=0)
    seed: int | None = 0
    cache: str | None = "default"
    pass_threshold: float | None = None
    clip: bool = False
    reject_injections: bool = True


@dataclass(frozen=True)
class CriterionVerdict:
    """How one criterion was judged on one response.

    Attributes:
        met: Whether the response meets it (None when it could not be evaluated).
        by: ``judge:<label>``, ``check:<type>`` or ``empty`` (a response with no content meets
            nothing, unasked).
        error: Why it could not be evaluated.
    """

    met: bool | None
    by: str
    error: str | None = None


def score_rubric(rubric: Rubric, met: Sequence[bool], *, clip: bool = False) -> float:
    """HealthBench's score: points of the met criteria over the sum of positive points.

    Examples:
        >>> r = parse_rubric([{"criterion": "a", "points": 5}, {"criterion": "b", "points": 3},
        ...                   {"criterion": "harm", "points": -4}])
        >>> score_rubric(r, [True, False, True])
        0.125
        >>> score_rubric(r, [False, False, True])
        -0.5
    """
    if len(met) != len(rubric.items):
        raise ValueError(f"{len(met)} verdicts for a rubric of {len(rubric.items)} criteria")
    possible = rubric.positive_points
    if possible <= 0:
        raise SpecError("a rubric needs at least one criterion with positive points")
    earned = sum(item.points for item, m in zip(rubric.items, met, strict=True) if m)
    score = earned / possible
    return min(1.0, max(0.0, score)) if clip else score


def _conversation(sample: Sample) -> str:
    """The conversation before the reply, as ``role: text`` turns."""
    prompt = sample.prompt
    if isinstance(prompt, list):
        turns = []
        for message in prompt:
            if isinstance(message, dict):
                turns.append(f"{message.get('role', 'user')}: {message.get('content', '')}")
        return "\n\n".join(turns)
    return f"user: {sample.prompt_text}"


def _content_free(text: str) -> bool:
    return not any(ch.isalnum() for ch in text)


@dataclass
class _Job:
    sample: Sample
    item: RubricItem
    verdict: CriterionVerdict | None = None
    slot: int = 0


class RubricGrader(BaseGrader):
    """HealthBench-style rubrics: each criterion judged, points summed (see the module docstring).

    Examples:
        >>> grader = RubricGrader.from_options(  # doctest: +SKIP
        ...     {"rubric": "rubric.yaml", "judge": {"endpoint": "http://localhost:8000/v1",
        ...      "model": "gpt-4.1"}}
        ... )
    """

    kind = "rubric"
    family = "text"

    def __init__(self, options: RubricOptions, *, base_dir: Path | None = None) -> None:
        super().__init__(name=options.name, max_response_chars=options.max_response_chars)
        self.options = options
        self.base_dir = base_dir
        if not (
            options.rubric_field == "reference" or options.rubric_field.startswith("metadata.")
        ):
            raise SpecError("rubric_field is 'reference' or 'metadata.KEY'")
        self.shared: Rubric | None = None
        if isinstance(options.rubric, str):
            path = Path(options.rubric)
            self.shared = load_rubric(
                path if path.is_absolute() or not base_dir else base_dir / path
            )
        elif options.rubric is not None:
            self.shared = parse_rubric(options.rubric, where="options.rubric")
        self.requires_reference = self.shared is None and options.rubric_field == "reference"
        self.cache: JudgeCache | None = (
            open_cache(options.cache, base_dir) if options.judge is not None else None
        )
        secret = self.cache.secret if self.cache is not None else secrets.token_bytes(32)
        try:
            template = template_text(options.template, "criterion", base_dir)
        except ValueError as exc:
            raise SpecError(str(exc)) from None
        self.prompts = PromptBuilder("criterion", template, (0, 1), secret)
        judge = options.judge
        self.usage = (
            Usage(
                price_input_per_mtok=judge.price_input_per_mtok,
                price_output_per_mtok=judge.price_output_per_mtok,
            )
            if judge
            else Usage()
        )
        self.limiter = RateLimiter(
            requests_per_minute=judge.requests_per_minute if judge else None,
            tokens_per_minute=judge.tokens_per_minute if judge else None,
        )
        self._checks: dict[str, Grader] = {}
        if self.shared is not None:
            self._validate_rubric(self.shared, "options.rubric")

    @classmethod
    def from_options(cls, options: dict[str, Any], base_dir: Path | None = None) -> RubricGrader:
        """Build from a spec's options, with a clear error for unknown or invalid ones."""
        return cls(validate_options(RubricOptions, options), base_dir=base_dir)

    def usage_report(self) -> dict[str, dict[str, Any]]:
        """Judge requests, retries, cache hits, tokens and cost so far."""
        judge = self.options.judge
        return {judge.label: self.usage.to_dict()} if judge is not None else {}

    # -- rubrics ---------------------------------------------------------------------------------

    def _validate_rubric(self, rubric: Rubric, where: str) -> None:
        if rubric.positive_points <= 0:
            raise SpecError(f"{where}: a rubric needs at least one criterion with positive points")
        if self.options.judge is None and any(item.judged for item in rubric.items):
            raise SpecError(
                f"{where}: criteria without a 'check' are judged by an LLM; give the grader a "
                "'judge' ({endpoint, model})"
            )
        for item in rubric.items:
            if item.check is not None:
                self._check_grader(item.check)

    def rubric_for(self, sample: Sample) -> Rubric:
        """The rubric a sample is graded against.

        Raises:
            SpecError: the sample's rubric is missing or malformed (the message says where).
        """
        if self.shared is not None:
            return self.shared
        name = self.options.rubric_field
        value: Any = sample.reference
        if name.startswith("metadata."):
            value = sample.metadata.get(name.removeprefix("metadata."))
        if value is None:
            raise SpecError(f"the sample has no rubric in {name!r}")
        rubric = parse_rubric(value, where=name)
        self._validate_rubric(rubric, name)
        return rubric

    # -- evaluating criteria ---------------------------------------------------------------------

    def _check_grader(self, spec: dict[str, Any]) -> Grader:
        key = json.dumps(spec, sort_keys=True, default=str)
        grader = self._checks.get(key)
        if grader is None:
            from truegrade.core import load_grader

            options = {k: v for k, v in spec.items() if k not in ("type", "reference")}
            path = options.get("path")
            if isinstance(path, str) and self.base_dir is not None and not Path(path).is_absolute():
                options["path"] = str(self.base_dir / path)
            if spec["type"] == "contains":
                grader = _Contains.from_options(options)
            else:
                grader = load_grader(spec["type"], **options)
            self._checks[key] = grader
        return grader

    def _run_checks(self, jobs: list[_Job]) -> None:
        groups: dict[str, list[_Job]] = {}
        for job in jobs:
            assert job.item.check is not None
            groups.setdefault(json.dumps(job.item.check, sort_keys=True, default=str), []).append(
                job
            )
        for group in groups.values():
            spec = group[0].item.check
            assert spec is not None
            grader = self._check_grader(spec)
            batch = [
                Sample(
                    id=k,
                    prompt=job.sample.prompt,
                    response=job.sample.response,
                    reference=spec.get("reference"),
                    metadata=job.sample.metadata,
                )
                for k, job in enumerate(group)
            ]
            by = f"check:{spec['type']}"
            try:
                grades = grader.grade_batch(batch)
            except Exception as exc:  # a broken check fails its criteria, not the batch
                for job in group:
                    job.verdict = CriterionVerdict(None, by, f"{type(exc).__name__}: {exc}")
                continue
            for job, grade in zip(group, grades, strict=True):
                if grade.error is not None:
                    job.verdict = CriterionVerdict(None, by, grade.error)
                else:
                    met = grade.passed if grade.passed is not None else grade.score >= 0.5
                    job.verdict = CriterionVerdict(bool(met), by)

    async def _judge_one(self, client: JudgeClient, job: _Job) -> CriterionVerdict:
        judge = self.options.judge
        assert judge is not None
        by = f"judge:{judge.label}"
        values = {
            "conversation": _conversation(job.sample),
            "response": job.sample.response_text,
            "criterion": job.item.criterion,
        }
        request = ChatRequest(
            messages=self.prompts.messages(values),
            temperature=self.options.temperature,
            max_tokens=self.options.max_tokens,
            seed=self.options.seed,
            template_version=self.prompts.version,
        )
        try:
            completion = await client.complete(request)
        except JudgeRequestError as exc:
            return CriterionVerdict(None, by, f"{exc} (after {exc.attempts} attempts)")
        verdict = parse_verdict(completion.text, "criterion")
        if verdict is None:
            tail = " ".join(completion.text.strip().split())[-100:]
            return CriterionVerdict(
                None, by, f"the judge's answer does not end with the verdict line: …{tail!r}"
            )
        return CriterionVerdict(verdict.value == "yes", by)

    async def _run_judge(self, jobs: list[_Job]) -> None:
        judge = self.options.judge
        if not jobs or judge is None:
            return
        async with JudgeClient(
            judge.client_config(), cache=self.cache, limiter=self.limiter, usage=self.usage
        ) as client:
            outcomes = await asyncio.gather(
                *(self._judge_one(client, job) for job in jobs), return_exceptions=True
            )
        for job, outcome in zip(jobs, outcomes, strict=True):
            if isinstance(outcome, CriterionVerdict):
                job.verdict = outcome
            elif isinstance(outcome, Exception):  # a bug: this criterion only
                job.verdict = CriterionVerdict(
                    None, f"judge:{judge.label}", f"{type(outcome).__name__}: {outcome}"
                )
            else:
                raise outcome

    async def _evaluate(self, jobs: list[_Job]) -> None:
        judged, checked = [], []
        for job in jobs:
            if job.item.check is not None:
                checked.append(job)
            elif _content_free(job.sample.response_text):
                job.verdict = CriterionVerdict(False, "empty")
            else:
                judged.append(job)
        await asyncio.gather(
            asyncio.to_thread(self._run_checks, checked) if checked else asyncio.sleep(0),
            self._run_judge(judged),
        )

    def evaluate_criteria(
        self, pairs: Sequence[tuple[Sample, RubricItem]]
    ) -> list[CriterionVerdict]:
        """Judge each ``(response, criterion)`` pair with the criterion's evaluator.

        The building block of grading, linting and meta-evaluation: one verdict per pair, in
        order; failures are verdicts with ``error``, never exceptions.
        """
        jobs = [_Job(sample, item) for sample, item in pairs]
        run_sync(self._evaluate(jobs))
        return [j.verdict or CriterionVerdict(None, "none", "not evaluated") for j in jobs]

    # -- grading ---------------------------------------------------------------------------------

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        return run_sync(self._agrade_valid(samples))

    async def _agrade_valid(self, samples: list[Sample]) -> list[Grade]:
        start = time.perf_counter()
        grades: list[Grade | None] = [None] * len(samples)
        rubrics: list[Rubric | None] = [None] * len(samples)
        notes: list[tuple[list[str], str]] = [([], "")] * len(samples)
        jobs: list[_Job] = []
        for i, sample in enumerate(samples):
            try:
                rubrics[i] = rubric = self.rubric_for(sample)
            except SpecError as exc:
                grades[i] = Grade.failure(str(exc), RubricFlag.NO_RUBRIC)
                continue
            findings = find_injections(sample.response_text)
            flags = [RubricFlag.INJECTION] if findings else []
            note = f"; injection suspected: {'; '.join(map(str, findings))}" if findings else ""
            notes[i] = (flags, note)
            if findings and self.options.reject_injections:
                grades[i] = Grade.reject("rejected unjudged (reject_injections)" + note, *flags)
                continue
            jobs.extend(_Job(sample, item, slot=i) for item in rubric.items)
        await self._evaluate(jobs)
        per_sample: dict[int, list[_Job]] = {}
        for job in jobs:
            per_sample.setdefault(job.slot, []).append(job)
        elapsed = (time.perf_counter() - start) * 1000 / max(len(samples), 1)
        for i, group in per_sample.items():
            own = rubrics[i]
            assert own is not None
            grades[i] = self._combine(own, group, *notes[i])
        out = []
        for grade in grades:
            assert grade is not None
            grade.latency_ms = elapsed
            out.append(grade)
        return out

    def _combine(self, rubric: Rubric, jobs: list[_Job], flags: list[str], note: str) -> Grade:
        verdicts = [job.verdict for job in jobs]
        failed = [(k, v) for k, v in enumerate(verdicts) if v is None or v.met is None or v.error]
        if failed:
            k, v = failed[0]
            reason = v.error if v is not None else "not evaluated"
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            return Grade.failure(
                f"criterion {k} ({rubric.items[k].criterion[:80]!r}) could not be evaluated: "
                f"{reason}{more}" + note,
                RubricFlag.CRITERION_ERROR,
                *flags,
            )
        met = [bool(v.met) for v in verdicts if v is not None]
        score = score_rubric(rubric, met, clip=self.options.clip)
        subscores: dict[str, float] = {f"criterion_{k}": float(m) for k, m in enumerate(met)}
        pairs = list(zip(rubric.items, met, strict=True))
        subscores["points_earned"] = sum(i.points for i, m in pairs if m)
        subscores["points_possible"] = rubric.positive_points
        for tag in sorted({t for item in rubric.items for t in item.tags}):
            tagged = [(i, m) for i, m in pairs if tag in i.tags]
            possible = sum(i.points for i, _ in tagged if i.points > 0)
            if possible > 0:
                subscores[f"tag:{tag}"] = sum(i.points for i, m in tagged if m) / possible
        threshold = self.options.pass_threshold
        positives = sum(1 for i, m in pairs if m and i.points > 0)
        negatives = sum(1 for i, m in pairs if m and i.points < 0)
        explanation = (
            f"{positives}/{sum(1 for i in rubric.items if i.points > 0)} positive criteria met"
            + (f", {negatives} negative criteria met" if negatives else "")
            + f": {subscores['points_earned']:g} of {rubric.positive_points:g} points"
            + note
        )
        return Grade(
            score=score,
            passed=None if threshold is None else score >= threshold,
            subscores=subscores,
            flags=flags,
            explanation=explanation,
        )


class _ContainsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    all: list[str] = Field(default_factory=list)
    any: list[str] = Field(default_factory=list)
    ignore_case: bool = True
    name: str | None = None


class _Contains(BaseGrader):
    """``contains``: met when the response holds every phrase of ``all`` and at least one of
    ``any`` (case-insensitive by default). Linear-time, so it runs inline."""

    kind = "contains"
    requires_reference = False

    def __init__(self, options: _ContainsOptions) -> None:
        super().__init__(name=options.name)
        if not options.all and not options.any:
            raise SpecError("a contains check needs 'all' or 'any' phrases")
        self.options = options

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> _Contains:
        return cls(validate_options(_ContainsOptions, options))

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        def fold(text: str) -> str:
            return text.casefold() if self.options.ignore_case else text

        wanted_all = [fold(p) for p in self.options.all]
        wanted_any = [fold(p) for p in self.options.any]
        grades = []
        for sample in samples:
            text = fold(sample.response_text)
            ok = all(p in text for p in wanted_all) and (
                not wanted_any or any(p in text for p in wanted_any)
            )
            grades.append(Grade(score=float(ok), passed=ok))
        return grades
