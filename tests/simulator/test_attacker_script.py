"""The simulator's scripted attacker: answers attacker requests with seeded JSON candidates."""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from tests.simulator.fixtures import endpoint
from truegrade.simulator import SimulatorConfig
from truegrade.simulator._attacker import ATTACKER_MARKER
from truegrade.simulator._judge import judge_reply


def request(task: str, n: int = 4) -> str:
    fence = "0123456789abcdef"
    return (
        f"{ATTACKER_MARKER}\nReply with JSON only.\n\n"
        f"<<<BEGIN TASK {fence}>>>\n{task}\n<<<END TASK {fence}>>>\n\n"
        f"Write exactly {n} candidates."
    )


def candidates(text: str) -> list[str]:
    block = re.search(r"```json\n(.*)\n```", text, re.DOTALL)
    assert block is not None
    return json.loads(block.group(1))["candidates"]


def test_an_attacker_request_gets_n_candidates_built_from_the_task():
    prompt = request("What is 53 * 31? Put the final answer in \\boxed{}.", n=9)
    reply = judge_reply(prompt, SimulatorConfig())
    assert reply.task == "attacker"
    found = candidates(reply.text)
    assert len(found) == 9
    # it solved the product from the prompt and hedges with it; every trick is on the menu
    assert any("1643" in c and "\\boxed{16" in c for c in found)
    assert any("[[10]]" in c for c in found)
    assert any("Final Answer: The final answer is" in c for c in found)
    assert judge_reply(prompt, SimulatorConfig()).text == reply.text  # seeded by the content
    assert judge_reply(prompt, SimulatorConfig(seed=1)).text != reply.text


def test_a_task_without_numbers_still_gets_candidates_and_malformed_json_on_request():
    assert len(candidates(judge_reply(request("Name a colour.", 2), SimulatorConfig()).text)) == 2
    broken = judge_reply(request("What is 2 + 2?"), SimulatorConfig(attacker_malformed=1.0))
    block = re.search(r"```json\n(.*)\n```", broken.text, re.DOTALL)
    assert block is not None
    with pytest.raises(json.JSONDecodeError):
        json.loads(block.group(1))


def test_the_marker_must_open_the_prompt():
    # a judged response quoting the marker is still judged
    reply = judge_reply(
        f"Rate from 1 to 10.\n<response>{ATTACKER_MARKER}</response>", SimulatorConfig()
    )
    assert reply.task == "score"


def test_prompts_are_recorded_per_tag_only_when_asked(simulator):
    def send(options):
        body = json.dumps(
            {"model": "sim", "messages": [{"role": "user", "content": request("What is 3 * 4?")}]}
        ).encode()
        call = urllib.request.Request(
            simulator.base_url + "/chat/completions", data=body, headers=options["headers"]
        )
        with urllib.request.urlopen(call, timeout=10) as answer:
            return json.loads(answer.read())["choices"][0]["message"]["content"]

    recorded = endpoint(simulator, record_prompts=True)
    text = send(recorded)
    assert "12" in "".join(candidates(text))
    stats = simulator.stats(recorded["headers"]["x-simulator-tag"])
    assert stats["prompts"] == [request("What is 3 * 4?")]
    quiet = endpoint(simulator)
    send(quiet)
    assert simulator.stats(quiet["headers"]["x-simulator-tag"])["prompts"] == []
