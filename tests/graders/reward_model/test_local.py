"""The local backend on tiny reward models: batching, padding, truncation, chat templates,
devices, label choice and loading once per process."""

from __future__ import annotations

import pytest

from tests.graders.reward_model.tiny import forward_ids, reference_scores
from truegrade.core import Sample, load_grader
from truegrade.graders.reward_model import RewardModelFlag
from truegrade.graders.reward_model._local import (
    load_local_model,
    loaded_models,
    unload_local_models,
)

TEXTS = [
    ("two plus two", "the answer is four"),
    ("hello", "world"),
    ("what is the capital of france", "paris because i think so and the answer is paris"),
    ("please help me", "no"),
    ("one two three", "four five six seven eight nine ten"),
    ("you are helpful", "yes good correct final answer is ten"),
]


def samples(pairs=TEXTS, chat=False) -> list[Sample]:
    out = []
    for i, (prompt, response) in enumerate(pairs):
        p = [{"role": "user", "content": prompt}] if chat else prompt
        out.append(Sample(id=i, prompt=p, response=response))
    return out


def grader(path, **options):
    return load_grader({"type": "reward_model", "path": str(path), "device": "cpu", **options})


def scores(g, rows) -> list[float]:
    grades = g.grade_batch(rows)
    assert all(gr.error is None for gr in grades), [gr.error for gr in grades]
    return [gr.score for gr in grades]


def chat_text(prompt: str, response: str) -> str:
    return f"<s> user : {prompt} </s><s> assistant : {response} </s>"


def test_batched_scores_equal_each_sample_alone(tiny_rms):
    expected = reference_scores(tiny_rms["a"], [f"{p}\n\n{r}" for p, r in TEXTS], special=True)
    for batch_size in (1, 3, 8):
        got = scores(grader(tiny_rms["a"], batch_size=batch_size), samples())
        assert got == pytest.approx(expected, abs=1e-5)
    assert len(set(expected)) == len(expected)  # the model tells the samples apart


def test_without_a_pad_token_padding_never_moves_the_scored_position(tiny_rms):
    # the chat template ends every input with EOS: padding with EOS (the usual fix for a model
    # without a pad token) would make the head read the token before it
    expected = reference_scores(
        tiny_rms["nopad"], [chat_text(p, r) for p, r in TEXTS], special=False
    )
    got = scores(grader(tiny_rms["nopad"], batch_size=6), samples(chat=True))
    assert got == pytest.approx(expected, abs=1e-5)


def test_a_planted_pad_token_does_not_cut_the_response(tiny_rms):
    rows = samples([("hello", "world [PAD] paris"), ("hello", "a much longer answer is four")])
    alone = [scores(grader(tiny_rms["a"]), [r])[0] for r in rows]
    together = scores(grader(tiny_rms["a"]), rows)
    assert together == pytest.approx(alone, abs=1e-5)
    cut = scores(grader(tiny_rms["a"]), samples([("hello", "world")]))[0]
    assert alone[0] != pytest.approx(cut, abs=1e-3)  # the text after [PAD] was read


def test_left_truncation_keeps_the_end_of_the_response(tiny_rms):
    path = tiny_rms["a"]
    tokenizer = load_local_model(str(path), device="cpu").tokenizer
    long = Sample(id=0, prompt="please help", response="one two three four five six seven final")
    ids = tokenizer("please help\n\none two three four five six seven final")["input_ids"]
    assert len(ids) == 10
    (left,) = grader(path, max_length=4).grade_batch([long])
    (right,) = grader(path, max_length=4, truncation_side="right").grade_batch([long])
    (whole,) = grader(path).grade_batch([long])
    assert left.score == pytest.approx(forward_ids(path, ids[-4:]), abs=1e-5)
    assert right.score == pytest.approx(forward_ids(path, ids[:4]), abs=1e-5)
    assert RewardModelFlag.TRUNCATED in left.flags and "read its end" in left.explanation
    assert RewardModelFlag.TRUNCATED not in whole.flags
    assert whole.score == pytest.approx(forward_ids(path, ids), abs=1e-5)


