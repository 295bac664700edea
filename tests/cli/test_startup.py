"""Start-up: ``truegrade --help`` loads no command, and a command's help loads only what it shows.

Checked by what a fresh interpreter has imported, never by timings (those belong in
``truegrade bench``): the command list comes from ``truegrade.cli._app`` alone, and the command
modules import the machinery they run (numerics, the HTTP stack, model libraries) only when run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from truegrade.cli._app import _COMMANDS, app

HEAVY = (
    "fastapi",
    "matplotlib",
    "numpy",
    "pandas",
    "pyarrow",
    "ray",
    "scipy",
    "starlette",
    "sympy",
    "torch",
    "transformers",
    "uvicorn",
)

# Their options list a library's vocabulary (attack kinds, audit checks, harm tags), which comes
# with the package that defines it, and those packages load numpy.
SHOWS_A_NUMERIC_PACKAGE = {"attack", "audit", "card", "rubric"}


def modules_loaded(argv: list[str], tmp_path: Path) -> set[str]:
    """The modules a fresh interpreter holds after running ``truegrade ARGV``."""
    record = tmp_path / "modules.json"
    code = (
        "import json, sys\n"
        "from truegrade.cli import main\n"
        f"sys.argv = ['truegrade', *{argv!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sorted(sys.modules)))\n"
    )
    subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(record.read_text()))


def heavy(loaded: set[str]) -> set[str]:
    return {name for name in loaded if name.split(".")[0] in HEAVY}


# What the command list needs: the package, its lazy names, the app and the lazy group.
THE_APP_ALONE = {
    "truegrade",
    "truegrade._exports",
    "truegrade.cli",
    "truegrade.cli._app",
    "truegrade.cli._lazy",
}


@pytest.mark.parametrize(
    ("argv", "also"),
    [(["--help"], set()), ([], set()), (["--version"], {"truegrade._version"})],
    ids=["help", "bare", "version"],
)
def test_the_command_list_and_the_version_import_no_command(argv, also, tmp_path):
    loaded = modules_loaded(argv, tmp_path)
    assert not heavy(loaded)
    assert {name for name in loaded if name.startswith("truegrade")} <= THE_APP_ALONE | also


@pytest.mark.parametrize("command", list(_COMMANDS))
def test_a_commands_help_loads_no_heavy_library(command, tmp_path):
    # a group's subcommands live in the group's module: its help loads what theirs does
    loaded = modules_loaded([command, "--help"], tmp_path)
    module = _COMMANDS[command].target.partition(":")[0]
    assert module in loaded  # the help was built from the command itself
    if command in SHOWS_A_NUMERIC_PACKAGE:
        assert not heavy(loaded) - {name for name in loaded if name.split(".")[0] == "numpy"}
    else:
        assert not heavy(loaded)


def render_help(group: typer.core.TyperGroup, capsys: pytest.CaptureFixture[str]) -> str:
    group.main(["--help"], prog_name="truegrade", standalone_mode=False)
    return capsys.readouterr().out


def test_the_command_list_reads_as_each_commands_own_help(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    listed = render_help(group, capsys)
    commands = dict(group.commands.items())  # imports every command
    assert list(commands) == list(_COMMANDS)
    assert render_help(group, capsys) == listed
    for name, command in commands.items():
        assert name in listed
        assert command.help is not None
        first_paragraph = command.help.split("\n\n")[0].strip()
        assert _COMMANDS[name].summary == first_paragraph, name
