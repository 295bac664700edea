"""Session fixtures: tiny reward models written once per test session, and the reward model
test server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.graders.reward_model.rm_test_server import RewardModelTestServer, run_test_server
from tests.graders.reward_model.tiny import build_tiny_rm


@pytest.fixture(scope="session")
def tiny_rms(tmp_path_factory) -> dict[str, Path]:
    """``a``, ``b``, ``c``: three members (different seeds); ``gold``: a held-out model;
    ``nopad``: no pad token (padding must not move the scored position); ``plain``: no chat
    template; ``two_heads``: two labels."""
    root = tmp_path_factory.mktemp("tiny_rms")
    return {
        "a": build_tiny_rm(root / "a", seed=1),
        "b": build_tiny_rm(root / "b", seed=2),
        "c": build_tiny_rm(root / "c", seed=3),
        "gold": build_tiny_rm(root / "gold", seed=4),
        "nopad": build_tiny_rm(root / "nopad", seed=5, pad_token=False),
        "plain": build_tiny_rm(root / "plain", seed=6, chat_template=False),
        "two_heads": build_tiny_rm(root / "two_heads", seed=7, num_labels=2),
    }


@pytest.fixture(scope="session")
def rm_server() -> Iterator[RewardModelTestServer]:
    with run_test_server() as server:
        yield server


def rm_spec(path: Path, name: str | None = None, **options: Any) -> dict[str, Any]:
    """The spec of a tiny reward model on the CPU."""
    named = {"name": name} if name else {}
    return {"type": "reward_model", "path": str(path), "device": "cpu", **named, **options}
