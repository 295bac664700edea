"""``truegrade doctor``: which isolation layers hold on this machine, checked, not assumed."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from truegrade.cli._common import err_console, fail, out_console

if TYPE_CHECKING:
    from truegrade.sandbox import Layer, SandboxConfig

__all__ = ["doctor_command"]

_ISOLATIONS = ("auto", "bwrap", "native", "none")


def _check(config: SandboxConfig) -> tuple[list[Layer], bool]:
    """Start a sandbox, read its layers, and run one call through it."""
    from truegrade.sandbox import Sandbox, layers

    box = Sandbox(config)
    try:
        box.start()
        found = layers(box)
        program = box.load("def add(a, b):\n    return a + b\n", entry_point="add")
        works = program.call([2, 3], timeout_s=5).value == 5
        program.unload()
    finally:
        box.close()
    return found, works


def doctor_command(
    isolation: Annotated[
        str, typer.Option(help="Isolation to try: auto, bwrap, native or none.")
    ] = "auto",
    unsafe_no_sandbox: Annotated[
        bool,
        typer.Option(
            "--unsafe-no-sandbox",
            help="Allow running untrusted code with no isolation when nothing else works.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Start a sandbox, run a call in it, and report which isolation layers are active."""
    from truegrade.sandbox import SandboxConfig, SandboxError, SandboxUnavailable

    if isolation not in _ISOLATIONS:
        fail(f"--isolation must be one of {', '.join(_ISOLATIONS)}")
    try:
        config = SandboxConfig(isolation=isolation, allow_unsandboxed=unsafe_no_sandbox)  # type: ignore[arg-type]
    except ValueError as exc:
        fail(str(exc))
    try:
        found, works = _check(config)
    except SandboxUnavailable as exc:
        fail(str(exc), code=1)
    except SandboxError as exc:
        fail(f"the sandbox failed its self-test: {exc}", code=1)
    sandboxed = any(layer.name == "user namespace" and layer.active for layer in found)
    from truegrade.graders.code import pch_status

    pch_used, pch_detail = pch_status()  # what C++ builds get here; it only speeds them up
    if as_json:
        report = {
            "sandboxed": sandboxed,
            "works": works,
            "layers": [vars(x) for x in found],
            "cpp_precompiled_header": {"used": pch_used, "detail": pch_detail},
        }
        out_console.print_json(json.dumps(report))
    else:
        table = Table(title="truegrade sandbox layers", title_justify="left")
        table.add_column("layer", style="bold")
        table.add_column("active")
        table.add_column("observed")
        for layer in found:
            detail = layer.detail + (f"\n[dim]hint: {layer.hint}[/]" if layer.hint else "")
            table.add_row(layer.name, "[green]yes[/]" if layer.active else "[red]no[/]", detail)
        out_console.print(table)
        active = sum(layer.active for layer in found)
        verdict = "works" if works else "[red]did not answer correctly[/]"
        out_console.print(
            f"{active} of {len(found)} layers active; a call in the sandbox {verdict}."
        )
        out_console.print(f"C++ precompiled header: {pch_detail}", highlight=False)
    if not sandboxed:
        err_console.print(
            "[bold red]warning:[/] no isolation: untrusted code would run on this machine as is "
            "(every grade is flagged 'unsandboxed')"
        )
    if not (works and sandboxed):
        raise typer.Exit(1)
