"""``truegrade review``: the experts' review app and every action of it from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from truegrade._ports import REVIEW_PORT
from truegrade.cli._common import SPEC, err_console, fail, out_console, user_errors

__all__ = ["review_app"]

review_app = typer.Typer(
    help="Experts label items blind, argue with the grader, and watch agreement move (a local "
    "web app).",
    no_args_is_help=True,
)

ProjectArg = Annotated[Path, typer.Argument(metavar="PROJECT", help="The project's directory.")]
NewProjectArg = Annotated[
    Path, typer.Argument(metavar="OUTDIR", help="The new project's directory (made here).")
]


@review_app.command("init")
def init_command(
    project: NewProjectArg,
    data: Annotated[
        Path | None, typer.Option(help="Rows: HealthBench meta-eval, or responses.")
    ] = None,
    rubric: Annotated[Path | None, typer.Option(help="A rubric file shared by every item.")] = None,
    import_: Annotated[
        Path | None,
        typer.Option("--import", metavar="EXPORT", help="An export of truegrade review export."),
    ] = None,
    grader: Annotated[
        str | None,
        typer.Option(
            "--grader",
            metavar=SPEC,
            help="The project's rubric grader (a YAML spec file or 'rubric'): `review grade` "
            "uses it, and `review serve` re-grades an edited criterion's items on save.",
        ),
    ] = None,
    experts_per_item: Annotated[
        int | None,
        typer.Option(
            min=1, help="Experts per item: each takes one of its slots (default: no limit)."
        ),
    ] = None,
) -> None:
    """Make a project from data (HealthBench meta-eval rows, or responses with rubrics), or
    from an export."""
    from truegrade.review import import_export, init_project

    if (data is None) == (import_ is None):
        fail("give --data (with --rubric when the rows carry none) or --import")
    spec = _grader_spec(grader) if grader is not None else None
    with user_errors():
        if import_ is not None:
            if spec is not None or experts_per_item is not None:
                fail("--import takes the project as exported: no --grader or --experts-per-item")
            store = import_export(project, import_)
        else:
            assert data is not None
            store = init_project(
                project, data=data, rubric=rubric, grader=spec, experts_per_item=experts_per_item
            )
    items = len(store.items())
    experts = len(store.users("expert"))
    out_console.print(f"{project}: {items} items, {experts} experts imported")


def _grader_spec(spec: str) -> dict[str, object]:
    """How the project names its rubric grader: a grader's name, or the absolute path of its spec
    file (read again when the grader is built, so its relative paths still resolve), checked by
    building the grader now. The project keeps this name and nothing else: a judge's key is
    named by its environment variable in the spec file (``api_key_env``), never copied here."""
    from truegrade.core import load_grader
    from truegrade.graders.rubric import RubricGrader

    path = Path(spec)
    named = str(path.resolve()) if path.is_file() else spec
    with user_errors():
        built = load_grader(named)
    if not isinstance(built, RubricGrader):
        fail(
            f"{spec}: --grader must name a rubric grader (type: rubric), got {type(built).__name__}"
        )
    return {"spec": named}


def _project_grader(project: Path) -> object | None:
    """The grader the project was made with (``init --grader``), built, or None."""
    from truegrade.core import load_grader
    from truegrade.review import ReviewStore

    with user_errors():
        named = ReviewStore(project).meta("grader") or {}
        return load_grader(named["spec"]) if named.get("spec") else None


@review_app.command("add")
def add_command(
    project: ProjectArg,
    data: Annotated[
        Path | None, typer.Option(help="Rows to add as items (as `review init --data` reads).")
    ] = None,
    rubric: Annotated[
        Path | None, typer.Option(help="A rubric whose criteria every item shares.")
    ] = None,
) -> None:
    """Add items or shared criteria to a project (what the project page's uploads do): all or
    nothing, a bad row named with its line."""
    from truegrade.review import ReviewStore, add_rows, add_rubric

    if data is None and rubric is None:
        fail("give --data (rows) or --rubric (shared criteria)")
    with user_errors():
        store = ReviewStore(project)
        if rubric is not None:
            out_console.print(f"{add_rubric(store, rubric)} shared criteria added")
        if data is not None:
            out_console.print(f"{add_rows(store, data)} items added")


@review_app.command("assign")
def assign_command(
    project: ProjectArg,
    expert: Annotated[
        str | None, typer.Option(help="Give this expert items to label (with --count).")
    ] = None,
    count: Annotated[int, typer.Option(min=1, help="How many items to give them.")] = 20,
    experts_per_item: Annotated[
        int | None, typer.Option(min=1, help="Set the experts per item (each takes a slot).")
    ] = None,
) -> None:
    """Set how many experts label each item, or give an expert their next items (their own
    unfinished ones first, then items with a free slot, taken for them)."""
    from truegrade.review import ReviewStore

    if expert is None and experts_per_item is None:
        fail("give --expert NAME (with --count) or --experts-per-item N")
    with user_errors():
        store = ReviewStore(project)
        if experts_per_item is not None:
            store.set_experts_per_item(experts_per_item)
            out_console.print(f"{experts_per_item} experts per item")
        if expert is not None:
            user = store.user(expert)
            if user is None or user.role != "expert":
                fail(f"no expert {expert!r}")
            keys = {i.id: i.key for i in store.items()}
            given = store.assign(user, count, actor="cli")
            for item_id in given:
                out_console.print(keys[item_id], highlight=False)
            if not given:
                out_console.print(f"nothing left for {expert} to label")


@review_app.command("user")
def user_command(
    project: ProjectArg,
    name: Annotated[str, typer.Argument(help="The user's name.")],
    role: Annotated[str, typer.Option(help="expert, viewer or admin.")] = "expert",
    password: Annotated[
        str | None,
        typer.Option(
            envvar="TRUEGRADE_REVIEW_PASSWORD",
            help="Their password (or TRUEGRADE_REVIEW_PASSWORD; asked for when neither).",
        ),
    ] = None,
) -> None:
    """Add a user (an expert, a viewer or an admin)."""
    from truegrade.review import ReviewStore

    secret = password or typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    with user_errors():
        ReviewStore(project).add_user(name, role, secret)
    out_console.print(f"{name} ({role}) added")


@review_app.command("label")
def label_command(
    project: ProjectArg,
    expert: Annotated[str, typer.Option(help="The expert labelling.")],
    item: Annotated[str, typer.Option(help="The item's id.")],
    criterion: Annotated[str, typer.Option(help="The criterion's key.")],
    met: Annotated[bool, typer.Option("--met/--not-met", help="The label.")],
    reason: Annotated[str, typer.Option(help="Why.")] = "",
    disputes_grader: Annotated[
        bool, typer.Option(help="Say the grader is wrong on it (with --reason: why).")
    ] = False,
) -> None:
    """Label one criterion of one item as an expert (what the app's buttons do)."""
    from truegrade.review import ReviewStore

    with user_errors():
        store = ReviewStore(project)
        user = store.user(expert)
        if user is None:
            fail(f"no user {expert!r}")
        found = {i.key: i for i in store.items()}.get(item)
        if found is None:
            fail(f"no item {item!r}")
        match = [c for c in store.criteria(found.id) if c.key == criterion]
        if not match:
            fail(f"item {item!r} has no current criterion {criterion!r}")
        try:
            store.set_label(
                user, found.id, match[0].id, met, reason, disputes_grader=disputes_grader
            )
        except PermissionError as exc:
            fail(str(exc))
    out_console.print("saved")


@review_app.command("edit")
def edit_command(
    project: ProjectArg,
    criterion: Annotated[str, typer.Option(help="The criterion's key.")],
    text: Annotated[str, typer.Option(help="Its new wording.")],
    by: Annotated[str, typer.Option(help="The expert or admin editing it.")],
    version: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="The version the edit starts from (default: the current one); an older "
            "one is refused with the difference, never overwritten.",
        ),
    ] = None,
) -> None:
    """Save a new wording of a criterion as its next version (what the criterion page does):
    its old wording keeps its labels, and `review grade` judges exactly its items again."""
    from truegrade.review import EditConflict, ReviewStore

    with user_errors():
        store = ReviewStore(project)
        user = store.user(by)
        if user is None or user.role not in ("expert", "admin"):
            fail(f"no expert or admin {by!r}")
        versions = store.versions(criterion)
        if not versions:
            fail(f"no criterion {criterion!r}")
        base = next((v for v in versions if v.version == version), None) if version else None
        if version is not None and base is None:
            fail(f"criterion {criterion!r} has no version {version}")
        start = base or next(v for v in versions if v.current)
        try:
            made = store.edit_criterion(user, start.id, text)
        except EditConflict as exc:
            err_console.print(exc.diff(), highlight=False, markup=False)
            fail(str(exc))
    out_console.print(f"{criterion}: version {made.version} saved")


