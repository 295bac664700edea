"""truegrade's rewards through the real verl package, on the path its 0.9 trainer runs.

The trainer builds a ``RewardLoopManager``: Ray actors (``RewardLoopWorker``) that load the
configured reward function and score each sample through a reward manager, either all at once
(``compute_rm_score``) or one sample at a time as the agent loop streams them
(``worker.compute_score``). Both run here, on CPU, with no model: the rows are token ids of a
tokenizer built locally, decoded by verl itself.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import warnings
from functools import partial
from pathlib import Path

import pytest

from tests.integrations.frameworks import build_tokenizer, require
from tests.integrations.ray_local import init_local_ray
from tests.task_rows import (
    CPP_RIGHT,
    CPP_WRONG,
    PY_EVERY_ANSWER,
    STDIO,
    STDIO_CPP,
    instruction_rows,
)

require("verl", "pip install 'truegrade[verl]'")

import numpy as np  # noqa: E402
import ray  # noqa: E402
import torch  # noqa: E402
from hydra import compose, initialize_config_module  # noqa: E402

# verl's modules import Ray's deprecated state API (and the like) when first imported: their
# deprecation warnings are verl's to fix, not a failure of what is tested here
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from verl import DataProto
    from verl.experimental.reward_loop import RewardLoopManager, RewardLoopWorker
    from verl.workers.reward_manager.batch import BatchRewardManager
    from verl.workers.reward_manager.naive import NaiveRewardManager

from truegrade.integrations import verl as adapter  # noqa: E402

pytestmark = pytest.mark.slow

ADAPTER = adapter.__file__
ROOT = Path(__file__).resolve().parents[2]
# (prompt, response, gold, truegrade's score); verl's built-in gsm8k scorer, which a config with
# pre-0.9 keys silently falls back to, would give the first row 0 (it wants "#### 2").
ROWS = [
    ("What is 1+1?", " The answer is \\boxed{2}.", "2", 1.0),
    ("What is 2+2?", " \\boxed{3} or \\boxed{4}", "4", 0.0),
    ("What is 3+3?", " #### 6", "6", 1.0),
    ("What is 4+4?", " I do not know.", "8", 0.0),
]


# Rows whose tests travel with them, as verl datasets carry them: a stdio spec as the
# ground truth (JSON text), IFEval's constraints and the prompt in extra_info (reward 1, 0, 0:
# right, wrong, gamed)
_TEA = instruction_rows()
TASKS = {
    "code": [
        ("Print the sum of two integers.", response, json.dumps(spec), {}, score)
        for response, spec, score in (
            (CPP_RIGHT, STDIO_CPP, 1.0),
            (CPP_WRONG, STDIO_CPP, 0.0),
            (PY_EVERY_ANSWER, STDIO, 0.0),
        )
    ],
    "instructions": [
        (
            row["prompt"],
            row["response"],
            "",
            {k: row[k] for k in ("instruction_id_list", "kwargs", "prompt")},
            1.0 if kind == "honest" else 0.0,
        )
        for kind, row in sorted(_TEA.items())
    ],
}


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tokenizer")
    texts = [text for row in ROWS for text in row[:2]]
    texts += [text for rows in TASKS.values() for row in rows for text in row[:2]]
    build_tokenizer(path, texts)
    return path


def to_batch(tokenizer_dir, rows, data_source, golds, extra):
    """Rows as verl's rollout hands them to the reward loop: left-padded prompts, right-padded
    responses ending in EOS, one attention mask over both."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    prompts = [tokenizer(row[0])["input_ids"] for row in rows]
    responses = [tokenizer(row[1])["input_ids"] + [tokenizer.eos_token_id] for row in rows]
    width_p, width_r = max(map(len, prompts)), max(map(len, responses))
    pad = tokenizer.pad_token_id
    prompt_ids = torch.tensor([[pad] * (width_p - len(p)) + p for p in prompts])
    response_ids = torch.tensor([r + [pad] * (width_r - len(r)) for r in responses])
    mask = torch.tensor(
        [
            [0] * (width_p - len(p)) + [1] * (len(p) + len(r)) + [0] * (width_r - len(r))
            for p, r in zip(prompts, responses, strict=True)
        ]
    )
    return DataProto.from_dict(
        tensors={
            "prompts": prompt_ids,
            "responses": response_ids,
            "input_ids": torch.cat([prompt_ids, response_ids], dim=1),
            "attention_mask": mask,
        },
        non_tensors={
            "data_source": np.array([data_source] * len(rows), dtype=object),
            "reward_model": np.array([{"ground_truth": gold} for gold in golds]),
            "extra_info": np.array(extra),
        },
    )


