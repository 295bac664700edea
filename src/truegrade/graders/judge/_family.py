"""Which family a model belongs to, for the self-preference guard.

Judges prefer text from their own family (GPT-4 recognises its own outputs about 73% of the time,
and self-preference grows with recognition), so a judge should not grade a policy of its own
family. Families are read from model names: the provider prefix and path are dropped and the
name is matched against known family prefixes (``gpt-4o-mini`` and ``o3`` are ``openai``,
``meta-llama/Llama-3.1-70B`` is ``meta``). Unknown names are their own family (their first
word). Fine-tunes keep their base model's family only when told (``model_families``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["KNOWN_FAMILIES", "model_family"]

KNOWN_FAMILIES: dict[str, str] = {
    "gpt": "openai",
    "chatgpt": "openai",
    "o1": "openai",
    "o3": "openai",
    "o4": "openai",
    "text-davinci": "openai",
    "davinci": "openai",
    "openai": "openai",
    "claude": "anthropic",
    "anthropic": "anthropic",
    "gemini": "google",
    "gemma": "google",
    "palm": "google",
    "bard": "google",
    "llama": "meta",
    "meta-llama": "meta",
    "codellama": "meta",
    "qwen": "qwen",
    "qwq": "qwen",
    "mistral": "mistral",
    "mixtral": "mistral",
    "codestral": "mistral",
    "ministral": "mistral",
    "deepseek": "deepseek",
    "phi": "microsoft",
    "command": "cohere",
    "cohere": "cohere",
    "grok": "xai",
    "yi": "01-ai",
    "glm": "zhipu",
    "chatglm": "zhipu",
}


def model_family(name: str, extra: Mapping[str, str] | None = None) -> str:
    """The family of a model name (lower case).

    Args:
        name: A model name as an endpoint or a dataset gives it.
        extra: More ``prefix -> family`` rules, checked before the built-in ones.

    Examples:
        >>> model_family("gpt-4o-mini"), model_family("meta-llama/Llama-3.1-70B-Instruct")
        ('openai', 'meta')
        >>> model_family("vicuna-13b"), model_family("vicuna-13b", {"vicuna": "meta"})
        ('vicuna', 'meta')
    """
    base = name.strip().lower()
    owner = base.split("/")[0] if "/" in base else ""
    base = base.rsplit("/", 1)[-1].split(":", 1)[0]
    rules = {**KNOWN_FAMILIES, **{k.lower(): v.lower() for k, v in (extra or {}).items()}}
    ordered = sorted(rules, key=len, reverse=True)  # the most specific prefix wins
    if extra:
        ordered = [k.lower() for k in extra] + [k for k in ordered if k not in extra]
    for candidate in (base, owner):
        if not candidate:
            continue
        for prefix in ordered:
            if candidate.startswith(prefix) and (
                len(candidate) == len(prefix) or not candidate[len(prefix)].isalpha()
            ):
                return rules[prefix]
    words = re.findall(r"[a-z]+", base)
    return words[0] if words else base
