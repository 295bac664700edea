"""``truegrade serve``: a grader behind HTTP for RL training loops."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from truegrade._ports import SERVE_PORT
from truegrade.cli._common import (
    SPEC,
    FieldOption,
    GraderKeyValueOption,
    PresetOption,
    TimeoutOption,
    WorkersOption,
    check_preset,
    err_console,
    fail,
    field_map,
)

__all__ = ["serve_command"]


def serve_command(
    grader: Annotated[
        str, typer.Option("--grader", "-g", metavar=SPEC, help="Grader spec to serve.")
    ],
    option: GraderKeyValueOption = [],
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = SERVE_PORT,
    workers: WorkersOption = None,
    timeout_s: TimeoutOption = None,
    max_requests: Annotated[
        int | None,
        typer.Option(help="Most requests in flight before 429 (default: 256 per core).", min=1),
    ] = None,
    max_queue: Annotated[
        int, typer.Option(help="Most items in flight before requests get 429 + Retry-After.", min=1)
    ] = 65_536,
    max_body_mb: Annotated[
        float, typer.Option(help="Largest request body (413 past it).", min=0.001)
    ] = 32.0,
    max_pending_mb: Annotated[
        float, typer.Option(help="Most request bytes in flight before 429.", min=0.001)
    ] = 512.0,
    max_wait_s: Annotated[
        float,
        typer.Option(
            help="Refuse (429) when the work in flight would take longer than this to drain.",
            min=0.001,
        ),
    ] = 30.0,
    request_timeout_s: Annotated[
        float,
        typer.Option(help="A request's deadline; past it: 504, its work cancelled.", min=0.001),
    ] = 600.0,
    idle_timeout_s: Annotated[
        float,
        typer.Option(
            help="Close a connection that has not sent a whole request in this long.", min=0.001
        ),
    ] = 15.0,
    graceful_s: Annotated[
        float,
        typer.Option(
            help="On shutdown, how long in-flight requests may take to finish (then 503).",
            min=0.001,
        ),
    ] = 30.0,
    end_token: Annotated[
        list[str],
        typer.Option(
            help="A token cut from the end of /get_reward's responses (repeatable; replaces the "
            "built-in list of common end-of-sequence tokens; --end-token '' cuts none).",
        ),
    ] = [],
    preset: PresetOption = "auto",
    field: FieldOption = [],
    prepare: Annotated[
        Path | None,
        typer.Option(
            help="Task rows whose environments are built before the server starts (the repo "
            "grader: no request waits for a build)."
        ),
    ] = None,
) -> None:
    """Serve a grader: POST /grade, POST /get_reward (OpenRLHF), GET /health, GET /metrics."""
    from truegrade.cli._grade import load_cli_grader  # its module's options load the data readers
    from truegrade.serve import ServerLimits, serve

    mapping = field_map(field)
    check_preset(preset)
    the_grader = load_cli_grader(grader, option, timeout_s, workers=workers)
    if prepare is not None:
        from truegrade.cli._repo import prepare_file

        ready = prepare_file(the_grader, prepare, preset=preset, field=field, workers=2)
        failed = [p for p in ready if p.error]
        for p in failed:
            err_console.print(f"{p.repo}: {p.error}", highlight=False)
        if ready and len(failed) == len(ready):
            fail("no environment of --prepare could be built", code=1)
    err_console.print(
        f"serving {grader} on http://{host}:{port} (POST /grade, POST /get_reward,"
        " GET /health, GET /metrics)",
        highlight=False,
    )
    serve(
        the_grader,
        host=host,
        port=port,
        limits=ServerLimits(
            max_requests=max_requests or 0,
            max_queue=max_queue,
            max_body_mb=max_body_mb,
            max_pending_mb=max_pending_mb,
            max_wait_s=max_wait_s,
            request_timeout_s=request_timeout_s,
            idle_timeout_s=idle_timeout_s,
            graceful_s=graceful_s,
        ),
        end_tokens=[t for t in end_token if t] if end_token else None,
        preset=preset,
        field_map=mapping or None,
    )
