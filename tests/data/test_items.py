"""Rollouts of one prompt are one item: rows without a group of their own that share their
prompt and reference are grouped, named by their first row; rows alone keep no group."""

from __future__ import annotations

from truegrade.core import Sample
from truegrade.data import group_rollouts, rollout_key


def _row(i: str, prompt: str | None, reference: str, group: str | None = None) -> Sample:
    return Sample(id=i, prompt=prompt, response="r", reference=reference, group=group)


def test_rows_sharing_prompt_and_reference_are_one_item_named_by_the_first():
    rows = [
        _row("a1", "What is 2+2?", "4"),
        _row("b1", "What is 3+3?", "6"),
        _row("a2", "What is 2+2?", "4"),
        _row("c1", "What is 2+2?", "5"),  # the same prompt with another key: another item
        _row("d1", "What is 2+2?", "4", group="mine"),  # a group of its own is kept
        _row("a3", "What is 2+2?", "4"),
    ]
    grouped, rows_grouped, items = group_rollouts(rows)
    assert [s.group for s in grouped] == ["a1", None, "a1", None, "mine", "a1"]
    assert (rows_grouped, items) == (3, 1)
    assert [s.item for s in grouped] == ["a1", "b1", "a1", "c1", "mine", "a1"]


def test_rows_without_a_prompt_are_their_own_items():
    rows = [_row("x", None, "4"), _row("y", None, "4")]
    grouped, rows_grouped, _ = group_rollouts(rows)
    assert rows_grouped == 0 and [s.item for s in grouped] == ["x", "y"]
    assert rollout_key(rows[0]) == "x"
