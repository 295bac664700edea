"""Composition: build one grader out of several, keeping each part's verdict visible.

``Gate`` zeroes the score when a check fails (format gates, length caps), ``WeightedSum`` mixes
scores, ``AllOf`` passes only when every part passes, ``Ensemble`` combines several scorers
(mean, worst case, uncertainty-penalised) and reports their disagreement. Each part's score lands
in ``subscores`` under the part's name (nested parts as ``outer.inner``), every part's flags are
kept, and an error in any part is an error of the whole: a composed grader never hides a part
that could not grade.
"""

from __future__ import annotations

from collections.abc import Sequence

from truegrade.core._errors import SpecError
from truegrade.core._grade import Flag, Grade
from truegrade.core._grader import BaseGrader, Grader, run_grader
from truegrade.core._sample import Sample

__all__ = ["AllOf", "Ensemble", "Gate", "WeightedSum", "part_name"]


def part_name(grader: object) -> str:
    """The name a part is reported under: its ``name`` attribute, else its class name."""
    name = getattr(grader, "name", None) or getattr(grader, "__name__", None)
    return str(name) if name else type(grader).__name__


def _unique_names(parts: Sequence[tuple[str, object]]) -> None:
    seen: set[str] = set()
    for name, _ in parts:
        if name in seen:
            raise SpecError(f"two parts are both named {name!r}; give each part a distinct 'name'")
        seen.add(name)


def _merge(parts: Sequence[tuple[str, Grade]]) -> tuple[dict[str, float], list[str], float]:
    subscores: dict[str, float] = {}
    flags: list[str] = []
    latency = 0.0
    for name, grade in parts:
        subscores[name] = grade.score
        for key, value in grade.subscores.items():
            subscores[f"{name}.{key}"] = value
        for flag in grade.flags:
            if flag not in flags:
                flags.append(flag)
        latency += grade.latency_ms
    return subscores, flags, latency


def _errors(parts: Sequence[tuple[str, Grade]]) -> str | None:
    errors = [f"{name}: {g.error}" for name, g in parts if g.error is not None]
    return "; ".join(errors) if errors else None


