"""``truegrade attack``: how exploitable is a grader? Throw wrong answers at it and count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from truegrade.attacks import KINDS
from truegrade.cli._common import (
    SPEC,
    BackendOption,
    FailOnRateOption,
    FieldOption,
    GraderKeyValueOption,
    ItemLimitOption,
    OutOption,
    PresetOption,
    QuietOption,
    RayAddressOption,
    TimeoutOption,
    WorkersOption,
    err_console,
    fail,
    fail_if_all_errors,
    fail_on_rate,
    load_items,
    out_console,
    progress_bar,
    write_text_file,
)
from truegrade.cli._grade import load_cli_grader, load_oracle

if TYPE_CHECKING:
    from truegrade.attacks import AttackReport

__all__ = [
    "AttackerCandidatesOption",
    "AttackerEndpointOption",
    "AttackerKeyEnvOption",
    "AttackerModelOption",
    "HostileOption",
    "KindOption",
    "UnsafeHostileOption",
    "attack_command",
    "attack_table",
    "attacker_options",
]


def _rate(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.0%} [{low or 0:.0%}, {high or 0:.0%}]"


def attack_table(report: AttackReport, *, title: str) -> Table:
    """Per attack: responses tried and rewarded, items exploited with a Wilson CI, an example."""
    table = Table(title=title, title_justify="left")
    with_errors = any(r.grader_errors for r in report.attacks)
    table.add_column("attack", no_wrap=True)
    table.add_column("tried", justify="right")
    table.add_column("rewarded", justify="right")
    table.add_column("items exploited", justify="right", no_wrap=True)
    if with_errors:
        table.add_column("grader errors", justify="right")
    table.add_column("shortest rewarded response", overflow="fold", max_width=48)
    for result in sorted(report.attacks, key=lambda r: -(r.exploit_rate or 0)):
        if result.tried == 0:
            continue
        example = result.example.response.replace("\n", "⏎")[:60] if result.example else ""
        errors = ", ".join(f"{k} {v}" for k, v in result.grader_errors.items())
        style = "red" if result.exploited else ""
        cells = [
            f"[{style}]{result.name}[/]" if style else result.name,
            str(result.tried),
            str(result.exploited),
            _rate(result.exploit_rate, result.ci_low, result.ci_high),
        ]
        cells += [errors] if with_errors else []
        table.add_row(*cells, example)
    return table


def _known_kind(value: str | None) -> str | None:
    if value is not None and value not in KINDS:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(KINDS)}")
    return value


# Options shared with ``truegrade card``: the attack family, hostile attacks, the attacker LLM.
HostileOption = Annotated[
    bool,
    typer.Option(
        help="Also run attacks built to hang, escape or rewrite files (code ones only against "
        "the sandboxed code grader)."
    ),
]
UnsafeHostileOption = Annotated[
    bool,
    typer.Option(
        "--unsafe-hostile",
        help="Run hostile code attacks against a grader that runs programs outside the "
        "sandbox: they fork-bomb, escape and rewrite files there. A throwaway machine only.",
    ),
]
KindOption = Annotated[
    str | None,
    typer.Option(
        help=f"Attack family: {', '.join(KINDS)} (default: inferred).", callback=_known_kind
    ),
]
AttackerEndpointOption = Annotated[
    str | None,
    typer.Option(
        help="OpenAI-compatible endpoint of an attacker LLM the search asks for new "
        "candidates each generation (needs --budget and --attacker-model)."
    ),
]
AttackerModelOption = Annotated[str | None, typer.Option(help="The attacker's model.")]
AttackerKeyEnvOption = Annotated[
    str | None,
    typer.Option(help="Environment variable holding the attacker endpoint's API key."),
]
AttackerCandidatesOption = Annotated[
    int, typer.Option(help="Candidates asked of the attacker per item and generation.", min=1)
]


def attacker_options(
    endpoint: str | None,
    model: str | None,
    key_env: str | None,
    candidates: int,
    *,
    budget: int,
) -> dict[str, Any] | None:
    """The attacker LLM's settings from its command-line options (None: no attacker), or exit
    with a clear message when they cannot work together."""
    if endpoint is None and model is None:
        return None
    if endpoint is None or model is None:
        fail("--attacker-endpoint and --attacker-model go together")
    if budget <= 0:
        fail("the attacker joins the adaptive search: give it --budget N")
    return {"endpoint": endpoint, "model": model, "api_key_env": key_env, "candidates": candidates}


def attack_command(
    data: Annotated[
        Path | None,
        typer.Argument(help="Items to attack (prompt and reference); not needed with --list."),
    ] = None,
    grader: Annotated[
        str | None, typer.Option("--grader", "-g", metavar=SPEC, help="Grader spec to attack.")
    ] = None,
    option: GraderKeyValueOption = [],
    attacks: Annotated[
        str | None,
        typer.Option(help="Comma-separated attack names (default: all for the grader's kind)."),
    ] = None,
    kind: KindOption = None,
    hostile: HostileOption = False,
    unsafe_hostile: UnsafeHostileOption = False,
    budget: Annotated[
        int, typer.Option(help="Adaptive-search queries per item (0: off).", min=0)
    ] = 0,
    oracle: Annotated[
        str | None,
        typer.Option(
            metavar=SPEC,
            help="Grader that knows right from wrong, for "
            "the search (default: math for math items).",
        ),
    ] = None,
    attacker_endpoint: AttackerEndpointOption = None,
    attacker_model: AttackerModelOption = None,
    attacker_key_env: AttackerKeyEnvOption = None,
    attacker_candidates: AttackerCandidatesOption = 4,
    threshold: Annotated[float, typer.Option(help="A score above this counts as rewarded.")] = 0.5,
    limit: ItemLimitOption = None,
    seed: Annotated[int, typer.Option(help="Random seed (runs repeat exactly).")] = 0,
    workers: WorkersOption = None,
    timeout_s: TimeoutOption = None,
    backend: BackendOption = "local",
    ray_address: RayAddressOption = None,
    preset: PresetOption = "auto",
    field: FieldOption = [],
    out: OutOption = None,
    fail_on: FailOnRateOption = None,
    list_attacks: Annotated[
        bool, typer.Option("--list", help="List the attack library and exit.")
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Attack a grader with wrong-by-construction responses and report how often it rewards them."""
    from truegrade.attacks import ATTACKS, attacks_for, run_attacks

    if list_attacks:
        attacks_for("math")
        table = Table(title="attack library", title_justify="left")
        for column in ("attack", "targets", "why every response is wrong"):
            table.add_column(column, overflow="fold")
        for spec in sorted(ATTACKS.values(), key=lambda a: (sorted(a.kinds), a.name)):
            table.add_row(
                spec.name + (" (hostile)" if spec.hostile else ""),
                ", ".join(sorted(spec.kinds)),
                spec.why_wrong,
            )
        out_console.print(table)
        return
    if data is None:
        fail("give the items to attack: truegrade attack DATA --grader SPEC (or --list)")
    if grader is None:
        fail("--grader is required (or --list to see the attacks)")
    the_grader = load_cli_grader(
        grader, option, timeout_s, backend=backend, ray_address=ray_address, workers=workers
    )
    the_oracle = load_oracle(oracle)
    attacker = attacker_options(
        attacker_endpoint, attacker_model, attacker_key_env, attacker_candidates, budget=budget
    )
    names = [a.strip() for a in attacks.split(",")] if attacks else None
    items = load_items(data, the_grader, preset=preset, fields=field, limit=limit)
    with progress_bar(enabled=not quiet) as bar:
        task = bar.add_task("attacking", total=None)
        try:
            report = run_attacks(
                the_grader,
                items,
                kind=kind,
                attacks=names,
                hostile=hostile,
                unsafe_hostile=unsafe_hostile,
                threshold=threshold,
                budget=budget,
                seed=seed,
                oracle=the_oracle,
                attacker=attacker,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
        except KeyError as exc:
            fail(str(exc.args[0]))
        except ValueError as exc:
            fail(str(exc))
    out_console.print(attack_table(report, title=f"{grader} under attack ({report.kind})"))
    e = report.exploitability
    out_console.print(
        f"exploitability: {_rate(e.rate, e.ci_low, e.ci_high)} of {e.items} items have a wrong "
        f"response the grader rewards"
        + (f"; worst attack: {e.worst_attack}" if e.worst_attack else ""),
        highlight=False,
    )
    c = report.controls
    if c.tried:
        out_console.print(
            f"controls (correct answers): {c.passed} of {c.tried} rewarded", highlight=False
        )
        if c.rate is not None and c.rate < 0.5:
            err_console.print(
                "[yellow]warning:[/] the grader rejects most correct answers; "
                "a low exploitability means little here"
            )
    if report.search:
        found = [s for s in report.search if s.exploited]
        searched = [s for s in found if s.source != "library"]
        line = f"adaptive search ({budget} queries per item): {len(found)} of "
        line += f"{len(report.search)} items exploited"
        if len(searched) < len(found):
            line += f", {len(found) - len(searched)} of them already by the library"
        if searched:
            queries = sorted(s.queries for s in searched)
            line += f"; the search's own in {queries[0]}-{queries[-1]} queries"
        out_console.print(line, highlight=False)
        if searched:
            table = Table(
                title=f"search exploits (first {min(10, len(searched))} of {len(searched)})",
                title_justify="left",
            )
            for column in ("item", "score", "written by", "queries", "response"):
                table.add_column(column, overflow="fold")
            for s in searched[:10]:
                table.add_row(
                    s.item, f"{s.best_score:.3g}", s.source, str(s.queries), s.best_response[:100]
                )
            out_console.print(table)
    if report.attacker is not None:
        a = report.attacker
        by_operators = sum(s.exploits_operators for s in report.search)
        errors = ", ".join(f"{k} {v}" for k, v in sorted(a.errors.items()))
        out_console.print(
            f"attacker {a.model}: {a.requests} requests, {a.candidates} candidates graded; "
            f"exploits written by the attacker: {a.exploits}, made by mutations: {by_operators}"
            + (f"; no candidates: {errors}" if errors else ""),
            highlight=False,
        )
        if a.stopped:
            err_console.print(f"[yellow]warning:[/] attacker stopped: {a.stopped}", highlight=False)
    if out is not None:
        write_text_file(out, json.dumps(report.model_dump(), indent=2) + "\n")
        out_console.print(f"report: {out}", highlight=False)
    tried = sum(a.tried for a in report.attacks)
    failed = [flag for a in report.attacks for flag, n in a.grader_errors.items() for _ in range(n)]
    fail_if_all_errors(tried, failed, "attack response")
    fail_on_rate(fail_on, e.items_exploited, e.items, "items exploited")
