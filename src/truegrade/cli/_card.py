"""``truegrade card``: one report that says how far a grader can be trusted."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from truegrade.audit import CHECKS
from truegrade.cli._attack import (
    AttackerCandidatesOption,
    AttackerEndpointOption,
    AttackerKeyEnvOption,
    AttackerModelOption,
    HostileOption,
    KindOption,
    UnsafeHostileOption,
    attacker_options,
)
from truegrade.cli._audit import parse_checks
from truegrade.cli._common import (
    SPEC,
    BackendOption,
    FieldOption,
    GraderKeyValueOption,
    ItemLimitOption,
    PresetOption,
    RayAddressOption,
    ThresholdOption,
    TimeoutOption,
    WorkersOption,
    err_console,
    fail,
    load_items,
    out_console,
    output_path,
)
from truegrade.cli._grade import load_cli_grader, load_oracle

__all__ = ["card_command"]


def card_command(
    data: Annotated[
        Path,
        typer.Argument(help="Rows: prompts and references; responses and labels where available."),
    ],
    grader: Annotated[str, typer.Option("--grader", "-g", metavar=SPEC, help="Grader spec.")],
    option: GraderKeyValueOption = [],
    out: Annotated[
        Path,
        typer.Option(callback=output_path, help="The HTML card; the .md and .json go beside it."),
    ] = Path("card.html"),
    title: Annotated[str, typer.Option(help="Title (default: the grader).")] = "",
    labels: Annotated[
        bool, typer.Option(help="Validate against labels when rows have them.")
    ] = True,
    attacks: Annotated[str | None, typer.Option(help="Comma-separated attack names.")] = None,
    kind: KindOption = None,
    hostile: HostileOption = False,
    unsafe_hostile: UnsafeHostileOption = False,
    budget: Annotated[int, typer.Option(help="Adaptive-search queries per item.", min=0)] = 0,
    oracle: Annotated[
        str | None, typer.Option(metavar=SPEC, help="Right-from-wrong grader for the search.")
    ] = None,
    attacker_endpoint: AttackerEndpointOption = None,
    attacker_model: AttackerModelOption = None,
    attacker_key_env: AttackerKeyEnvOption = None,
    attacker_candidates: AttackerCandidatesOption = 4,
    checks: Annotated[
        str | None,
        typer.Option(help=f"Audit checks (default all: {', '.join(CHECKS)}; 'none' to skip)."),
    ] = None,
    reruns: Annotated[int, typer.Option(help="Gradings per response for flakiness.", min=1)] = 2,
    proxy: Annotated[
        str | None, typer.Option(help="Proxy score column, for the overoptimization section.")
    ] = None,
    gold: Annotated[str | None, typer.Option(help="Gold score column (with --proxy).")] = None,
    threshold: ThresholdOption = 0.5,
    limit: ItemLimitOption = None,
    workers: WorkersOption = None,
    timeout_s: TimeoutOption = None,
    backend: BackendOption = "local",
    ray_address: RayAddressOption = None,
    preset: PresetOption = "auto",
    field: FieldOption = [],
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="STATUS",
            help="Exit 1 when the verdict is this bad or worse: unsafe, caution or never "
            "(for scripts and CI).",
        ),
    ] = "never",
) -> None:
    """Build a grader card: validity, exploitability, item soundness and a verdict."""
    from truegrade.card import build_card, write_card

    if (proxy is None) != (gold is None):
        fail("give both --proxy and --gold, or neither")
    if fail_on not in _SEVERITY:
        fail("--fail-on is unsafe, caution or never")
    chosen = parse_checks(checks)
    attacker = attacker_options(
        attacker_endpoint, attacker_model, attacker_key_env, attacker_candidates, budget=budget
    )
    the_grader = load_cli_grader(
        grader, option, timeout_s, backend=backend, ray_address=ray_address, workers=workers
    )
    the_oracle = load_oracle(oracle)
    rows = load_items(data, the_grader, preset=preset, fields=field, limit=limit)
    names = [a.strip() for a in attacks.split(",")] if attacks else None
    try:
        card = build_card(
            the_grader,
            rows,
            title=title,
            data_name=str(data),
            kind=kind,
            attacks=names,
            hostile=hostile,
            unsafe_hostile=unsafe_hostile,
            budget=budget,
            threshold=threshold,
            checks=chosen,
            reruns=reruns,
            labels=labels,
            proxy=proxy,
            gold=gold,
            oracle=the_oracle,
            attacker=attacker,
            progress=lambda msg: err_console.print(f"[dim]{msg}[/]"),
        )
    except (KeyError, ValueError) as exc:
        fail(str(exc.args[0] if exc.args else exc))
    paths = write_card(card, out)
    v = card.verdict
    colour = {"unsafe": "red", "caution": "yellow", "holds": "green"}[v.status]
    out_console.print(f"[bold {colour}]{v.status.upper()}[/]: {v.headline}")
    for line in (v.validity.summary, v.exploitability.summary, v.soundness.summary):
        out_console.print(f"  {line}", highlight=False)
    for key, path in paths.items():
        out_console.print(f"{key}: {path}", highlight=False)
    if _SEVERITY[v.status] >= _SEVERITY[fail_on]:
        fail(f"--fail-on {fail_on}: the verdict is {v.status}", 1)


_SEVERITY = {"holds": 0, "caution": 1, "unsafe": 2, "never": 3}
"""How bad each verdict is, for ``--fail-on`` (``never``: nothing reaches it)."""