class Gate(BaseGrader):
    """Run ``then`` only where ``check`` passes; elsewhere the score is 0 with flag ``gate_failed``.

    Examples:
        A format gate in front of a correctness grader (``then`` never sees badly formatted
        responses, so it cannot reward them):

        >>> from truegrade import load_grader
        >>> g = Gate(load_grader({"type": "regex", "pattern": "^Answer:"}), load_grader("exact"))
    """

    kind = "gate"
    requires_reference = False

    def __init__(self, check: Grader, then: Grader, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.check = check
        self.then = then
        _unique_names([(part_name(check), check), (part_name(then), then)])

    def _precheck(self, sample: Sample) -> Grade | None:
        return None  # the parts check their own inputs

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        check_name, then_name = part_name(self.check), part_name(self.then)
        checks = run_grader(self.check, samples)
        open_idx = [i for i, g in enumerate(checks) if g.error is None and g.passed]
        thens = run_grader(self.then, [samples[i] for i in open_idx]) if open_idx else []
        by_index = dict(zip(open_idx, thens, strict=True))
        out: list[Grade] = []
        for i, check in enumerate(checks):
            then = by_index.get(i)
            parts = [(check_name, check)] + ([(then_name, then)] if then is not None else [])
            subscores, flags, latency = _merge(parts)
            error = _errors(parts)
            if then is None:
                if error is None:
                    flags.append(Flag.GATE_FAILED)
                why = check.explanation or "check did not pass"
                out.append(
                    Grade(
                        score=0.0,
                        passed=None if error else False,
                        subscores=subscores,
                        flags=flags,
                        explanation=f"gate {check_name!r} failed: {why}",
                        error=error,
                        latency_ms=latency,
                    )
                )
            else:
                out.append(
                    Grade(
                        score=0.0 if error else then.score,
                        passed=None if error else then.passed,
                        subscores=subscores,
                        flags=flags,
                        explanation=then.explanation,
                        error=error,
                        latency_ms=latency,
                    )
                )
        return out


class WeightedSum(BaseGrader):
    """Score = sum of weight x part score (divided by the total weight when ``normalize``).

    ``passed`` is ``score >= pass_threshold`` when a threshold is given, otherwise the AND of the
    parts' verdicts when every part gives one, otherwise ``None``.
    """

    kind = "weighted"
    requires_reference = False

    def __init__(
        self,
        parts: Sequence[tuple[Grader, float]],
        *,
        normalize: bool = True,
        pass_threshold: float | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        if not parts:
            raise SpecError("a weighted sum needs at least one part")
        for grader, weight in parts:
            if not weight >= 0:
                raise SpecError(f"part {part_name(grader)!r} has weight {weight}; weights are >= 0")
        total = sum(w for _, w in parts)
        if normalize and total <= 0:
            raise SpecError("the weights sum to 0; nothing to normalise by")
        _unique_names([(part_name(g), g) for g, _ in parts])
        self.parts = list(parts)
        self.normalize = normalize
        self.pass_threshold = pass_threshold
        self._total = total

    def _precheck(self, sample: Sample) -> Grade | None:
        return None

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        results = [(part_name(g), w, run_grader(g, samples)) for g, w in self.parts]
        out: list[Grade] = []
        for i in range(len(samples)):
            parts = [(name, grades[i]) for name, _, grades in results]
            subscores, flags, latency = _merge(parts)
            error = _errors(parts)
            score = sum(w * grades[i].score for _, w, grades in results)
            if self.normalize:
                score /= self._total
            verdicts = [g.passed for _, g in parts]
            passed: bool | None
            if error is not None:
                score, passed = 0.0, None
            elif self.pass_threshold is not None:
                passed = score >= self.pass_threshold
            elif all(v is not None for v in verdicts):
                passed = all(verdicts)
            else:
                passed = None
            out.append(
                Grade(
                    score=score,
                    passed=passed,
                    subscores=subscores,
                    flags=flags,
                    explanation="; ".join(
                        f"{n}: {g.explanation}" for n, g in parts if g.explanation
                    ),
                    error=error,
                    latency_ms=latency,
                )
            )
        return out


class AllOf(BaseGrader):
    """Pass (score 1) only when every part passes; else score 0, naming the parts that failed."""

    kind = "all_of"
    requires_reference = False

    def __init__(self, parts: Sequence[Grader], *, name: str | None = None) -> None:
        super().__init__(name=name)
        if not parts:
            raise SpecError("all_of needs at least one part")
        _unique_names([(part_name(g), g) for g in parts])
        self.parts = list(parts)

    def _precheck(self, sample: Sample) -> Grade | None:
        return None

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        results = [(part_name(g), run_grader(g, samples)) for g in self.parts]
        out: list[Grade] = []
        for i in range(len(samples)):
            parts = [(name, grades[i]) for name, grades in results]
            subscores, flags, latency = _merge(parts)
            error = _errors(parts)
            failed = [name for name, g in parts if not g.passed]
            passed = None if error else not failed
            explanation = "all parts passed" if passed else f"failed: {', '.join(failed)}"
            out.append(
                Grade(
                    score=1.0 if passed else 0.0,
                    passed=passed,
                    subscores=subscores,
                    flags=flags,
                    explanation=explanation,
                    error=error,
                    latency_ms=latency,
                )
            )
        return out


class Ensemble(BaseGrader):
    """Several graders (reward models, judges, anything) scored as one, with their disagreement.

    ``combine`` is ``mean``; ``min`` (worst case: the optimizer must fool every member); or
    ``uncertainty`` (``mean - lam * variance`` across members, penalising responses the members
    disagree on). The members' scores, their standard deviation (``disagreement``) and their
    range (``spread``) are reported per item in ``subscores``: disagreement rising during
    training is the signal the monitor watches. Ensembles reduce overoptimization; they do not
    remove it.

    Examples:
        >>> from truegrade import load_grader
        >>> g = load_grader({"type": "ensemble", "combine": "min",
        ...                  "members": ["numeric", {"type": "exact", "name": "em"}]})
    """

    kind = "ensemble"
    requires_reference = False

    def __init__(
        self,
        members: Sequence[Grader],
        *,
        combine: str = "mean",
        lam: float = 1.0,
        pass_threshold: float | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        if len(members) < 2:
            raise SpecError("an ensemble needs at least two members")
        if combine not in ("mean", "min", "uncertainty"):
            raise SpecError(f"combine must be mean, min or uncertainty, got {combine!r}")
        if not lam >= 0:
            raise SpecError(f"lambda must be >= 0, got {lam}")
        _unique_names([(part_name(g), g) for g in members])
        self.members = list(members)
        self.parts = self.members  # composition walkers see the members
        self.combine = combine
        self.lam = lam
        self.pass_threshold = pass_threshold

    def _precheck(self, sample: Sample) -> Grade | None:
        return None

    def _grade_valid(self, samples: list[Sample]) -> list[Grade]:
        results = [(part_name(g), run_grader(g, samples)) for g in self.members]
        out: list[Grade] = []
        for i in range(len(samples)):
            parts = [(name, grades[i]) for name, grades in results]
            subscores, flags, latency = _merge(parts)
            error = _errors(parts)
            scores = [g.score for _, g in parts]
            mean = sum(scores) / len(scores)
            variance = sum((s - mean) ** 2 for s in scores) / len(scores)
            subscores["disagreement"] = variance**0.5
            subscores["spread"] = max(scores) - min(scores)
            if self.combine == "mean":
                score = mean
            elif self.combine == "min":
                score = min(scores)
            else:
                score = mean - self.lam * variance
            passed = None if self.pass_threshold is None else score >= self.pass_threshold
            out.append(
                Grade(
                    score=0.0 if error else score,
                    passed=None if error else passed,
                    subscores=subscores,
                    flags=flags,
                    explanation=f"{self.combine} of {len(scores)} members "
                    f"(disagreement {subscores['disagreement']:.3g})",
                    error=error,
                    latency_ms=latency,
                )
            )
        return out
