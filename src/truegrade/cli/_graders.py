"""``truegrade graders``: what can grade, and which published datasets are read as they are."""

from __future__ import annotations

from rich.table import Table

from truegrade.cli._common import out_console, user_errors
from truegrade.core import PRESETS, describe_grader, grader_names

__all__ = ["graders_command"]


def graders_command() -> None:
    """List the graders (one line each) and the dataset presets (--preset) with what they read."""
    table = Table(title="graders (--grader NAME)", title_justify="left")
    table.add_column("grader", style="bold", no_wrap=True)
    table.add_column("what it is", overflow="fold")
    with user_errors():
        for name in grader_names():
            table.add_row(name, describe_grader(name))
    out_console.print(table)
    out_console.print(
        "  or your own reward function: --grader path/to/file.py:function (TRL or verl "
        "signature), or a YAML spec file",
        highlight=False,
    )
    presets = Table(
        title="presets (--preset NAME; detected from the columns)", title_justify="left"
    )
    presets.add_column("preset", style="bold", no_wrap=True)
    presets.add_column("datasets", overflow="fold")
    presets.add_column("graded with", no_wrap=True)
    presets.add_column("reads", overflow="fold")
    for preset in PRESETS.values():
        title = preset.title + ("" if preset.auto else " (only when named)")
        presets.add_row(preset.name, title, preset.grader or "any", preset.reads)
    out_console.print(presets)