@review_app.command("grade")
def grade_command(
    project: ProjectArg,
    spec: Annotated[
        str | None,
        typer.Option("--spec", metavar=SPEC, help="The rubric grader (YAML spec or 'rubric')."),
    ] = None,
    judge_endpoint: Annotated[
        str | None, typer.Option(help="An OpenAI-compatible base URL (with --judge-model).")
    ] = None,
    judge_model: Annotated[str | None, typer.Option(help="The judge model.")] = None,
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="Grader option KEY=VALUE.")
    ] = None,
) -> None:
    """Grade every (item, criterion) without a verdict: after an edit, exactly its items."""
    from truegrade.cli._rubric import rubric_grader
    from truegrade.review import ReviewStore, grade_project

    grader = rubric_grader(spec, judge_endpoint, judge_model, option or []) or _project_grader(
        project
    )
    if grader is None:
        fail(
            "name the grader: --spec, or --judge-endpoint with --judge-model (or make the "
            "project with --grader)"
        )
    with user_errors():
        judged = grade_project(ReviewStore(project), grader)
    out_console.print(f"{judged} judged")


@review_app.command("import-attacks")
def import_attacks_command(
    project: ProjectArg,
    report: Annotated[Path, typer.Argument(help="A report of truegrade attack --out.")],
) -> None:
    """Add the responses an attack report found rewarded as items, to be labelled blind."""
    from truegrade.review import ReviewStore, import_attacks

    with user_errors():
        added = import_attacks(ReviewStore(project), report)
    out_console.print(f"{added} attack items added")


