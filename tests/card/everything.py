"""A grader that rewards anything: every attack succeeds, so every example reaches the card."""


def reward(prompts, completions, **kwargs):
    return [1.0 for _ in completions]
