"""``judge``: an LLM judge (or a jury of them) with the controls the field guide asks for.

A judge is a reward model that is nicer to talk to, and it is fooled in known ways. What this
grader does about each:

* **Prompt injection.** The candidate (and every other untrusted text) is fenced as data with an
  unguessable boundary; the verdict is read only from the judge's final JSON line; candidates
  carrying verdict syntax or instructions to the grader are flagged ``injection_suspected`` and
  failed without a judge call (``reject_injections``, on unless turned off).
* **Position bias.** Pairwise comparisons are judged in both orders; orders that disagree make a
  tie (FastChat's rule), are flagged ``position_inconsistent``, and position consistency is
  reported in the subscores.
* **Single-judge idiosyncrasy.** A jury of judges decides by majority or mean;
  ``jury_disagreement`` flags split decisions.
* **Self-preference.** A judge from the policy's model family (``metadata.model`` or
  ``policy_model``) is refused (``self_judge_refused``) unless ``allow_self_judge`` is set.
* **Master keys.** In reference mode, content-free responses (``:``, ``Solution``) fail without
  a judge call (``master_key``).
* **Nothing to compare with.** In reference mode an empty reference, and in pairwise mode an
  empty baseline, is an error (``bad_reference``, ``no_baseline``) without a judge call: a judge
  asked to compare with nothing still answers, and its answer would be a score.
* **Coarse verdicts.** With log-probabilities, scores are expectations over the verdict token's
  alternatives (``logprob_score``).

Length bias is measured and corrected on the recorded verdicts (``truegrade lc``), not here.
Every failure (timeout, rate limit after retries, unparseable verdict...) is a grade with
``error`` and a flag; the rest of the batch goes on. Requests run concurrently on an event loop;
the synchronous ``grade_batch`` runs that loop (in a worker thread if the caller is already
inside one).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import secrets
import statistics
import time
from collections import Counter
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from truegrade.core import BaseGrader, Flag, Grade, Sample, SpecError
from truegrade.graders._kernel import validate_options
from truegrade.graders.judge._family import model_family
from truegrade.graders.judge._injection import find_injections
from truegrade.graders.judge._options import JudgeEndpoint, JudgeOptions
from truegrade.graders.judge._prompts import PromptBuilder
from truegrade.graders.judge._verdict import ParsedVerdict, parse_verdict, soft_verdict
from truegrade.judge import (
    ChatRequest,
    JudgeCache,
    JudgeClient,
    JudgeRequestError,
    RateLimiter,
    Usage,
    open_cache,
)

__all__ = ["JudgeFlag", "JudgeGrader", "run_sync"]

T = TypeVar("T")


class JudgeFlag:
    """Flags the ``judge`` grader raises (besides ``timeout``)."""

    INJECTION = "injection_suspected"
    """The candidate carries verdict syntax, instructions to the grader or a template break."""
    POSITION_INCONSISTENT = "position_inconsistent"
    """The two orders of a pairwise comparison disagreed: the verdict became a tie."""
    JURY_DISAGREEMENT = "jury_disagreement"
    """The judges of a jury did not agree."""
    SELF_JUDGE = "self_judge_refused"
    """A judge is of the policy's model family; refused (see ``allow_self_judge``)."""
    MASTER_KEY = "master_key"
    """Reference mode: the response has no content to judge (``:``, ``Solution``...)."""
    LOGPROB_SCORE = "logprob_score"
    """The score is an expectation over the verdict token's log-probabilities."""
    JUDGE_ERROR = "judge_error"
    """A judge could not give a verdict; the kind of failure is a flag too."""
    UNPARSEABLE = "unparseable_verdict"
    """The judge's answer did not end with the required verdict line."""
    NO_BASELINE = "no_baseline"
    """Pairwise: the sample has no baseline response (or an empty one)."""
    BAD_REFERENCE = "bad_reference"
    """Reference mode: the reference is empty."""