def test_the_model_limit_applies_when_no_max_length_is_given(tiny_rms):
    # the tiny model reads 64 positions; a longer input is cut to its last 64 tokens
    (g,) = grader(tiny_rms["a"]).grade_batch([{"id": 0, "response": "good " * 100}])
    assert RewardModelFlag.TRUNCATED in g.flags
    assert g.score == pytest.approx(
        scores(grader(tiny_rms["a"]), [{"id": 0, "response": "good " * 64}])[0], abs=1e-5
    )


def test_the_chat_template_is_applied_to_conversations(tiny_rms):
    path = tiny_rms["a"]
    chat = samples(chat=True)
    expected = reference_scores(path, [chat_text(p, r) for p, r in TEXTS], special=False)
    assert scores(grader(path), chat) == pytest.approx(expected, abs=1e-5)
    # text prompts: plain by default, through the template with ``always``
    assert scores(grader(path, chat_template="always"), samples()) == pytest.approx(
        expected, abs=1e-5
    )
    plain = reference_scores(path, [f"{p}\n\n{r}" for p, r in TEXTS], special=True)
    assert scores(grader(path, chat_template="never"), chat) == pytest.approx(plain, abs=1e-5)
    assert scores(grader(path), chat) != pytest.approx(plain, abs=1e-3)


def test_a_conversation_for_a_model_without_a_template_is_an_error_grade(tiny_rms):
    rows = [*samples(TEXTS[:1], chat=True), *samples(TEXTS[1:2])]
    conv, text = grader(tiny_rms["plain"]).grade_batch(rows)
    assert conv.error is not None and "no chat template" in conv.error
    assert RewardModelFlag.MODEL_ERROR in conv.flags
    assert text.error is None  # the rest of the batch is scored


def test_device_cpu_and_an_unavailable_device(tiny_rms):
    import torch

    g = grader(tiny_rms["a"], device="cpu")
    scores(g, samples()[:1])
    model = load_local_model(str(tiny_rms["a"]), device="cpu")
    assert next(model.model.parameters()).device.type == "cpu"
    assert next(model.model.parameters()).dtype == torch.float32
    on_gpu = grader(tiny_rms["a"], device="cuda").grade_batch(samples()[:2])
    if torch.cuda.is_available():
        assert all(g.error is None for g in on_gpu)
    else:  # the samples fail with the reason; nothing is raised
        assert all(g.error and "cannot load" in g.error for g in on_gpu)
        assert all(RewardModelFlag.MODEL_ERROR in g.flags for g in on_gpu)


def test_label_index_picks_the_head_output(tiny_rms):
    path = tiny_rms["two_heads"]
    first = scores(grader(path), samples())
    second = scores(grader(path, label_index=1), samples())
    assert first != pytest.approx(second, abs=1e-3)
    (bad,) = grader(path, label_index=2).grade_batch(samples()[:1])
    assert bad.error is not None and "2 labels" in bad.error


def test_each_model_is_loaded_once_per_process(tiny_rms, tmp_path, monkeypatch):
    from transformers import AutoModelForSequenceClassification

    loads = []
    original = AutoModelForSequenceClassification.from_pretrained.__func__

    def counting(cls, *args, **kwargs):
        loads.append(args[0])
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(
        AutoModelForSequenceClassification, "from_pretrained", classmethod(counting)
    )
    unload_local_models()
    spec = tmp_path / "rm.yaml"
    spec.write_text(f"type: reward_model\npath: {tiny_rms['b']}\ndevice: cpu\n")
    first, second = load_grader(spec), grader(tiny_rms["b"], dtype="float32", batch_size=2)
    assert scores(first, samples()) == pytest.approx(scores(second, samples()), abs=1e-6)
    assert len(loads) == 1
    assert loaded_models() == [(str(tiny_rms["b"].resolve()), "cpu", "float32")]
    scores(grader(tiny_rms["b"], dtype="bfloat16"), samples()[:1])  # another precision: another
    assert len(loads) == 2
    # a grader rebuilt from its recorded spec (as a worker does) shares the loaded model
    scores(load_grader(first.spec), samples()[:1])
    assert len(loads) == 2
