"""Shared by the tests that drive the training frameworks themselves (verl, TRL, OpenRLHF)."""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

_PIECE = r" ?[^ ]+"


def require(module: str, install: str) -> None:
    """Skip the calling test module when ``module`` is not installed (and only then).

    CI installs every framework extra and sets ``TRUEGRADE_REQUIRE_FRAMEWORKS=1`` (``.ci/run``),
    so there a missing one is a failure, not a skip: a test that quietly skipped there would pass
    while testing nothing.
    """
    if importlib.util.find_spec(module) is not None:
        return
    message = f"{module} is not installed: {install}"
    if os.environ.get("TRUEGRADE_REQUIRE_FRAMEWORKS") == "1" or os.environ.get("CI"):
        pytest.fail(f"{message} (CI installs it in .ci/run)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def build_tokenizer(path: Path, texts: Iterable[str]) -> Any:
    """A word-level tokenizer over the words of ``texts``, saved to ``path`` as a Hugging Face
    tokenizer (no download). Words keep their leading space and decode back exactly."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    pieces = sorted({piece for text in texts for piece in re.findall(_PIECE, text)})
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2} | {p: i + 3 for i, p in enumerate(pieces)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(_PIECE), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token="<eos>", pad_token="<pad>", unk_token="<unk>"
    )
    fast.save_pretrained(path)
    return fast