def _text_or_none(value: Any) -> str | None:
    """A reference or baseline as the text a judge reads; None when it says nothing (missing,
    blank, an empty list or object)."""
    if value is None or (isinstance(value, (list, tuple, dict)) and not value):
        return None
    text = value if isinstance(value, str) else str(value)
    return text if text.strip() else None


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, even inside a running event loop
    (then in a worker thread with a loop of its own, so the caller's loop is not re-entered)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="judge") as pool:
        return pool.submit(asyncio.run, coro).result()


_VERDICT_TOKENS = 16
_MASTER_KEYS = {
    "solution",
    "answer",
    "the answer is",
    "final answer",
    "thought process",
    "let's solve this step by step",
    "let's think step by step",
    "step 1",
    "explanation",
}


def _content_free(text: str) -> bool:
    stripped = text.strip()
    if not any(ch.isalnum() for ch in stripped):
        return True
    return " ".join(stripped.lower().rstrip(":.!").split()) in _MASTER_KEYS


async def _gather(coros: list[Coroutine[Any, Any, T]]) -> list[T | BaseException]:
    """``gather(return_exceptions=True)``, without a task per coroutine when there is one."""
    if len(coros) == 1:
        try:
            return [await coros[0]]
        except Exception as exc:
            return [exc]
    return list(await asyncio.gather(*coros, return_exceptions=True))


class _NoVerdict(Exception):
    """A judge answered, but not with a verdict."""


class _CacheMiss(Exception):
    """The cache-only pass met a request the cache does not hold."""


@dataclass
class _JudgeResult:
    label: str
    score: float  # normalised to [0, 1]
    decision: str  # win/tie/loss, yes/no, or the raw score
    raw: float | None = None
    consistent: bool | None = None
    orders: dict[str, float] = field(default_factory=dict)
    soft: bool = False


class JudgeGrader(BaseGrader):
    """An LLM judge or a jury, with position, length and injection controls (module docstring).

    Examples:
        >>> grader = JudgeGrader.from_options(  # doctest: +SKIP
        ...     {"mode": "pairwise", "endpoint": "http://localhost:8000/v1", "model": "qwen2.5"}
        ... )
    """

    kind = "judge"
    family = "text"

    def __init__(self, options: JudgeOptions, *, base_dir: Path | None = None) -> None:
        super().__init__(name=options.name, max_response_chars=options.max_response_chars)
        self.options = options
        self.requires_reference = options.mode == "reference" or (
            options.mode == "pairwise" and options.baseline_field == "reference"
        )
        self.judges: list[JudgeEndpoint] = list(options.judges)
        self.scale = (options.scale_min, options.scale_max)
        self.cache: JudgeCache | None = open_cache(options.cache, base_dir)
        secret = self.cache.secret if self.cache is not None else secrets.token_bytes(32)
        try:
            template = options.template_text(base_dir)
        except ValueError as exc:
            raise SpecError(str(exc)) from None
        self.prompts = PromptBuilder(options.mode, template, self.scale, secret)
        self.usage: dict[str, Usage] = {}
        self.limiters: dict[str, RateLimiter] = {}
        for judge in self.judges:
            self.usage[judge.label] = Usage(
                price_input_per_mtok=judge.price_input_per_mtok,
                price_output_per_mtok=judge.price_output_per_mtok,
            )
            self.limiters[judge.label] = RateLimiter(
                requests_per_minute=judge.requests_per_minute,
                tokens_per_minute=judge.tokens_per_minute,
            )

    @classmethod
    def from_options(cls, options: dict[str, Any], base_dir: Path | None = None) -> JudgeGrader:
        """Build from a spec's options, with a clear error for unknown or invalid ones."""
        return cls(validate_options(JudgeOptions, options), base_dir=base_dir)

    def usage_report(self) -> dict[str, dict[str, Any]]:
        """Requests, retries, cache hits, tokens and cost so far, per judge."""
        return {label: usage.to_dict() for label, usage in self.usage.items()}

    # -- grading ---------------------------------------------------------------------------------

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        return run_sync(self._agrade_valid(samples))

    async def _agrade_valid(self, samples: list[Sample]) -> list[Grade]:
        clients = {
            judge.label: JudgeClient(
                judge.client_config(),
                cache=self.cache,
                limiter=self.limiters[judge.label],
                usage=self.usage[judge.label],
            )
            for judge in self.judges
        }
        try:
            grades: list[Grade | None] = [None] * len(samples)
            todo = list(range(len(samples)))
            if self.cache is not None:
                # cache hits first, one after another: a coroutine that never waits costs no
                # task, which is most of the time a cached rerun would otherwise spend
                todo = []
                for i, sample in enumerate(samples):
                    try:
                        grades[i] = await self._grade_one(sample, clients, cache_only=True)
                    except _CacheMiss:
                        todo.append(i)
            fresh = await asyncio.gather(*(self._grade_one(samples[i], clients) for i in todo))
            for i, grade in zip(todo, fresh, strict=True):
                grades[i] = grade
            return [g for g in grades if g is not None]
        finally:
            for client in clients.values():
                await client.aclose()

    def _refusal(self, sample: Sample) -> str | None:
        if self.options.allow_self_judge:
            return None
        policy = sample.metadata.get("model") or self.options.policy_model
        if not isinstance(policy, str) or not policy:
            return None
        families = self.options.model_families
        family = model_family(policy, families)
        for judge in self.judges:
            if model_family(judge.model, families) == family:
                return (
                    f"judge {judge.label!r} ({judge.model}) is of the same model family "
                    f"({family}) as the policy {policy!r}: judges prefer their own family's "
                    "text. Use a judge of another family, or set allow_self_judge: true"
                )
        return None

    def _baseline(self, sample: Sample) -> str | None:
        field_name = self.options.baseline_field
        value: Any = sample.reference
        if field_name.startswith("metadata."):
            value = sample.metadata.get(field_name.removeprefix("metadata."))
        return _text_or_none(value)

    async def _grade_one(
        self, sample: Sample, clients: dict[str, JudgeClient], *, cache_only: bool = False
    ) -> Grade:
        start = time.perf_counter()
        candidate = sample.response_text
        findings = find_injections(candidate)
        flags = [JudgeFlag.INJECTION] if findings else []
        note = f"; injection suspected: {'; '.join(map(str, findings))}" if findings else ""

        def elapsed() -> float:
            return (time.perf_counter() - start) * 1000

        refusal = self._refusal(sample)
        if refusal is not None:
            return Grade.failure(refusal, JudgeFlag.SELF_JUDGE, *flags, latency_ms=elapsed())
        if findings and self.options.reject_injections:
            return Grade.reject(
                "rejected unjudged (reject_injections)" + note, *flags, latency_ms=elapsed()
            )
        mode = self.options.mode
        if mode == "reference" and _text_or_none(sample.reference) is None:
            return Grade.failure(
                "the reference is empty: there is nothing to judge the response against",
                JudgeFlag.BAD_REFERENCE,
                *flags,
                latency_ms=elapsed(),
            )
        if mode == "reference" and self.options.reject_master_keys and _content_free(candidate):
            return Grade.reject(
                "the response has no content to judge (a master key such as ':' or 'Solution')"
                + note,
                JudgeFlag.MASTER_KEY,
                *flags,
                latency_ms=elapsed(),
            )
        baseline = self._baseline(sample) if mode == "pairwise" else None
        if mode == "pairwise" and baseline is None:
            return Grade.failure(
                "pairwise judging needs a baseline response (not empty) in "
                f"{self.options.baseline_field!r}",
                JudgeFlag.NO_BASELINE,
                *flags,
                latency_ms=elapsed(),
            )
        asks = [
            self._ask(judge, clients[judge.label], sample, candidate, baseline, cache_only)
            for judge in self.judges
        ]
        if cache_only:  # no waiting: in order, and the first miss ends the pass for this sample
            outcomes: list[_JudgeResult | BaseException] = []
            try:
                for ask in asks:
                    try:
                        outcomes.append(await ask)
                    except _CacheMiss:
                        raise
                    except Exception as exc:  # as _gather reports it
                        outcomes.append(exc)
            finally:
                for ask in asks:
                    ask.close()
        else:
            outcomes = await _gather(asks)
        results: list[_JudgeResult] = []
        for judge, outcome in zip(self.judges, outcomes, strict=True):
            if isinstance(outcome, JudgeRequestError):
                kind = Flag.TIMEOUT if outcome.kind == "timeout" else outcome.kind
                return Grade.failure(
                    f"judge {judge.label!r}: {outcome} (after {outcome.attempts} attempts)",
                    JudgeFlag.JUDGE_ERROR,
                    kind,
                    *flags,
                    latency_ms=elapsed(),
                )
            if isinstance(outcome, _NoVerdict):
                return Grade.failure(
                    f"judge {judge.label!r}: {outcome}",
                    JudgeFlag.JUDGE_ERROR,
                    JudgeFlag.UNPARSEABLE,
                    *flags,
                    latency_ms=elapsed(),
                )
            if isinstance(outcome, Exception):  # a bug, not a judge failure: this sample only
                return Grade.failure(
                    f"judge {judge.label!r}: {type(outcome).__name__}: {outcome}",
                    Flag.GRADER_EXCEPTION,
                    *flags,
                    latency_ms=elapsed(),
                )
            if isinstance(outcome, BaseException):
                raise outcome
            results.append(outcome)
        grade = self._aggregate(results, flags, note)
        grade.latency_ms = elapsed()
        if mode == "pairwise" and baseline is not None:
            grade.subscores["candidate_chars"] = float(len(candidate))
            grade.subscores["baseline_chars"] = float(len(baseline))
        elif mode == "score":
            grade.subscores["candidate_chars"] = float(len(candidate))
        return grade

    async def _complete(
        self, client: JudgeClient, values: dict[str, str], cache_only: bool = False
    ) -> tuple[ParsedVerdict, dict[str, float] | None]:
        options = self.options
        request = ChatRequest(
            messages=self.prompts.messages(values),
            temperature=options.temperature,
            max_tokens=options.max_tokens,
            seed=options.seed,
            logprobs=options.logprobs,
            top_logprobs=options.top_logprobs if options.logprobs else None,
            # the verdict is the answer's last line: its tokens are all that is read
            logprobs_tail=_VERDICT_TOKENS if options.logprobs else None,
            template_version=self.prompts.version,
        )
        if cache_only:
            hit = client.cached(request)
            if hit is None:
                raise _CacheMiss
            completion = hit
        else:
            completion = await client.complete(request)
        verdict = parse_verdict(completion.text, options.mode, self.scale)
        if verdict is None:
            tail = " ".join(completion.text.strip().split())[-120:]
            raise _NoVerdict(f"the answer does not end with the required verdict line: …{tail!r}")
        return verdict, soft_verdict(completion.logprobs, verdict, options.mode, self.scale)

    async def _ask(
        self,
        judge: JudgeEndpoint,
        client: JudgeClient,
        sample: Sample,
        candidate: str,
        baseline: str | None,
        cache_only: bool = False,
    ) -> _JudgeResult:
        instruction = sample.prompt_text
        mode = self.options.mode
        lo, hi = self.scale
        if mode == "score":
            verdict, soft = await self._complete(
                client, {"instruction": instruction, "response": candidate}, cache_only
            )
            raw = soft["score"] if soft else float(verdict.score or 0.0)
            return _JudgeResult(
                judge.label, (raw - lo) / (hi - lo), verdict.value, raw=raw, soft=soft is not None
            )
        if mode == "reference":
            reference = _text_or_none(sample.reference) or ""
            verdict, soft = await self._complete(
                client,
                {"instruction": instruction, "response": candidate, "reference": reference},
                cache_only,
            )
            p_yes = soft["yes"] if soft else float(verdict.value == "yes")
            return _JudgeResult(judge.label, p_yes, verdict.value, soft=soft is not None)
        assert baseline is not None
        orders = [("candidate_first", candidate, baseline)]
        if self.options.both_orders:
            orders.append(("candidate_second", baseline, candidate))
        calls = [
            self._complete(
                client,
                {"instruction": instruction, "response_a": first, "response_b": second},
                cache_only,
            )
            for _, first, second in orders
        ]
        if cache_only:
            try:
                answers = [await call for call in calls]
            finally:
                for call in calls:
                    call.close()
        else:
            answers = await asyncio.gather(*calls)
        values: dict[str, float] = {}
        decisions: list[str] = []
        for (name, _, _), (verdict, soft) in zip(orders, answers, strict=True):
            mine, theirs = ("A", "B") if name == "candidate_first" else ("B", "A")
            if soft:
                values[name] = soft[mine] + 0.5 * soft["tie"]
            else:
                values[name] = {mine: 1.0, theirs: 0.0}.get(verdict.value, 0.5)
            decisions.append({mine: "win", theirs: "loss"}.get(verdict.value, "tie"))
        consistent = len(set(decisions)) == 1
        decision = decisions[0] if consistent else "tie"
        score = sum(values.values()) / len(values) if consistent else 0.5
        return _JudgeResult(
            judge.label,
            score,
            decision,
            consistent=consistent if self.options.both_orders else None,
            orders=values,
            soft=any(a[1] is not None for a in answers),
        )

    def _aggregate(self, results: Sequence[_JudgeResult], flags: list[str], note: str) -> Grade:
        mode = self.options.mode
        lo, hi = self.scale
        subscores: dict[str, float] = {}
        for r in results:
            subscores[r.label] = r.score
            for order, value in r.orders.items():
                subscores[f"{r.label}.{order}"] = value
            if r.raw is not None:
                subscores[f"{r.label}.raw_score"] = r.raw
        if any(r.soft for r in results):
            flags = [*flags, JudgeFlag.LOGPROB_SCORE]
        consistency = [r.consistent for r in results if r.consistent is not None]
        if consistency:
            subscores["position_consistency"] = sum(consistency) / len(consistency)
            if not all(consistency):
                flags = [*flags, JudgeFlag.POSITION_INCONSISTENT]
        scores = [r.score for r in results]
        if mode == "score":
            raws = [r.raw if r.raw is not None else lo for r in results]
            raw = (
                statistics.median(raws)
                if self.options.aggregate == "majority"
                else sum(raws) / len(raws)
            )
            score = (raw - lo) / (hi - lo)
            subscores["raw_score"] = raw
            threshold = self.options.pass_threshold
            passed = None if threshold is None else raw >= threshold
            split = max(scores) - min(scores) > self.options.disagreement_threshold
            decision = f"{raw:g}"
        else:
            decision, score = self._decide(results)
            split = len({r.decision for r in results}) > 1
            passed = decision in ("win", "yes")
            if decision == "tie":  # no side taken: never agreement with a "baseline wins" label
                flags = [*flags, Flag.ABSTAINED]
        if len(results) > 1:
            agreeing = sum(
                1
                for r in results
                if (
                    abs(r.score - score) <= self.options.disagreement_threshold
                    if mode == "score"
                    else r.decision == decision
                )
            )
            subscores["jury_agreement"] = agreeing / len(results)
            if split:
                flags = [*flags, JudgeFlag.JURY_DISAGREEMENT]
        explanation = self._explain(results, decision) + note
        return Grade(
            score=min(1.0, max(0.0, score)),
            passed=passed,
            subscores=subscores,
            flags=flags,
            explanation=explanation,
        )

    def _decide(self, results: Sequence[_JudgeResult]) -> tuple[str, float]:
        """A jury's decision and score (pairwise / reference)."""
        mode = self.options.mode
        if self.options.aggregate == "mean":
            score = sum(r.score for r in results) / len(results)
            if mode == "reference":
                return ("yes" if score >= 0.5 else "no"), score
            return ("win" if score > 0.5 else "loss" if score < 0.5 else "tie"), score
        counts = Counter(r.decision for r in results).most_common()
        top = [d for d, c in counts if c == counts[0][1]]
        if len(top) > 1:  # a split vote: no side won
            decision = "tie" if mode == "pairwise" else "no"
            return decision, sum(r.score for r in results) / len(results)
        decision = top[0]
        majority = [r.score for r in results if r.decision == decision]
        return decision, sum(majority) / len(majority)

    def _explain(self, results: Sequence[_JudgeResult], decision: str) -> str:
        mode = self.options.mode
        parts = []
        for r in results:
            text = f"{r.label}: {r.decision}"
            if r.consistent is False:
                text += (
                    " (orders disagreed: "
                    + ", ".join(f"{k}={v:.2f}" for k, v in r.orders.items())
                    + ")"
                )
            parts.append(text)
        what = {"score": "score", "reference": "verdict", "pairwise": "candidate vs baseline"}
        head = f"{what[mode]}: {decision}"
        return (
            head
            if len(results) == 1 and results[0].consistent is not False
            else (f"{head} ({'; '.join(parts)})")
        )
