"""Local reward models: a Hugging Face sequence classifier in this process, loaded once.

``load_local_model`` keeps one model and tokenizer per (path, device, dtype) for the life of
the process, so every grader (and every rebuild of a grader from its spec, as a worker or the
reward server does) shares it: a worker loads each model once. torch and transformers are
imported only here and only when a model is first needed; without them the grader's spec fails
with the one-line install hint.

Two details decide whether a batched score equals the score of the sample alone:

* **Padding.** Batches are padded on the right, so every sample keeps positions 0..n-1 (left
  padding shifts absolute positions, which changes scores on models that embed them).
* **The pad id.** A decoder reward model reads its head at the last token that is not padding,
  found by comparing with ``pad_token_id``. Many reward models have no pad token (padding with
  EOS is the usual fix), and then a response that ends with EOS, or contains the pad token's
  text, moves the position the head reads. So each batch is padded with an id that occurs in
  none of its inputs, and the model is told that id for that forward pass only.

Nothing here ever runs model text: it is tokenized and fed to the network, no more.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from truegrade.core import Sample, SpecError
from truegrade.graders.reward_model._inputs import ChatMode, conversation, plain_text, uses_chat
from truegrade.graders.reward_model._raw import RawScore, RewardModelFlag

__all__ = [
    "INSTALL_HINT",
    "LocalBackend",
    "LocalModel",
    "load_local_model",
    "loaded_models",
    "require_extra",
    "unload_local_models",
]

INSTALL_HINT = "pip install 'truegrade[rm]'"
"""How to get what the local backend needs."""

_LIMIT_UNSET = 1_000_000  # tokenizers without a known limit report a huge sentinel


def require_extra() -> None:
    """Raise a ``SpecError`` with the install hint when torch or transformers is missing."""
    missing = []
    for name in ("torch", "transformers"):
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a module blocked or half-imported
            found = False
        if not found:
            missing.append(name)
    if missing:
        raise SpecError(
            f"a local reward model needs {' and '.join(missing)}, which are not installed: "
            f"{INSTALL_HINT}"
        )


@dataclass
class LocalModel:
    """A loaded reward model, shared by every grader of the process that names it.

    Attributes:
        model: The ``AutoModelForSequenceClassification``, in eval mode on ``device``.
        tokenizer: Its tokenizer.
        device: Where it runs (``auto`` resolved).
        limit: Tokens it reads at most by default (the tokenizer's or the position limit).
        lock: Held while tokenizing and running a batch: the tokenizer's truncation side and
            the model's pad id are set per call.
    """

    model: Any
    tokenizer: Any
    device: str
    limit: int | None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_input_embeddings().num_embeddings)


_models: dict[tuple[str, str, str], LocalModel] = {}
_load_lock = threading.Lock()


def _resolve_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _resolve_dtype(dtype: str, device: str) -> str:
    # on a CPU, half precision is slow or unsupported: ``auto`` is float32 there, and the
    # checkpoint's own dtype on an accelerator
    return "float32" if dtype == "auto" and device == "cpu" else dtype


def _dtype_argument(dtype: str) -> dict[str, Any]:
    import torch
    import transformers

    value: Any = dtype if dtype == "auto" else getattr(torch, dtype)
    major, minor = (int(part) for part in transformers.__version__.split(".")[:2])
    name = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
    return {name: value}


def _model_key(path: str) -> str:
    local = Path(path).expanduser()
    return str(local.resolve()) if local.exists() else path


def load_local_model(path: str, *, device: str = "auto", dtype: str = "auto") -> LocalModel:
    """The model at ``path`` on ``device`` in ``dtype``: loaded on the first call, then shared.

    Raises:
        SpecError: torch or transformers is not installed.
        OSError, ValueError...: the model cannot be loaded (as transformers reports it).
    """
    require_extra()
    resolved = _resolve_device(device)
    key = (_model_key(path), resolved, _resolve_dtype(dtype, resolved))
    with _load_lock:
        loaded = _models.get(key)
        if loaded is not None:
            return loaded
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(key[0])
        model = AutoModelForSequenceClassification.from_pretrained(
            key[0], **_dtype_argument(key[2])
        )
        model.to(resolved)
        model.eval()
        limit = getattr(tokenizer, "model_max_length", None)
        if not (isinstance(limit, int) and 0 < limit < _LIMIT_UNSET):
            limit = getattr(model.config, "max_position_embeddings", None)
        loaded = LocalModel(
            model, tokenizer, resolved, limit if isinstance(limit, int) and limit > 0 else None
        )
        _models[key] = loaded
        return loaded


def loaded_models() -> list[tuple[str, str, str]]:
    """The (path, device, dtype) of every model this process holds."""
    with _load_lock:
        return list(_models)


def unload_local_models() -> None:
    """Forget every loaded model (their memory is freed once no grader is using them)."""
    with _load_lock:
        _models.clear()


def _pad_configs(model: Any) -> list[Any]:
    """The configs whose ``pad_token_id`` the head reads (a multimodal config nests one)."""
    configs = [model.config]
    text = getattr(model.config, "get_text_config", None)
    if callable(text):
        inner = text()
        if inner is not model.config:
            configs.append(inner)
    return configs


def _absent_id(loaded: LocalModel, present: set[int]) -> int:
    tokenizer = loaded.tokenizer
    for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if isinstance(candidate, int) and candidate not in present:
            return candidate
    return next(i for i in range(loaded.vocab_size) if i not in present)


def forward(loaded: LocalModel, rows: Sequence[Sequence[int]], label_index: int) -> list[float]:
    """The reward head's output ``label_index`` for each row of token ids, in one padded
    batch (the caller holds ``loaded.lock``)."""
    import torch

    width = max(len(r) for r in rows)
    pad = _absent_id(loaded, {t for r in rows for t in r})
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(list(row), dtype=torch.long)
        mask[i, : len(row)] = 1
    configs = _pad_configs(loaded.model)
    saved = [c.pad_token_id for c in configs]
    for c in configs:
        c.pad_token_id = pad
    try:
        with torch.inference_mode():
            out = loaded.model(
                input_ids=ids.to(loaded.device), attention_mask=mask.to(loaded.device)
            )
    finally:
        for c, value in zip(configs, saved, strict=True):
            c.pad_token_id = value
    logits = out.logits
    if logits.shape[-1] <= label_index:
        raise ValueError(
            f"label_index {label_index} is out of range: the model has {logits.shape[-1]} labels"
        )
    values: list[float] = logits[:, label_index].float().cpu().tolist()
    return values


@dataclass
class _Encoded:
    ids: list[int] | None
    truncated: bool = False
    error: str | None = None


class LocalBackend:
    """Scores samples with a local model, in length-sorted batches.

    Args:
        path: The model directory (or hub id).
        device / dtype: Where and in what precision (see ``RewardModelOptions``).
        batch_size: Samples per forward pass.
        max_length: Tokens read at most (None: the model's limit).
        truncation_side: ``left`` keeps the end of an over-long input.
        chat_template: When to apply the model's chat template.
        separator: Between prompt and response in plain text.
        label_index: Which head output is the reward.
    """

    def __init__(
        self,
        path: str,
        *,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 8,
        max_length: int | None = None,
        truncation_side: str = "left",
        chat_template: ChatMode = "auto",
        separator: str = "\n\n",
        label_index: int = 0,
    ) -> None:
        self.path = path
        self.device = device
        self.dtype = dtype
        self.batch_size = batch_size
        self.max_length = max_length
        self.truncation_side = truncation_side
        self.chat_template: ChatMode = chat_template
        self.separator = separator
        self.label_index = label_index

    def __repr__(self) -> str:
        return f"LocalBackend({self.path!r}, device={self.device!r})"

    def score(self, samples: Sequence[Sample]) -> list[RawScore]:
        """One raw score (or error) per sample, in order; a batch that fails fails alone."""
        try:
            loaded = load_local_model(self.path, device=self.device, dtype=self.dtype)
        except Exception as exc:
            why = f"cannot load the reward model at {self.path}: {type(exc).__name__}: {exc}"
            return [RawScore.failed(why, RewardModelFlag.MODEL_ERROR) for _ in samples]
        with loaded.lock:
            encoded = [self._encode(loaded, s) for s in samples]
            results: list[RawScore | None] = [
                None if e.ids else RawScore.failed(e.error or "", RewardModelFlag.MODEL_ERROR)
                for e in encoded
            ]
            todo = sorted(
                (i for i, e in enumerate(encoded) if e.ids is not None),
                key=lambda i: len(encoded[i].ids or ()),
            )
            for start in range(0, len(todo), self.batch_size):
                chunk = todo[start : start + self.batch_size]
                try:
                    values = forward(
                        loaded, [encoded[i].ids or [] for i in chunk], self.label_index
                    )
                except Exception as exc:
                    why = f"the reward model failed: {type(exc).__name__}: {exc}"
                    for i in chunk:
                        results[i] = RawScore.failed(why, RewardModelFlag.MODEL_ERROR)
                    continue
                for i, value in zip(chunk, values, strict=True):
                    flags = (RewardModelFlag.TRUNCATED,) if encoded[i].truncated else ()
                    results[i] = RawScore.of(value, *flags)
        return [r if r is not None else RawScore.failed("not scored") for r in results]

    def _encode(self, loaded: LocalModel, sample: Sample) -> _Encoded:
        try:
            return self._tokens(loaded, sample)
        except Exception as exc:  # a template that rejects the conversation, a broken tokenizer
            return _Encoded(None, error=f"cannot tokenize the input: {type(exc).__name__}: {exc}")

    def _tokens(self, loaded: LocalModel, sample: Sample) -> _Encoded:
        tokenizer = loaded.tokenizer
        if uses_chat(sample, self.chat_template):
            if not getattr(tokenizer, "chat_template", None):
                return _Encoded(
                    None,
                    error=f"the tokenizer at {self.path} has no chat template; "
                    "set chat_template: never to score prompt and response as plain text",
                )
            text = tokenizer.apply_chat_template(conversation(sample), tokenize=False)
            special = False  # the template writes its own BOS and turn markers
        else:
            text = plain_text(sample, self.separator)
            special = True
        ids: list[int] = tokenizer(text, add_special_tokens=special)["input_ids"]
        limit = self.max_length or loaded.limit
        truncated = limit is not None and len(ids) > limit
        if truncated:
            tokenizer.truncation_side = self.truncation_side
            ids = tokenizer(text, add_special_tokens=special, truncation=True, max_length=limit)[
                "input_ids"
            ]
        if not ids:
            return _Encoded(None, error="nothing to score: the input has no tokens")
        return _Encoded(ids, truncated)
