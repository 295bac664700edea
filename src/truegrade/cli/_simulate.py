"""``truegrade simulate-judge``: serve the judge simulator in the foreground."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from truegrade._ports import SIMULATOR_PORT
from truegrade.cli._common import err_console, fail, parse_pairs, user_errors

__all__ = ["simulate_judge_command"]


def simulate_judge_command(
    port: Annotated[
        int, typer.Option(help="Port to listen on.", min=1, max=65535)
    ] = SIMULATOR_PORT,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    config: Annotated[
        Path | None, typer.Option(help="YAML file of simulator behaviours (SimulatorConfig).")
    ] = None,
    set_: Annotated[
        list[str],
        typer.Option(
            "--set", "-s", help="A behaviour KEY=VALUE (repeatable), e.g. -s position_bias=0.8."
        ),
    ] = [],
) -> None:
    """Serve a simulated, deliberately flawed LLM judge on an OpenAI-compatible endpoint.

    A simulator for tests and demos, not a model: verdicts are scripted from a hash of each
    response and the behaviours configured (position and length bias, obeying injections,
    self-preference, latency, 500s, 429s, hangs). Point a judge grader at http://HOST:PORT/v1.
    """
    from pydantic import ValidationError

    from truegrade.core import read_config
    from truegrade.simulator import SimulatorConfig, serve_simulator

    values: dict[str, object] = {}
    if config is not None:
        with user_errors():
            loaded = read_config(config, "simulator config")
        if not isinstance(loaded, dict):
            fail(f"{config}: simulator config must hold a mapping of behaviours")
        values.update(loaded)
    given = parse_pairs(set_, "--set")
    values.update(given)
    try:
        settings = SimulatorConfig.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        source = "--set " if first["loc"] and first["loc"][0] in given else f"{config}: "
        fail(f"{source}behaviour {'.'.join(map(str, first['loc']))!r}: {first['msg']}")
    err_console.print(
        f"judge simulator (not a model) on http://{host}:{port}/v1; Ctrl-C stops it",
        highlight=False,
    )
    serve_simulator(settings, host=host, port=port)
