"""Tiny reward models built at test time: real model classes, random weights, a real tokenizer.

No weights can be downloaded, and none are needed to test the machinery around a reward model:
a two-layer Llama sequence classifier with a word-level tokenizer trained here on a small
vocabulary loads, tokenizes, pads and runs exactly as a real checkpoint does. Only the scores
are meaningless, and the tests compare scores with each other, never with a notion of quality.
"""

from __future__ import annotations

from pathlib import Path

WORDS = " ".join(
    [
        "the answer is four two plus two equals five hello world capital of france paris",
        "berlin a an and or not yes no good bad correct wrong because therefore so i think",
        "final step one three six seven eight nine ten please help me with this question",
        "user assistant system you are helpful score grade reward model",
    ]
)

CHAT_TEMPLATE = "{% for m in messages %}<s> {{ m['role'] }} : {{ m['content'] }} </s>{% endfor %}"


def build_tiny_rm(
    directory: Path,
    *,
    seed: int = 0,
    pad_token: bool = True,
    chat_template: bool = True,
    num_labels: int = 1,
) -> Path:
    """Write a tiny reward model and its tokenizer to ``directory``; return the directory.

    Args:
        seed: Seeds the random weights (members of an ensemble differ by seed).
        pad_token: Give the tokenizer and config a pad token; without one, the model is like
            the many reward models that have none.
        chat_template: Give the tokenizer a chat template.
        num_labels: Outputs of the classification head.
    """
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForSequenceClassification, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "<s>", "</s>"]
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator([WORDS, ":"], trainers.WordLevelTrainer(special_tokens=specials))
    extra = {"pad_token": "[PAD]"} if pad_token else {}
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", bos_token="<s>", eos_token="</s>", **extra
    )
    if chat_template:
        fast.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        num_labels=num_labels,
        pad_token_id=fast.pad_token_id if pad_token else None,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        max_position_embeddings=64,
    )
    model = LlamaForSequenceClassification(config)
    with torch.no_grad():  # random heads score near 0; spread them so comparisons mean something
        model.score.weight.mul_(20.0)
    model.save_pretrained(directory)
    fast.save_pretrained(directory)
    return directory


def reference_scores(directory: Path, texts: list[str], *, special: bool) -> list[float]:
    """Each text scored alone (a batch of one: no padding), with transformers directly."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForSequenceClassification.from_pretrained(directory).eval()
    out = []
    for text in texts:
        ids = tokenizer(text, add_special_tokens=special, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            out.append(float(model(input_ids=ids).logits[0, 0]))
    return out


def forward_ids(directory: Path, ids: list[int]) -> float:
    """The score of exactly these token ids, alone."""
    import torch
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(directory).eval()
    with torch.inference_mode():
        return float(model(input_ids=torch.tensor([ids])).logits[0, 0])