@review_app.command("export")
def export_command(
    project: ProjectArg,
    out: Annotated[
        Path, typer.Option(metavar="OUTDIR", help="The directory to write the export into.")
    ],
) -> None:
    """Export the rubric, labels, verdicts, the meta-eval file and agreement.json."""
    from truegrade.review import ReviewStore, export_project

    with user_errors():
        written = export_project(ReviewStore(project), out)
    for path in written:
        out_console.print(str(path))


@review_app.command("serve")
def serve_command(
    project: ProjectArg,
    port: Annotated[int, typer.Option(help="The port.")] = REVIEW_PORT,
    host: Annotated[str, typer.Option(help="The address (loopback unless --allow-remote).")] = (
        "127.0.0.1"
    ),
    allow_remote: Annotated[
        bool, typer.Option(help="Listen beyond this machine (needs an admin with a password).")
    ] = False,
) -> None:
    """Serve the review app (127.0.0.1 unless --allow-remote)."""
    import uvicorn

    from truegrade.review import ReviewStore, create_review_app

    loopback = host in ("127.0.0.1", "::1", "localhost")
    with user_errors():
        store = ReviewStore(project)
        if not loopback:
            if not allow_remote:
                fail(f"{host} is not loopback: pass --allow-remote to listen beyond this machine")
            if not store.users("admin"):
                fail("--allow-remote needs an admin with a password (truegrade review user)")
        app = create_review_app(project, grader=_project_grader(project))
    err_console.print(f"truegrade review: http://{host}:{port}/")
    uvicorn.run(app, host=host, port=port, log_level="warning")
