"""The ``truegrade`` command line: a thin face over the library."""

from __future__ import annotations

from typing import Annotated

import typer

from truegrade._version import __version__
from truegrade.cli._attack import attack_command
from truegrade.cli._audit import audit_command
from truegrade.cli._bench import bench_app
from truegrade.cli._card import card_command
from truegrade.cli._doctor import doctor_command
from truegrade.cli._grade import grade_command
from truegrade.cli._graders import graders_command
from truegrade.cli._lc import bias_command, lc_command
from truegrade.cli._monitor import monitor_command
from truegrade.cli._overopt import overopt_command
from truegrade.cli._rubric import rubric_app
from truegrade.cli._serve import serve_command
from truegrade.cli._simulate import simulate_judge_command
from truegrade.cli._validate import validate_command

__all__ = ["app", "main"]

app = typer.Typer(
    name="truegrade",
    help="Graders that resist reward hacking, and the numbers that say how far to trust them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"truegrade {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """truegrade: build graders that hold, and measure how far they can be trusted."""


app.command("grade")(grade_command)
app.command("graders")(graders_command)
app.command("attack")(attack_command)
app.command("validate")(validate_command)
app.command("audit")(audit_command)
app.command("overopt")(overopt_command)
app.command("monitor")(monitor_command)
app.command("serve")(serve_command)
app.command("card")(card_command)
app.command("doctor")(doctor_command)
app.add_typer(bench_app, name="bench")
app.add_typer(rubric_app, name="rubric")
app.command("lc")(lc_command)
app.command("bias")(bias_command)
app.command("simulate-judge")(simulate_judge_command)


def main() -> None:
    """Console-script entry point."""
    app()
