"""What a reward model reads: a sample as a conversation, or as plain text.

A reward model was trained on conversations rendered by its chat template; scoring a
conversational sample without the template shifts every score, and scoring a plain-text
dataset through a template it was not trained with can too. So the choice is explicit
(``chat_template: auto | always | never``) and made per sample, the same way for both backends.
"""

from __future__ import annotations

from typing import Any, Literal

from truegrade.core import Message, Sample, message_text

__all__ = ["ChatMode", "conversation", "plain_text", "uses_chat"]

ChatMode = Literal["auto", "always", "never"]


def uses_chat(sample: Sample, mode: ChatMode) -> bool:
    """Whether this sample is scored through the chat template."""
    if mode == "auto":
        return isinstance(sample.prompt, list) or isinstance(sample.response, list)
    return mode == "always"


def _messages(content: Any, role: str) -> list[Message]:
    if content is None:
        return []
    if isinstance(content, list):
        return [
            {"role": str(m.get("role", role)), "content": message_text(m.get("content"))}
            if isinstance(m, dict)
            else {"role": role, "content": message_text(m)}
            for m in content
        ]
    return [{"role": role, "content": str(content)}]


def conversation(sample: Sample) -> list[Message]:
    """The prompt's messages (text as one user turn) followed by the response's (text as one
    assistant turn); contents flattened to text."""
    return _messages(sample.prompt, "user") + _messages(sample.response, "assistant")


def plain_text(sample: Sample, separator: str) -> str:
    """``prompt + separator + response`` (the response alone when there is no prompt)."""
    prompt = sample.prompt_text
    return f"{prompt}{separator}{sample.response_text}" if prompt else sample.response_text
