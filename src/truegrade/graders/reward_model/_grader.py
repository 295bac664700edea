"""``reward_model``: a learned reward model as a grader, local or served.

A reward model trained on preferences is the grader RL post-training optimizes hardest
against, and the one with no outcome to check: every analysis truegrade has (attack,
validate, pairwise accuracy, overoptimization curves, ensembles) should see it as just another
grader. This one scores ``prompt + response`` with a Hugging Face sequence-classification model
in this process (``path``) or with a served one (``url``: vLLM's ``/pooling`` or ``/classify``,
or a JSON endpoint).

What it will not do: invent a scale (scores are raw logits unless the spec asks for a sigmoid
or a z-score), hide a failure (a sample the model could not score is a grade with ``error`` and
a flag, and the rest of the batch goes on), or silently score something other than what it
was given (an over-long input is truncated from the left, keeping the end of the response, and
flagged ``truncated``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from truegrade.core import BaseGrader, DataError, Grade, Sample, SpecError
from truegrade.graders._kernel import validate_options
from truegrade.graders.judge import run_sync
from truegrade.graders.reward_model._http import HttpBackend
from truegrade.graders.reward_model._local import LocalBackend, require_extra
from truegrade.graders.reward_model._options import RewardModelOptions
from truegrade.graders.reward_model._raw import RawScore, RewardModelFlag
from truegrade.graders.reward_model._scale import ScoreScale
from truegrade.judge import open_cache

__all__ = ["RewardModelGrader"]


def _model_path(given: str, base_dir: Path | None) -> str:
    """A local directory (resolved against the spec's directory), or a hub id left as is."""
    path = Path(given).expanduser()
    if not path.is_absolute() and base_dir is not None and (base_dir / path).exists():
        path = base_dir / path
    if path.exists():
        return str(path.resolve())
    if path.is_absolute() or given.startswith((".", "~")):
        raise SpecError(f"no reward model at {path}")
    return given


def _data_path(given: str, base_dir: Path | None) -> Path:
    path = Path(given).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise SpecError(f"reference_set {path} does not exist")
    return path


class RewardModelGrader(BaseGrader):
    """A reward model's score, local (Hugging Face) or served (see the module docstring).

    Examples:
        >>> grader = RewardModelGrader.from_options(  # doctest: +SKIP
        ...     {"path": "models/my-rm", "normalize": "sigmoid", "pass_threshold": 0.5}
        ... )
        >>> served = RewardModelGrader.from_options(  # doctest: +SKIP
        ...     {"url": "http://localhost:8000/pooling", "model": "my-rm", "concurrency": 32}
        ... )
    """

    kind = "reward_model"
    family = "text"
    requires_reference = False

    def __init__(self, options: RewardModelOptions, *, base_dir: Path | None = None) -> None:
        super().__init__(name=options.name, max_response_chars=options.max_response_chars)
        self.options = options
        self.backend: LocalBackend | HttpBackend
        if options.resolved_backend == "local":
            require_extra()
            assert options.path is not None
            self.backend = LocalBackend(
                _model_path(options.path, base_dir),
                device=options.device,
                dtype=options.dtype,
                batch_size=options.batch_size or 8,
                max_length=options.max_length,
                truncation_side=options.truncation_side,
                chat_template=options.chat_template,
                separator=options.separator,
                label_index=options.label_index,
            )
        else:
            self.backend = HttpBackend(options, cache=open_cache(options.cache, base_dir))
        self.reference_set: Path | None = None
        self._scale: ScoreScale | None = None
        if options.normalize == "zscore" and options.reference_set is not None:
            self.reference_set = _data_path(options.reference_set, base_dir)
        elif options.normalize == "zscore":
            assert options.mean is not None
            assert options.std is not None
            self._scale = ScoreScale("zscore", options.mean, options.std, "the spec")
        else:
            self._scale = ScoreScale(options.normalize)
        self._scale_lock = threading.Lock()

    @classmethod
    def from_options(
        cls, options: dict[str, Any], base_dir: Path | None = None
    ) -> RewardModelGrader:
        """Build from a spec's options, with a clear error for unknown or invalid ones."""
        return cls(validate_options(RewardModelOptions, options), base_dir=base_dir)

    def usage_report(self) -> dict[str, Any]:
        """Requests, retries, cache hits and failures so far (served models only)."""
        return self.backend.usage.to_dict() if isinstance(self.backend, HttpBackend) else {}

    # -- scoring ---------------------------------------------------------------------------------

    async def raw_scores(self, samples: list[Sample]) -> list[RawScore]:
        """The model's raw output for each sample, before any scaling."""
        if isinstance(self.backend, HttpBackend):
            return await self.backend.ascore(samples)
        return await asyncio.to_thread(self.backend.score, samples)

    async def scale(self) -> ScoreScale:
        """The scaling in force; with a reference set, its raw scores are computed on the
        first call (a failure is retried on the next).

        Raises:
            ValueError: the reference set cannot be read or gives no usable spread.
        """
        if self._scale is not None:
            return self._scale
        assert self.reference_set is not None
        from truegrade.data import read_samples

        try:
            reference = [s for _, s in read_samples(self.reference_set) if s.response is not None]
        except (DataError, OSError) as exc:
            raise ValueError(f"cannot read reference_set {self.reference_set}: {exc}") from None
        raw = await self.raw_scores(reference)
        values = [r.value for r in raw if r.value is not None]
        failed = len(raw) - len(values)
        source = f"reference set {self.reference_set.name}"
        if failed:
            source += f" ({failed} samples could not be scored and were left out)"
        scale = ScoreScale.from_reference(values, source)
        with self._scale_lock:
            if self._scale is None:
                self._scale = scale
            return self._scale

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        return run_sync(self._agrade_valid(samples))

    async def _agrade_valid(self, samples: list[Sample]) -> list[Grade]:
        start = time.perf_counter()
        try:
            scale = await self.scale()
        except ValueError as exc:
            return [Grade.failure(str(exc), RewardModelFlag.REFERENCE_SET) for _ in samples]
        raw = await self.raw_scores(samples)
        latency = (time.perf_counter() - start) * 1000 / max(1, len(samples))
        return [self._grade(r, scale, latency) for r in raw]

    def _grade(self, raw: RawScore, scale: ScoreScale, latency_ms: float) -> Grade:
        if raw.value is None:
            return Grade.failure(raw.error or "no score", *raw.flags, latency_ms=latency_ms)
        score = scale.apply(raw.value)
        threshold = self.options.pass_threshold
        explanation = f"reward {score:.4g}"
        if scale.kind != "none":
            explanation += f" ({scale.describe()} of raw {raw.value:.4g})"
        if RewardModelFlag.TRUNCATED in raw.flags:
            kept = "end" if self.options.truncation_side == "left" else "start"
            explanation += f"; the input was over max_length and the model read its {kept} only"
        return Grade(
            score=score,
            passed=None if threshold is None else score >= threshold,
            subscores={} if scale.kind == "none" else {"raw": raw.value},
            flags=list(raw.flags),
            explanation=explanation,
            latency_ms=latency_ms,
        )
