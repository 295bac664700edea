"""Overoptimization curves with tiny reward models as the proxy (one member, or an ensemble)
and a held-out tiny model as the gold, checked against best-of-n by hand at n = 1 and at the
full pool."""

from __future__ import annotations

import random

import pytest

from tests.graders.reward_model.fixtures import rm_spec, tiny_rms
from tests.graders.reward_model.tiny import WORDS
from truegrade.core import Sample, load_grader
from truegrade.goodhart import overoptimization

__all__ = ["tiny_rms"]

PROMPTS, POOL = 12, 8


def pools() -> list[Sample]:
    rng = random.Random(0)
    words = WORDS.split()
    rows = []
    for p in range(PROMPTS):
        prompt = " ".join(rng.choices(words, k=5))
        for k in range(POOL):
            response = " ".join(rng.choices(words, k=rng.randint(2, 12)))
            rows.append(Sample(id=f"{p}-{k}", prompt=prompt, response=response, group=f"p{p}"))
    return rows


def by_prompt(values: list[float]) -> list[list[float]]:
    return [values[p * POOL : (p + 1) * POOL] for p in range(PROMPTS)]


@pytest.mark.parametrize("proxy", ["member", "ensemble_mean", "ensemble_min"])
def test_best_of_n_curves_with_a_reward_model_proxy(tiny_rms, proxy):
    rows = pools()
    members = [rm_spec(tiny_rms[n], n) for n in ("a", "b", "c")]
    spec = {
        "member": members[0],
        "ensemble_mean": {"type": "ensemble", "members": members},
        "ensemble_min": {"type": "ensemble", "combine": "min", "members": members},
    }[proxy]
    proxy_grades = load_grader(spec).grade_batch(rows)
    gold_grades = load_grader(rm_spec(tiny_rms["gold"])).grade_batch(rows)
    assert all(g.error is None for g in proxy_grades + gold_grades)
    xs, ys = [g.score for g in proxy_grades], [g.score for g in gold_grades]
    result = overoptimization(
        xs, ys, [s.group for s in rows], ns=[2, 4, POOL], n_resamples=200, seed=0
    )
    assert (result.prompts, result.samples) == (PROMPTS, PROMPTS * POOL)
    first, *_, last = result.points
    # n = 1: the pool means; n = the pool: the gold of each pool's proxy favourite
    assert first.proxy.estimate == pytest.approx(sum(xs) / len(xs))
    assert first.gold.estimate == pytest.approx(sum(ys) / len(ys))
    favourites = [
        max(zip(px, gy, strict=True)) for px, gy in zip(by_prompt(xs), by_prompt(ys), strict=True)
    ]
    assert last.n == POOL
    assert last.proxy.estimate == pytest.approx(sum(f[0] for f in favourites) / PROMPTS)
    assert last.gold.estimate == pytest.approx(sum(f[1] for f in favourites) / PROMPTS)
    proxies = [point.proxy.estimate for point in result.points]
    assert proxies == sorted(proxies)  # selecting harder on the proxy never lowers it
    assert result.to_dict()["schema"] == "truegrade.overopt/1"
