"""The ``reward_model`` grader's spec: which model, what it reads, how its score is scaled.

One options model covers both backends, and every option belongs to one of them or to both:
an option of the other backend is an error that says so, never silently ignored. The backend
is inferred (``path`` means local, ``url`` means HTTP) unless named.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, model_validator

from truegrade.judge import JsonEndpointConfig, TransportConfig

__all__ = ["Protocol", "RewardModelOptions"]

Protocol = Literal["vllm_pooling", "vllm_classify", "json"]
"""How a served reward model is spoken to (see ``RewardModelOptions.protocol``)."""

_DEVICE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")
_LOCAL_ONLY = ("path", "device", "dtype", "truncation_side")
_HTTP_ONLY = ("url", "protocol", "model", "activation", "cache", *TransportConfig.model_fields)


class RewardModelOptions(TransportConfig):
    """Options of ``reward_model``.

    Attributes:
        name / max_response_chars: As for every grader.
        backend: ``local`` (a Hugging Face model in this process) or ``http`` (a served model);
            inferred from ``path`` / ``url`` when unset.
        chat_template: ``auto`` applies the model's chat template when the sample is
            conversational (its prompt or response is a list of messages); ``always`` also
            wraps text as a user turn and an assistant turn; ``never`` scores
            ``prompt + separator + response`` as plain text.
        separator: Between prompt and response when no chat template is applied.
        label_index: Which output of the classification head is the reward (0 for the usual
            one-label reward model).
        batch_size: Samples per forward pass (local, default 8) or per request (http, default
            1: one sample per request, concurrency does the rest; a conversation always goes
            alone, vLLM takes one per request).
        max_length: Tokens the model reads at most (local: default the tokenizer's or the
            model's limit; vLLM: sent as ``truncate_prompt_tokens``, which keeps the end).
        path: Local: a model directory (or a hub id, where the hub can be reached).
        device: Local: ``auto`` (CUDA when available), ``cpu``, ``cuda``, ``cuda:N``, ``mps``.
        dtype: Local: ``auto`` (float32 on CPU, the checkpoint's own on an accelerator),
            ``float32``, ``float16``, ``bfloat16``.
        truncation_side: Local: ``left`` (the default) drops the start of an over-long input
            and keeps the end of the response, which is what a last-token reward head reads
            and where a response says its answer; ``right`` keeps the start.
        url: HTTP: where to ``POST`` (``http://host:8000/pooling``, ``.../classify``, or a
            JSON endpoint of your own).
        protocol: HTTP: ``vllm_pooling``, ``vllm_classify`` or ``json``; inferred from the
            URL's last path segment (``/pooling``, ``/classify``, anything else ``json``).
            ``json`` sends ``{"prompt": ..., "response": ...}`` and reads ``{"score": x}``;
            with ``batch_size`` > 1 it sends a list of those and reads ``{"scores": [...]}``.
        model: HTTP: the served model's name (vLLM; optional when it serves one model).
        activation: HTTP, vLLM: let the server apply the head's activation (softmax or
            sigmoid). Off by default, so the score is the raw logit, as from a local model.
        cache: HTTP: ``default`` (the user cache directory), a SQLite path, or null for none.
        api_key_env: HTTP: the environment variable holding the API key, as for a judge.
        headers: HTTP: extra request headers, as for a judge.
        timeout_s: HTTP: the request timeout, as for a judge.
        max_retries: HTTP: retries of a failed request, as for a judge.
        backoff_initial_s: HTTP: the first retry's backoff, as for a judge.
        backoff_max_s: HTTP: the longest backoff, as for a judge.
        concurrency: HTTP: requests in flight, as for a judge.
        requests_per_minute: HTTP: the rate limit, as for a judge.
        normalize: ``none`` (raw scores, the default), ``sigmoid`` (of the raw score) or
            ``zscore`` (``(raw - mean) / std``, against ``reference_set`` or the given
            ``mean`` and ``std``). The raw score is kept in subscores as ``raw``.
        reference_set: A data file of samples (prompt and response) whose raw scores give
            the z-score's mean and (population) standard deviation. Scored once, the first
            time the grader grades.
        mean: The z-score's mean, given (with ``std``) instead of a reference set.
        std: The z-score's standard deviation, given with ``mean``.
        pass_threshold: A (normalised) score at or above it passes; None: no verdict, a score
            only.
    """

    name: str | None = None
    max_response_chars: int | None = Field(default=None, gt=0)
    backend: Literal["local", "http"] | None = None
    chat_template: Literal["auto", "always", "never"] = "auto"
    separator: str = "\n\n"
    label_index: int = Field(default=0, ge=0)
    batch_size: int | None = Field(default=None, ge=1)
    max_length: int | None = Field(default=None, gt=0)
    path: str | None = None
    device: str = "auto"
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = "auto"
    truncation_side: Literal["left", "right"] = "left"
    url: str | None = None
    protocol: Protocol | None = None
    model: str | None = None
    activation: bool = False
    cache: str | None = "default"
    normalize: Literal["none", "sigmoid", "zscore"] = "none"
    reference_set: str | None = None
    mean: float | None = None
    std: float | None = Field(default=None, gt=0)
    pass_threshold: float | None = None

    @model_validator(mode="after")
    def _consistent(self) -> RewardModelOptions:
        given = self.model_fields_set
        backend = self.backend or ("http" if self.url is not None else "local")
        if backend == "local":
            if self.path is None:
                raise ValueError("name the model: 'path' (local) or 'url' (served over HTTP)")
            wrong = [k for k in _HTTP_ONLY if k in given]
            if wrong:
                raise ValueError(f"{', '.join(wrong)}: only for backend http")
            if not _DEVICE.match(self.device):
                raise ValueError(f"device is auto, cpu, cuda, cuda:N or mps; got {self.device!r}")
        else:
            if self.url is None:
                raise ValueError("backend http needs a 'url'")
            wrong = [k for k in _LOCAL_ONLY if k in given]
            if wrong:
                raise ValueError(f"{', '.join(wrong)}: only for backend local")
            if self.max_length is not None and self.resolved_protocol == "json":
                raise ValueError("max_length: a json endpoint truncates by itself")
        stats = [k for k in ("reference_set", "mean", "std") if k in given]
        if self.normalize == "zscore":
            explicit = self.mean is not None and self.std is not None
            if explicit == (self.reference_set is not None) or (
                not explicit and (self.mean is not None or self.std is not None)
            ):
                raise ValueError("zscore needs either 'reference_set' or both 'mean' and 'std'")
        elif stats:
            raise ValueError(f"{', '.join(stats)}: only with normalize: zscore")
        return self

    @property
    def resolved_backend(self) -> Literal["local", "http"]:
        return self.backend or ("http" if self.url is not None else "local")

    @property
    def resolved_protocol(self) -> Protocol:
        if self.protocol is not None:
            return self.protocol
        tail = (self.url or "").split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        return {"pooling": "vllm_pooling", "classify": "vllm_classify"}.get(  # type: ignore[return-value]
            tail, "json"
        )

    def endpoint(self) -> JsonEndpointConfig:
        """The HTTP endpoint, with this spec's limits and retries."""
        assert self.url is not None
        transport = {k: getattr(self, k) for k in TransportConfig.model_fields}
        return JsonEndpointConfig(url=self.url, **transport)
