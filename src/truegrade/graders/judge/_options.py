"""The ``judge`` grader's spec: which judges, which task, which controls.

A spec names one judge (``endpoint`` + ``model``) or a jury (``judges``: a list of them), the
task (``mode``), and the controls. Every option is validated with a message that names it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from truegrade.core import DataError, read_text
from truegrade.graders.judge._prompts import Mode
from truegrade.judge import EndpointConfig

__all__ = ["JudgeEndpoint", "JudgeOptions", "template_text"]


class JudgeEndpoint(EndpointConfig):
    """One judge of a jury: an ``EndpointConfig`` (``endpoint``, ``model``, ``api_key_env``,
    ``headers``, ``timeout_s``, ``max_retries``, ``concurrency``, rate limits, prices) with a
    name.

    Attributes:
        name: How its results are labelled in subscores (default: the model name).
    """

    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.model

    def client_config(self) -> EndpointConfig:
        return EndpointConfig.model_validate(self.model_dump(exclude={"name"}))


_ENDPOINT_FIELDS = (set(EndpointConfig.model_fields) | {"endpoint"}) - {"name"}


class JudgeOptions(BaseModel):
    """Options of the ``judge`` grader.

    Attributes:
        mode: ``score`` (a scale), ``reference`` (yes/no against the reference answer) or
            ``pairwise`` (against a baseline response).
        endpoint / model / api_key_env / ...: One judge, given inline (any ``JudgeEndpoint``
            field), or
        judges: a jury, a list of ``JudgeEndpoint``.
        aggregate: How a jury decides: ``majority`` (the most common verdict; for scores, the
            median) or ``mean`` (of the normalised scores).
        disagreement_threshold: ``mean`` / scores: flag ``jury_disagreement`` when the judges'
            normalised scores span more than this.
        template: A built-in template name (``default``), a template file, or the text itself.
        scale_min / scale_max: The score scale (``score`` mode).
        pass_threshold: ``score`` mode: a raw score at or above it passes (None: no pass/fail).
        baseline_field: ``pairwise``: where the baseline response is: ``reference`` or
            ``metadata.KEY``.
        both_orders: ``pairwise``: judge A-vs-B and B-vs-A; disagreeing orders become a tie.
        allow_self_judge: Allow a judge from the policy's model family (self-preference).
        policy_model: The policy's model name, when samples do not carry ``metadata.model``.
        model_families: Extra ``name prefix -> family`` rules (e.g. ``{vicuna: meta}``).
        reject_master_keys: ``reference``: fail content-free responses (``:``, ``Solution``)
            without asking the judge.
        reject_injections: Fail responses flagged ``injection_suspected`` without asking the
            judge, with the findings as the reason: the fence keeps a careful judge from
            obeying them, but a judge that obeys fenced text anyway would pay the planted
            verdict, and an injection attempt should never pay. ``false``: flag them and let
            the fenced judge grade them (for tasks whose honest answers are verdicts, such as
            "rate this essay": ``Rating: 7/10`` alone on a line is what a planted verdict
            looks like).
        temperature / max_tokens / seed: Sampling (part of the cache key).
        logprobs / top_logprobs: Ask for token log-probabilities and score from them when the
            endpoint returns them.
        cache: ``default`` (the user cache directory), a SQLite path, or null for none.
        name / max_response_chars: As for every grader.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    max_response_chars: int | None = Field(default=200_000, gt=0)
    mode: Literal["score", "reference", "pairwise"] = "score"
    judges: list[JudgeEndpoint] = Field(default_factory=list)
    aggregate: Literal["majority", "mean"] = "majority"
    disagreement_threshold: float = Field(default=0.25, ge=0, le=1)
    template: str = "default"
    scale_min: int = 1
    scale_max: int = 10
    pass_threshold: float | None = None
    baseline_field: str = "reference"
    both_orders: bool = True
    allow_self_judge: bool = False
    policy_model: str | None = None
    model_families: dict[str, str] = Field(default_factory=dict)
    reject_master_keys: bool = True
    reject_injections: bool = True
    temperature: float = Field(default=0.0, ge=0)
    max_tokens: int = Field(default=1024, gt=0)
    seed: int | None = 0
    logprobs: bool = True
    top_logprobs: int = Field(default=10, ge=1, le=20)
    cache: str | None = "default"

    @model_validator(mode="before")
    @classmethod
    def _inline_judge(cls, data: object) -> object:
        """Fold inline endpoint fields (``endpoint``, ``model``...) into a one-judge jury."""
        if not isinstance(data, dict):
            return data
        inline = {k: data[k] for k in list(data) if k in _ENDPOINT_FIELDS}
        if not inline:
            return data
        if data.get("judges"):
            raise ValueError(
                "give either one judge inline (endpoint, model...) or a list 'judges', not both"
            )
        rest = {k: v for k, v in data.items() if k not in inline}
        return {**rest, "judges": [inline]}

    @model_validator(mode="after")
    def _consistent(self) -> JudgeOptions:
        if not self.judges:
            raise ValueError("name a judge: 'endpoint' and 'model', or a list 'judges'")
        labels = [j.label for j in self.judges]
        if len(set(labels)) != len(labels):
            raise ValueError(f"jury members need distinct names, got {labels}")
        if self.scale_max <= self.scale_min:
            raise ValueError("scale_max must be greater than scale_min")
        if self.pass_threshold is not None and not (
            self.scale_min <= self.pass_threshold <= self.scale_max
        ):
            raise ValueError("pass_threshold must lie on the scale")
        if self.baseline_field != "reference" and not self.baseline_field.startswith("metadata."):
            raise ValueError("baseline_field is 'reference' or 'metadata.KEY'")
        return self

    def template_text(self, base_dir: Path | None) -> str:
        """The template: built-in, read from a file, or given inline."""
        return template_text(self.template, self.mode, base_dir)


def template_text(template: str, mode: Mode, base_dir: Path | None) -> str:
    """A ``template`` option's text: ``default`` (the built-in one for ``mode``), a file
    (relative to ``base_dir``), or the template itself.

    Raises:
        ValueError: the file cannot be read.
    """
    if template == "default":
        from truegrade.graders.judge._prompts import BUILTIN_TEMPLATES

        return BUILTIN_TEMPLATES[mode]
    path = Path(template)
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    if "\n" not in template and "{" not in template and path.suffix:
        try:
            return read_text(path, "judge template")
        except DataError as exc:
            raise ValueError(str(exc)) from None
    return template
