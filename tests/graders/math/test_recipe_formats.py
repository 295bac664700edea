"""The answer formats RL recipes train for, each in the shape its recipe asks the model for
(the recipe is named beside each case): R1-style ``<answer>`` tags (DeepSeek-R1-Zero's prompt,
as TinyZero, Open-R1 and TRL's GRPO examples use it), ``####`` at the end of the last line
(verl's GSM8K recipe, whose scorer reads it mid-line), and "The final answer is" (Minerva's
format, as lm-eval's and Qwen's math prompts ask for it). Each right answer passes, each wrong
one fails, two stated answers are a hedge, and a response with none says what is read."""

from __future__ import annotations

import pytest

from truegrade import load_grader


@pytest.fixture(scope="module")
def grader():
    return load_grader("math")


RIGHT = [
    # DeepSeek-R1-Zero's template: reasoning in <think>, the answer in <answer>
    ("r1", "<think>16 - 3 - 4 = 9 eggs, 9 * 2 = 18.</think> <answer>18</answer>", "18"),
    ("r1", "<think>\nLet me compute.\n</think>\n<answer>\n18\n</answer>", "18"),
    ("r1", "<think>x^2 = 4</think><answer>\\boxed{-2, 2}</answer>", "\\{-2, 2\\}"),
    ("r1", "<think>...</think><answer>The answer is $\\frac{1}{2}$</answer>", "0.5"),
    # TinyZero's countdown and Open-R1's: reasoning, then the tag holding an equation's value
    ("r1", "<reasoning>\n5 + 7 = 12\n</reasoning>\n<answer>12</answer>", "12"),
    # verl's GSM8K recipe: "#### " before the answer, at the end of the last line
    ("verl", "Natalia sold 48/2 = 24 clips in May, 48+24 = 72 in all. #### 72", "72"),
    ("verl", "She has 16 - 3 - 4 = 9 eggs.\nSo she makes 9 * 2 = $18 #### 18", "18"),
    ("verl", "Natalia sold 24 clips in May.\n#### 72", "72"),
    # Minerva's "Final Answer: The final answer is $X$. I hope it is correct."
    ("minerva", "x = 3.\nFinal Answer: The final answer is $3$. I hope it is correct.", "3"),
    ("minerva", "So the total is 42. The final answer is 42.", "42"),
]
WRONG = [
    ("r1", "<think>16 - 3 - 4 = 9, 9 * 2 = 18.</think> <answer>19</answer>", "18"),
    ("verl", "Natalia sold 48/2 = 24 clips in May, 48+24 = 72 in all. #### 73", "72"),
    ("minerva", "Final Answer: The final answer is $4$. I hope it is correct.", "3"),
]


@pytest.mark.parametrize(("recipe", "response", "key"), RIGHT)
def test_each_recipe_s_right_answer_passes(grader, recipe, response, key):
    grade = grader.grade({"id": recipe, "response": response, "reference": key})
    assert grade.passed is True, (recipe, grade.explanation)


@pytest.mark.parametrize(("recipe", "response", "key"), WRONG)
def test_each_recipe_s_wrong_answer_fails(grader, recipe, response, key):
    grade = grader.grade({"id": recipe, "response": response, "reference": key})
    assert grade.passed is False and "no_answer" not in grade.flags, grade.explanation


def test_two_tags_or_a_tag_and_a_box_that_differ_are_a_hedge(grader):
    for response in (
        "<answer>17</answer> or maybe <answer>18</answer>",
        "\\boxed{17}\n<answer>18</answer>",
        "#### 17\n<answer>18</answer>",
    ):
        grade = grader.grade({"id": 1, "response": response, "reference": "18"})
        assert grade.passed is False and "hedged" in grade.flags, (response, grade)


def test_a_tag_never_closed_states_nothing_and_the_message_says_what_is_read(grader):
    grade = grader.grade({"id": 1, "response": "<answer>18", "reference": "18"})
    assert grade.passed is False and grade.flags == ["no_answer"]
    for read in ("\\boxed{}", "'#### ...' line", "<answer>...</answer> tag", "'Final answer:'"):
        assert read in grade.explanation, grade.explanation


def test_the_tag_is_configurable_and_can_be_switched_off():
    mine = load_grader("math", answer_tags=["final"])
    assert mine.grade({"id": 1, "response": "<final>18</final>", "reference": "18"}).passed
    none = load_grader("math", answer_tags=[])
    assert none.grade({"id": 1, "response": "<answer>18</answer>", "reference": "18"}).flags == [
        "no_answer"
    ]
    with pytest.raises(ValueError, match="a tag is a name"):
        load_grader("math", answer_tags=["<answer>"])


def test_many_unclosed_tags_are_read_in_linear_time():
    from truegrade.graders._extract import final_answers

    hostile = "<answer>" * 200_000 + "</answr>"
    assert final_answers(hostile).statements == ()  # returns; nothing is stated


@pytest.mark.parametrize(
    "key", ["N/A", "n/a", "unknown", "none", "None", "TBD", "see above", "-", "?", "no key here"]
)
def test_a_placeholder_key_is_a_bad_reference_never_a_0(grader, key):
    grade = grader.grade({"id": 1, "response": "\\boxed{5}", "reference": key})
    assert grade.error is not None and grade.flags == ["bad_reference"], grade
    assert "placeholder" in grade.error and grade.record(1)["score"] is None
