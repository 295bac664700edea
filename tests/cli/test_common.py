"""What the commands share: the progress bar."""

from __future__ import annotations

from rich.progress import Progress
from rich.text import Text

from truegrade.cli._common import progress_bar


def shown(seconds_per_step: float, items_per_step: int, steps: int) -> str:
    """The bar's text after ``steps`` advances, on a clock that moves only when told."""
    now = [0.0]
    columns = progress_bar(enabled=False).columns
    bar = Progress(*columns, get_time=lambda: now[0], disable=True)
    task_id = bar.add_task("grading", total=10_000)
    for _ in range(steps):
        now[0] += seconds_per_step
        bar.advance(task_id, items_per_step)
    task = bar.tasks[0]
    rendered = [column.render(task) for column in columns if not isinstance(column, str)]
    return " ".join(r.plain for r in rendered if isinstance(r, Text))


def test_the_progress_bar_shows_items_per_second():
    assert "50 items/s" in shown(0.5, 25, steps=10)
    assert "1,000 items/s" in shown(0.1, 100, steps=5)


def test_a_slow_rate_keeps_its_digits_and_no_rate_is_a_question_mark():
    assert "0.417 items/s" in shown(2.4, 1, steps=4)  # a judge, one call at a time
    assert "? items/s" in shown(1.0, 1, steps=0)
