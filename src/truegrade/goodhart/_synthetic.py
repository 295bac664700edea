"""Synthetic data with known answers, for tests, benchmarks and the demo.

The best-of-n model is the one from the field guide: gold quality ``X ~ N(0, 1)`` and a proxy
``X + Z`` that sees it through noise. With Gaussian noise, selecting on the proxy keeps selecting
for X, and gold rises with n forever. With heavy-tailed noise (Student-t, 2 degrees of freedom)
the largest proxy scores are mostly large noise, so gold rises and then falls back: the
overoptimization curve, with a peak near n = 11.

The training-log model plants one known failure after a known step, so a monitor can be checked
for what it finds, when, and for staying quiet on a clean run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["SCENARIOS", "SyntheticPool", "synthetic_pool", "synthetic_training_log"]


@dataclass(frozen=True, eq=False)
class SyntheticPool:
    """Samples of a best-of-n pool: ``prompts * pool_size`` rows.

    Attributes:
        proxy: ``gold + noise`` per sample.
        gold: The true quality per sample.
        groups: Prompt id per sample (``"p0"``, ``"p1"``...).
        noise: ``"gaussian"`` or ``"student_t"``.
    """

    proxy: NDArray[np.float64]
    gold: NDArray[np.float64]
    groups: list[str]
    noise: str

    def rows(self) -> list[dict[str, Any]]:
        """One row per sample, as a file for ``truegrade overopt`` would hold it."""
        return [
            {"id": i, "prompt_id": g, "proxy": float(x), "metadata": {"gold": float(y)}}
            for i, (g, x, y) in enumerate(zip(self.groups, self.proxy, self.gold, strict=True))
        ]


def synthetic_pool(
    prompts: int = 1000,
    pool_size: int = 100,
    *,
    noise: str = "gaussian",
    dof: float = 2.0,
    noise_scale: float = 1.0,
    seed: int = 0,
) -> SyntheticPool:
    """Gold ``X ~ N(0, 1)``, proxy ``X + Z`` with Gaussian or Student-t noise ``Z``.

    Args:
        prompts: Number of prompts.
        pool_size: Samples per prompt.
        noise: ``"gaussian"`` or ``"student_t"``.
        dof: Degrees of freedom of the Student-t noise (2: heavy tails, infinite variance).
        noise_scale: Scale of Z.
        seed: Random seed.

    Examples:
        >>> pool = synthetic_pool(prompts=3, pool_size=4, seed=1)
        >>> pool.proxy.shape, pool.groups[:5]
        ((12,), ['p0', 'p0', 'p0', 'p0', 'p1'])
    """
    if noise not in ("gaussian", "student_t"):
        raise ValueError("noise must be 'gaussian' or 'student_t'")
    rng = np.random.default_rng(seed)
    size = prompts * pool_size
    gold = rng.standard_normal(size)
    z = rng.standard_normal(size) if noise == "gaussian" else rng.standard_t(dof, size)
    groups = [f"p{i}" for i in range(prompts) for _ in range(pool_size)]
    return SyntheticPool(proxy=gold + noise_scale * z, gold=gold, groups=groups, noise=noise)


SCENARIOS = ("clean", "divergence", "length", "constant_batch", "flags", "disagreement")


def synthetic_training_log(
    scenario: str = "clean",
    *,
    steps: int = 200,
    batch_size: int = 32,
    onset: int | None = None,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per-sample rows of a training run, clean or with one failure planted from ``onset``.

    Every row has ``step``, ``reward`` (the proxy), ``gold``, ``length``, ``flags`` and
    ``subscores`` (two reward models, ``rm_a`` and ``rm_b``). In the clean run gold and proxy
    rise together and everything else is stationary. Scenarios:

    * ``divergence``: from ``onset`` the proxy keeps rising while gold declines.
    * ``length``: from ``onset`` responses grow and the proxy pays for length; gold is flat.
    * ``constant_batch``: at ``onset`` and the next two steps every reward is 0 (a broken grader).
    * ``flags``: from ``onset`` the ``hedged`` flag climbs from 2% to ~30%.
    * ``disagreement``: from ``onset`` the two reward models drift apart.

    Args:
        scenario: ``clean``, ``divergence``, ``length``, ``constant_batch``, ``flags`` or
            ``disagreement``.
        steps: Training steps.
        batch_size: Samples per step.
        onset: First step of the failure (default: 60% of the way through).
        seed: Random seed.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; choose one of {', '.join(SCENARIOS)}")
    rng = np.random.default_rng(seed)
    start = int(0.6 * steps) if onset is None else onset
    rows: list[dict[str, Any]] = []
    for step in range(steps):
        after = max(0, step - start) if scenario != "clean" else 0
        skill = 0.6 * (1 - np.exp(-step / (steps / 3)))  # learning curve
        hack = 0.0
        if scenario == "divergence" and after:
            skill -= 0.004 * after
            hack = 0.009 * after
        if scenario == "length" and after:
            skill = 0.6 * (1 - np.exp(-start / (steps / 3)))  # real progress stops
        gold = skill + rng.normal(0, 0.3, batch_size)
        length = rng.normal(300, 60, batch_size)
        if scenario == "length" and after:
            length = length + 4.0 * after
        length_bonus = 0.004 * (length - 300) if scenario == "length" and after else 0.0
        hedge_rate = 0.02 + (min(0.28, 0.006 * after) if scenario == "flags" else 0.0)
        hedged = rng.random(batch_size) < hedge_rate
        reward = (
            gold
            + hack
            + length_bonus
            + 0.3 * hedged * (scenario == "flags")
            + rng.normal(0, 0.2, batch_size)
        )
        drift = 0.01 * after if scenario == "disagreement" else 0.0
        rm_a = reward + rng.normal(0, 0.1, batch_size)
        rm_b = reward + drift * rng.standard_normal(batch_size) + rng.normal(0, 0.1, batch_size)
        if scenario == "constant_batch" and start <= step < start + 3:
            reward = np.zeros(batch_size)
        for i in range(batch_size):
            rows.append(
                {
                    "step": step,
                    "reward": float(reward[i]),
                    "gold": float(gold[i]),
                    "length": int(max(1.0, length[i])),
                    "flags": ["hedged"] if hedged[i] else [],
                    "subscores": {"rm_a": float(rm_a[i]), "rm_b": float(rm_b[i])},
                }
            )
    return rows
