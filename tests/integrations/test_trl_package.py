"""truegrade's reward inside TRL's ``GRPOTrainer``: two real training steps on CPU.

The model is a one-layer Llama built from a config (random weights, no download) and the tokenizer
is built locally. Generation is biased, through TRL's own ``generation_kwargs``, to answer every
prompt with ``\\boxed{2}`` and stop, so the rewards are known: 1 for "1+1", 0 for "2+2".
"""

from __future__ import annotations

import warnings

import pytest

from tests.integrations.frameworks import build_tokenizer, require

require("trl", "pip install 'truegrade[trl]'")

with warnings.catch_warnings():  # the frameworks' own import-time deprecations
    warnings.simplefilter("ignore", DeprecationWarning)
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, LlamaConfig
    from trl import GRPOConfig, GRPOTrainer

from truegrade.integrations.trl import TruegradeReward, reward_func  # noqa: E402

pytestmark = pytest.mark.slow

PROMPTS = {"What is 1+1?": "2", "What is 2+2?": "4"}
ANSWER = " \\boxed{2}"


class Recorded(TruegradeReward):
    """truegrade's reward, keeping what the trainer passed and got back, to check per row."""

    calls: list[tuple[list, list]]

    def __call__(self, prompts, completions, **kwargs):
        rewards = super().__call__(prompts, completions, **kwargs)
        self.calls.append((list(prompts), list(rewards)))
        return rewards


def test_grpo_trains_two_steps_on_truegrade_rewards(tmp_path):
    tokenizer = build_tokenizer(tmp_path / "tokenizer", [*PROMPTS, ANSWER])
    model = AutoModelForCausalLM.from_config(
        LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=64,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
            bos_token_id=None,
        )
    )
    [answer] = tokenizer(ANSWER, add_special_tokens=False)["input_ids"]
    eos = tokenizer.eos_token_id
    reward = Recorded("math")
    reward.calls = []
    assert reward.__name__ == reward_func("math").__name__
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[reward],
        train_dataset=Dataset.from_list(
            [{"prompt": p, "answer": a} for p, a in PROMPTS.items()] * 2
        ),
        args=GRPOConfig(
            output_dir=str(tmp_path / "out"),
            max_steps=2,
            per_device_train_batch_size=4,
            num_generations=2,
            max_completion_length=4,
            # "\boxed{2}" first, then EOS right after it
            generation_kwargs={"sequence_bias": [[[answer], 50.0], [[answer, eos], 100.0]]},
            use_cpu=True,
            report_to=[],
            logging_steps=1,
            save_strategy="no",
            seed=0,
        ),
    )
    trainer.train()

    assert trainer.state.global_step == 2
    assert len(reward.calls) >= 2
    for prompts, rewards in reward.calls:
        assert rewards == [1.0 if PROMPTS[p] == "2" else 0.0 for p in prompts]
    logged = [h for h in trainer.state.log_history if "rewards/truegrade_math/mean" in h]
    assert len(logged) == 2
    for step in logged:
        assert step["rewards/truegrade_math/mean"] == 0.5
        assert step["truegrade/truegrade_math/pass_rate"] == 0.5
        assert step["truegrade/truegrade_math/error_rate"] == 0.0
