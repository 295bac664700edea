"""Which text is the program: the last python block, else the whole response; the prompt in front
of a completion."""

from __future__ import annotations

from truegrade.graders.code._program import build_program, extract_code

PROMPT = 'def add(a, b):\n    """Add."""\n'


def test_the_last_python_block_wins():
    text = "Try:\n```python\nx = 1\n```\nBetter:\n```py\nx = 2\n```\n```text\nnot code\n```\n"
    assert extract_code(text) == "x = 2\n"


def test_an_unlabelled_block_is_used_when_no_block_says_python():
    assert extract_code("```\nx = 3\n```\n") == "x = 3\n"
    assert extract_code("```python\nx = 1\n```\n```\nx = 3\n```\n") == "x = 1\n"


def test_without_a_block_the_whole_response_is_the_program():
    assert extract_code("x = 4\n") == "x = 4\n"
    assert extract_code("```python\nunclosed") == "```python\nunclosed"


def test_a_completion_gets_the_prompt_in_front_a_full_program_does_not():
    completion = build_program("    return a + b\n", PROMPT, "add", "auto")
    assert completion.prefixed
    assert completion.source == PROMPT + "    return a + b\n"
    assert completion.response_code == "    return a + b\n"
    full = build_program("```python\ndef add(a, b):\n    return a + b\n```", PROMPT, "add", "auto")
    assert not full.prefixed
    assert full.tree is not None
    assert build_program("def add(a, b):\n    return 1\n", PROMPT, "add", "always").prefixed
    assert not build_program("    return a + b\n", PROMPT, "add", "never").prefixed
    assert not build_program("print(1)\n", PROMPT, None, "auto").prefixed  # stdin/stdout tests
