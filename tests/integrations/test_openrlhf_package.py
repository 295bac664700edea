"""OpenRLHF's remote reward client against a real ``truegrade serve`` process.

OpenRLHF's rollout (``SingleTurnAgentExecutor.execute``) generates a response, decodes prompt
and response together with their special tokens, posts ``{"query", "prompts", "labels"}`` to
``--reward.remote_url`` and reads ``rewards``, ``scores`` and ``extra_logs`` from the answer. That
code runs here as OpenRLHF ships it. Only the generation engine is a stand-in: OpenRLHF's is vLLM,
which needs CUDA, so a scripted engine answers each prompt with fixed token ids.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest

from tests.integrations.frameworks import build_tokenizer, require

require(
    "openrlhf",
    "pip install --no-deps 'openrlhf==0.11.2' (its reward client needs only aiohttp and "
    "transformers; the package's flash-attn and deepspeed pins do not build without CUDA)",
)

from openrlhf.utils.agent import SingleTurnAgentExecutor  # noqa: E402

from tests.task_rows import (  # noqa: E402
    CPP_RIGHT,
    PY_EVERY_ANSWER,
    PY_RIGHT,
    STDIO,
    STDIO_CPP,
    instruction_rows,
)
from truegrade.serve import ServerProcess  # noqa: E402

pytestmark = pytest.mark.slow

# (prompt, the policy's response, label, reward, hedged)
ROWS = [
    ("What is 1+1?", " The answer is \\boxed{2}.", "2", 1.0, 0.0),
    ("What is 2+2?", " \\boxed{3} or \\boxed{4}", "4", 0.0, 1.0),
    ("What is 3+3?", " \\boxed{6}", "6", 1.0, 0.0),
    ("What is 4+4?", " I do not know.", "8", 0.0, 0.0),
]


class ScriptedEngine:
    """Answers each prompt with its row's response, as token ids ending in EOS."""

    def __init__(self, tokenizer, responses: dict[str, str]) -> None:
        self.tokenizer = tokenizer
        self.responses = responses

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        prompt = self.tokenizer.decode(prompt_token_ids)
        ids = self.tokenizer(self.responses[prompt], add_special_tokens=False)["input_ids"]
        output = SimpleNamespace(
            token_ids=[*ids, self.tokenizer.eos_token_id], finish_reason="stop", logprobs=None
        )
        return SimpleNamespace(outputs=[output])


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return build_tokenizer(tmp_path_factory.mktemp("tokenizer"), [t for r in ROWS for t in r[:2]])


@pytest.fixture(scope="module")
def server():
    with ServerProcess("math", workers=1) as running:
        yield running


def rollout(server, tokenizer, rows, path="/get_reward", max_tokens=32):
    # train_ppo_ray splits --reward.remote_url on commas into this list
    executor = SingleTurnAgentExecutor(remote_rm_url=[server.url + path])
    engine = ScriptedEngine(tokenizer, {prompt: response for prompt, response, *_ in rows})
    params = SimpleNamespace(max_tokens=max_tokens, logprobs=None)

    async def run_all():
        return await asyncio.gather(
            *(
                executor.execute(prompt, label, params, 2 * max_tokens, tokenizer, engine)
                for prompt, _, label, *_ in rows
            )
        )

    return asyncio.run(run_all())


def test_rollouts_get_truegrades_rewards_and_flags(server, tokenizer):
    outputs = rollout(server, tokenizer, ROWS)
    # one query per request, so every field is a one-item list, as OpenRLHF's own servers answer
    assert [o["reward"] for o in outputs] == [[r[3]] for r in ROWS]
    assert [o["scores"] for o in outputs] == [[r[3]] for r in ROWS]
    assert [o["extra_logs"]["hedged"] for o in outputs] == [[r[4]] for r in ROWS]
    assert [o["extra_logs"]["grader_error"] for o in outputs] == [[0.0]] * len(ROWS)
    # the query OpenRLHF sent carried the prompt and the EOS token; the server graded the response
    assert outputs[0]["label"] == "2"


def test_a_row_without_a_label_is_a_grader_error_not_a_quiet_zero(server, tokenizer):
    [output] = rollout(server, tokenizer, [("What is 3+3?", " \\boxed{6}", None, None, None)])
    assert output["reward"] == [0.0]
    assert output["extra_logs"]["grader_error"] == [1.0]  # OpenRLHF logs every extra_logs key


def test_a_wrong_endpoint_leaves_no_reward_rather_than_zero(server, tokenizer):
    """OpenRLHF swallows a failed reward request (it logs it and keeps reward None); what the
    server answered to a malformed body is an HTTP error, so the sample has no reward at all."""
    [output] = rollout(server, tokenizer, ROWS[:1], path="/grade")
    assert output["reward"] is None
    assert output["scores"] is None


def task_rollouts(tmp_path, grader: str, rows):
    """``rows``: (prompt, response, label); one server of ``grader`` and a tokenizer for them."""
    tokenizer = build_tokenizer(tmp_path / "tokenizer", [t for r in rows for t in r[:2]])
    with ServerProcess(grader, workers=1) as server:
        return rollout(server, tokenizer, rows, max_tokens=512)


def test_ifeval_rows_with_the_constraints_as_the_label(tmp_path):
    picks = [("flat_tyre", "honest"), ("grocery_json", "honest"), ("green_tea", "gamed")]
    picked = [instruction_rows(topic)[kind] for topic, kind in picks]
    rows = [
        (r["prompt"], r["response"], {k: r[k] for k in ("instruction_id_list", "kwargs")})
        for r in picked
    ]
    outputs = task_rollouts(tmp_path, "instructions", rows)
    # the first two end with a phrase and are JSON: the EOS token OpenRLHF leaves on the
    # response is cut before the checks; the third stuffs the keywords into a bag
    assert [o["reward"] for o in outputs] == [[1.0], [1.0], [0.0]]
    assert [o["extra_logs"]["grader_error"] for o in outputs] == [[0.0]] * 3


@pytest.mark.system_tool("g++", package="g++")
def test_stdio_programs_with_the_spec_as_the_label(tmp_path):
    rows = [
        ("Add two integers in C++.", CPP_RIGHT, STDIO_CPP),
        ("Add two integers in Python.", PY_EVERY_ANSWER, STDIO),
        ("Add two integers, the tests as text.", PY_RIGHT, json.dumps(STDIO)),
    ]
    outputs = task_rollouts(tmp_path, "code", rows)
    assert [o["reward"] for o in outputs] == [[1.0], [0.0], [1.0]]
    assert [o["extra_logs"]["passed"] for o in outputs] == [[1.0], [0.0], [1.0]]
