"""The ``truegrade`` command line: a thin face over the library.

Commands are imported when used (``truegrade.cli._lazy``), so ``truegrade --help`` and
``truegrade --version`` load none of the machinery behind them.
"""

from __future__ import annotations

from typing import Annotated

import typer

from truegrade.cli._lazy import LazyCommand, LazyGroup

__all__ = ["app", "main"]


# In the order the help lists them. Each summary is the first paragraph of the command's own help,
# line breaks included (tests/cli/test_startup.py checks that they agree).
_COMMANDS = {
    "grade": LazyCommand(
        "truegrade.cli._grade:grade_command",
        "Grade every row of DATA and stream one result per row to --out.",
    ),
    "graders": LazyCommand(
        "truegrade.cli._graders:graders_command",
        "List the graders (one line each) and the dataset presets (--preset) with what they read.",
    ),
    "attack": LazyCommand(
        "truegrade.cli._attack:attack_command",
        "Attack a grader with wrong-by-construction responses and report how often it "
        "rewards them.",
    ),
    "validate": LazyCommand(
        "truegrade.cli._validate:validate_command",
        "Measure how well a grader agrees with labels (false pass rate first), or with\n"
        "preferences (pairwise accuracy).",
    ),
    "audit": LazyCommand(
        "truegrade.cli._audit:audit_command",
        "Flag unsound items: failing or unreadable references, rejected equivalents, flaky\n"
        "grading, suspect keys, low discrimination, near duplicates (and templated families),\n"
        "paraphrases (--semantic), leaked answers, items a training set holds (--against).",
    ),
    "overopt": LazyCommand(
        "truegrade.cli._overopt:overopt_command",
        "Proxy and gold under best-of-n from one pool of samples per prompt: curves against "
        "n and\nKL, Gao et al.'s fitted forms, where gold peaks, and the proxy-gold gap.",
    ),
    "monitor": LazyCommand(
        "truegrade.cli._monitor:monitor_command",
        "Check a training log for reward hacking: proxy up while gold falls, a widening "
        "proxy-gold\ngap, reward tracking length, rising grader disagreement, constant "
        "(all-zero) batches, and\nclimbing flag rates. Each alert gives its start step and "
        "its evidence.",
    ),
    "serve": LazyCommand(
        "truegrade.cli._serve:serve_command",
        "Serve a grader: POST /grade, POST /get_reward (OpenRLHF), GET /health, GET /metrics.",
    ),
    "import-package": LazyCommand(
        "truegrade.cli._package:import_package_command",
        "Read Kattis/ICPC problem packages as code rows (one per labelled submission), and "
        "check\nthem: every submission against its label, the validator against junk.",
    ),
    "card": LazyCommand(
        "truegrade.cli._card:card_command",
        "Build a grader card: validity, exploitability, item soundness and a verdict.",
    ),
    "doctor": LazyCommand(
        "truegrade.cli._doctor:doctor_command",
        "Start a sandbox, run a call in it, and report which isolation layers are active.",
    ),
    "lc": LazyCommand(
        "truegrade.cli._lc:lc_command",
        "Length-controlled win rates (AlpacaEval's GLM) with raw win rates and standard errors.",
    ),
    "bias": LazyCommand(
        "truegrade.cli._lc:bias_command",
        "Judge biases: length, position (recorded verdicts), sycophancy, self-preference (probes).",
    ),
    "simulate-judge": LazyCommand(
        "truegrade.cli._simulate:simulate_judge_command",
        "Serve a simulated, deliberately flawed LLM judge on an OpenAI-compatible endpoint.",
    ),
    "bench": LazyCommand(
        "truegrade.cli._bench:bench_app",
        "Benchmarks against the anchors (measured, never asserted).",
    ),
    "rubric": LazyCommand(
        "truegrade.cli._rubric:rubric_app",
        "Check the checks: lint rubrics, meta-evaluate criterion evaluators against experts, "
        "aggregate rubric scores.",
    ),
    "repo": LazyCommand(
        "truegrade.cli._repo:repo_app",
        "Repository tasks (SWE-bench style): their environments built ahead of grading.",
    ),
    "review": LazyCommand(
        "truegrade.cli._review:review_app",
        "Experts label items blind, argue with the grader, and watch agreement move (a local "
        "web app).",
    ),
}


class _Truegrade(LazyGroup):
    lazy_commands = _COMMANDS


app = typer.Typer(
    name="truegrade",
    cls=_Truegrade,
    help="Graders that resist reward hacking, and the numbers that say how far to trust them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from truegrade._version import __version__

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


def main() -> None:
    """Console-script entry point."""
    app()