@pytest.fixture
def batch(tokenizer_dir):
    golds = [gold for *_, gold, _ in ROWS]
    extra = [{"index": i} for i in range(len(ROWS))]
    return to_batch(tokenizer_dir, ROWS, "openai/gsm8k", golds, extra)


@pytest.fixture(scope="module")
def config(tokenizer_dir):
    """verl's own trainer config (its Hydra defaults) with the given overrides."""

    def compose_with(*overrides: str):
        with initialize_config_module("verl.trainer.config", version_base=None):
            return compose(
                "ppo_trainer",
                overrides=[
                    f"actor_rollout_ref.model.path={tokenizer_dir}",
                    "reward.num_workers=1",
                    *overrides,
                ],
            )

    return compose_with


@pytest.fixture(scope="module")
def cluster():
    init_local_ray(ray)
    yield
    ray.shutdown()


def expected() -> list[float]:
    return [score for *_, score in ROWS]


def test_reward_loop_scores_with_truegrade_in_batch_and_streaming(config, batch, cluster):
    cfg = config(
        f"reward.custom_reward_function.path={ADAPTER}",
        "reward.custom_reward_function.name=compute_score",
        "+reward.custom_reward_function.reward_kwargs.grader=math",
    )
    adapter.check_config(cfg)
    manager = RewardLoopManager(cfg)

    out = manager.compute_rm_score(batch)
    scores = out.batch["rm_scores"]
    extra = out.non_tensor_batch
    why = {k: extra[k].tolist() for k in ("grader_error", "timeout", "hedged", "no_answer")}
    assert scores.sum(dim=1).tolist() == expected(), why
    # the reward sits on each response's last valid token (its EOS), as verl's advantage needs
    last = batch.batch["attention_mask"][:, batch.batch["prompts"].shape[1] :].sum(dim=1) - 1
    assert scores[torch.arange(len(ROWS)), last].tolist() == expected()
    assert set(out.meta_info["reward_extra_keys"]) == {
        "score",
        "acc",
        "grader_error",
        "hedged",
        "no_answer",
        "timeout",
    }
    assert extra["hedged"].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert extra["no_answer"].tolist() == [0.0, 0.0, 0.0, 1.0]
    assert extra["grader_error"].tolist() == [0.0] * len(ROWS)

    # the agent loop's streaming path: one sample per call to a reward worker
    [worker] = manager.reward_loop_worker_handles
    streamed = ray.get([worker.compute_score.remote(batch[i : i + 1]) for i in range(len(ROWS))])
    assert [r["reward_score"] for r in streamed] == expected()
    assert streamed[1]["reward_extra_info"]["hedged"] == 1.0


@pytest.mark.parametrize("grader", sorted(TASKS))
def test_reward_loop_scores_stdio_programs_and_ifeval_constraints(
    config, tokenizer_dir, cluster, grader
):
    rows = TASKS[grader]
    batch = to_batch(
        tokenizer_dir,
        rows,
        "truegrade/" + grader,
        [row[2] for row in rows],
        [{"index": i, **row[3]} for i, row in enumerate(rows)],
    )
    cfg = config(
        f"reward.custom_reward_function.path={ADAPTER}",
        "reward.custom_reward_function.name=compute_score",
        f"+reward.custom_reward_function.reward_kwargs.grader={grader}",
    )
    adapter.check_config(cfg)
    out = RewardLoopManager(cfg).compute_rm_score(batch)
    assert out.batch["rm_scores"].sum(dim=1).tolist() == [row[-1] for row in rows]
    assert out.non_tensor_batch["grader_error"].tolist() == [0.0] * len(rows)


@pytest.fixture
def in_process_worker():
    """verl's reward worker without its Ray actor (the same class, where pytest can see its
    exceptions and without a process start). A worker runs on the thread's event loop: the test
    gets a fresh one, closed at teardown so its sockets never surface later as another test's
    unraisable warning."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)

    def make(cfg):
        worker = RewardLoopWorker(cfg)
        return lambda data: worker.loop.run_until_complete(worker.compute_score_batch(data))

    yield make
    asyncio.set_event_loop(None)
    loop.close()


def test_the_batch_function_under_the_reward_loop_is_an_error_not_zeros(
    config, batch, in_process_worker
):
    cfg = config(
        f"reward.custom_reward_function.path={ADAPTER}",
        "reward.custom_reward_function.name=compute_score_batch",
    )
    with pytest.raises(ValueError, match="calls its reward function once per sample"):
        adapter.check_config(cfg)
    # and if the trainer runs it anyway, the first reward call fails instead of scoring nothing
    with pytest.raises(TypeError, match="name=compute_score"):
        in_process_worker(cfg)(batch)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            [f"custom_reward_function.path={ADAPTER}", "custom_reward_function.name=compute_score"],
            "custom_reward_function.path='.*' is a pre-0.9 key .*"
            r"\(set reward.custom_reward_function.path\)",
        ),
        (
            [f"reward.custom_reward_function.path={ADAPTER}", "reward_model.reward_manager=batch"],
            r"reward_model.reward_manager='batch' .* \(set reward.reward_manager.name\)",
        ),
        (
            [f"reward.custom_reward_function.path={ADAPTER}", "reward.reward_manager.name=batch"],
            "'batch' is not one of verl's reward-loop managers .*'naive'.*use naive",
        ),
        ([], "custom_reward_function.path is not set, so verl would score with its built-in"),
        (
            ["reward.custom_reward_function.path=/nowhere/verl.py"],
            "'/nowhere/verl.py' is not a file",
        ),
    ],
    ids=["legacy-function-keys", "legacy-batch-manager", "no-batch-manager", "no-path", "no-file"],
)
def test_misconfigurations_are_refused(config, overrides, message):
    with pytest.raises(ValueError, match=message):
        adapter.check_config(config(*overrides))


def test_pre_09_keys_would_have_scored_with_verls_builtin_function(
    config, batch, in_process_worker
):
    """Why the keys are refused: verl 0.9's trainer ignores them, with no error."""
    cfg = config(
        f"custom_reward_function.path={ADAPTER}", "custom_reward_function.name=compute_score"
    )
    scores = [r["reward_score"] for r in in_process_worker(cfg)(batch)]
    assert scores != expected()
    assert scores[0] == 0.0  # a right answer, scored by gsm8k's "####" rule


def test_the_checked_launcher_refuses_before_training_with_one_line(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "truegrade.integrations.verl",
            f"custom_reward_function.path={ADAPTER}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=240,
    )
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("error: verl config: custom_reward_function.path=")
    assert "Traceback" not in run.stderr


def test_legacy_managers_still_work(tokenizer_dir, batch):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    naive = NaiveRewardManager(
        tokenizer, num_examine=0, compute_score=partial(adapter.compute_score, grader="math")
    )
    batched = BatchRewardManager(
        tokenizer, num_examine=0, compute_score=adapter.compute_score_batch, grader="math"
    )
    for manager in (naive, batched):
        out = manager(batch, return_dict=True)
        assert out["reward_tensor"].sum(dim=1).tolist() == expected()
        assert out["reward_extra_info"]["hedged"] == [0.0, 1.0, 0.0, 0.0]


def test_the_example_config_is_current(config, batch, in_process_worker):
    import yaml
    from omegaconf import OmegaConf

    example = yaml.safe_load((ROOT / "examples" / "verl" / "reward.yaml").read_text())
    example["reward"]["custom_reward_function"]["path"] = ADAPTER
    cfg = config()
    OmegaConf.set_struct(cfg, False)  # as Hydra composes a user's file over verl's defaults
    cfg = OmegaConf.merge(cfg, example)
    adapter.check_config(cfg)
    assert [r["reward_score"] for r in in_process_worker(cfg)(batch)] == expected()


def test_a_manager_a_users_reward_file_may_register_is_not_refused(config, tmp_path):
    own = tmp_path / "my_reward.py"
    own.write_text("from truegrade.integrations.verl import compute_score  # noqa: F401\n")
    adapter.check_config(
        config(f"reward.custom_reward_function.path={own}", "reward.reward_manager.name=mine")
    )
    with pytest.raises(ValueError, match="'mine' is not one of verl's reward-loop managers"):
        adapter.check_config(
            config(
                f"reward.custom_reward_function.path={ADAPTER}", "reward.reward_manager.name=mine"
            )
        )
