"""Making a review project from data, grading it, and exporting it.

Two shapes of data are read as their datasets publish them:

* **HealthBench's meta-evaluation rows**, one per (conversation, response, criterion) with the
  physicians' verdicts: ``prompt``, ``completion``, ``rubric`` (or ``criterion``),
  ``binary_labels``, ``anonymized_physician_ids``, ``category``, ``prompt_id``. The rows of one
  response become one item with its own criteria, each physician an expert, each verdict a label.
* **Responses to grade**: ``prompt`` (text or messages), ``response`` (or ``completion``),
  optional ``id``, ``category``, ``group``; the criteria come from the row's own ``rubrics`` (as
  HealthBench's eval rows carry them) or from a rubric file shared by every item.

The export (``export_project``) writes the rubric, the meta-evaluation file ``truegrade rubric
meta`` reads (``meta_eval.jsonl``, HealthBench's shape), the labels and the grader's verdicts,
and ``agreement.json`` with every number of the dashboard, each file sorted and written with
fixed formatting.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from truegrade.core import DataError, SpecError
from truegrade.data import read_rows
from truegrade.graders.rubric import load_rubric
from truegrade.review._numbers import agreement
from truegrade.review._store import ReviewStore, ReviewVerdict, User, make_directory

__all__ = [
    "EXPORT_FILES",
    "add_rows",
    "add_rubric",
    "export_project",
    "grade_project",
    "import_attacks",
    "import_export",
    "init_project",
]

EXPORT_FILES = (
    "project.json",
    "items.jsonl",
    "rubric.yaml",
    "labels.jsonl",
    "verdicts.jsonl",
    "meta_eval.jsonl",
    "validate.jsonl",
    "grades.jsonl",
    "agreement.json",
)
_MAX_TEXT = 200_000


def _text(row: Mapping[str, Any], keys: Sequence[str], where: str) -> str:
    for key in keys:
        value = row.get(key)
        if isinstance(value, str):
            if len(value) > _MAX_TEXT:
                raise DataError(f"{where}: {key!r} is longer than {_MAX_TEXT:,} characters")
            return value
        if value is not None:
            raise DataError(f"{where}: {key!r} must be text, got {type(value).__name__}")
    raise DataError(f"{where}: needs {' or '.join(repr(k) for k in keys)}")


def _prompt(row: Mapping[str, Any], where: str) -> Any:
    prompt = row.get("prompt")
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list) and all(
        isinstance(m, Mapping) and isinstance(m.get("content"), str) for m in prompt
    ):
        return [{"role": str(m.get("role", "user")), "content": m["content"]} for m in prompt]
    raise DataError(f"{where}: 'prompt' must be text or a list of messages with 'content'")


def _criterion_of(raw: Any, where: str) -> tuple[str, float, list[str]]:
    if isinstance(raw, str):
        return raw, 1.0, []
    if isinstance(raw, Mapping) and isinstance(raw.get("criterion"), str):
        points = raw.get("points", 1)
        if not isinstance(points, int | float) or isinstance(points, bool):
            raise DataError(f"{where}: a criterion's 'points' must be a number")
        tags = raw.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise DataError(f"{where}: a criterion's 'tags' must be a list of text")
        return raw["criterion"], float(points), list(tags)
    raise DataError(f"{where}: a criterion must be text or have a 'criterion' text")


def init_project(
    directory: str | Path,
    *,
    data: str | Path,
    rubric: str | Path | None = None,
    grader: Mapping[str, Any] | None = None,
    name: str | None = None,
    experts_per_item: int | None = None,
) -> ReviewStore:
    """A new project in ``directory`` from ``data`` (see the module docstring); nothing is
    written when a row is bad (the error names the file and line).

    Raises:
        DataError: a bad row or rubric, or a project already there.
    """
    rows = list(read_rows(data, what="review data"))
    if not rows:
        raise DataError(f"{data}: no rows")
    shared = load_rubric(rubric).items if rubric is not None else None
    # read everything before the project exists, so a bad row leaves nothing behind
    plan = _plan(rows, str(data), shared is not None)
    if experts_per_item is not None:
        if experts_per_item < 1:
            raise DataError("experts per item must be at least 1")
        _check_slots(plan, experts_per_item, str(data))
    store = ReviewStore(directory, create=True)
    with store.write() as db:
        store.set_meta(db, "name", name or Path(directory).name)
        store.set_meta(db, "grader", dict(grader or {}))
        store.set_meta(db, "source", Path(data).name)
        store.set_meta(db, "experts_per_item", experts_per_item)
        shared_ids = _write_shared(store, db, shared)
        _write_plan(store, db, plan, str(data))
        store.log(
            db,
            "cli",
            "init",
            {"data": str(data), "items": len(plan), "shared_criteria": len(shared_ids)},
        )
    return store


def add_rows(
    store: ReviewStore, data: str | Path, *, actor: str = "cli", shown: str | None = None
) -> int:
    """Add the items of ``data`` (rows as ``init_project`` reads them) to a project, all or
    none: a bad row, or an item already in the project, is an error naming the file and line,
    and nothing is written. Rows without ``rubrics`` take the project's shared criteria.
    ``shown`` is the file's name in messages (an upload's own name). The number of items added.

    Raises:
        DataError: a bad row (file and line), or more experts on an item than it has slots.
    """
    where = shown or str(data)
    rows = _named_errors(lambda: list(read_rows(data, what="review data")), data, where)
    if not rows:
        raise DataError(f"{where}: no rows")
    shared = any(c.item_id is None for c in store.criteria())
    plan = _named_errors(lambda: _plan(rows, where, shared), data, where)
    limit = store.experts_per_item()
    if limit is not None:
        _check_slots(plan, limit, where)
    with store.write() as db:
        _write_plan(store, db, plan, where)
        store.log(db, actor, "rows_added", {"data": where, "items": len(plan)})
    return len(plan)


def add_rubric(
    store: ReviewStore, rubric: str | Path, *, actor: str = "cli", shown: str | None = None
) -> int:
    """Add the criteria of a rubric file (YAML or JSON, as ``truegrade rubric`` reads them) as
    criteria shared by every item, all or none. The number of criteria added.

    Raises:
        DataError: the file is not a rubric (the message names the line or field).
    """
    where = shown or str(rubric)
    items = _named_errors(lambda: load_rubric(rubric).items, rubric, where)
    with store.write() as db:
        added = _write_shared(store, db, items)
        store.log(db, actor, "rubric_added", {"rubric": where, "criteria": len(added)})
    return len(added)


def _named_errors(read: Any, path: str | Path, shown: str) -> Any:
    """``read()``, its errors naming ``shown`` where they named ``path`` (an upload is read
    from a temporary file; its messages name the file the expert chose)."""
    try:
        return read()
    except SpecError as exc:
        raise DataError(str(exc).replace(str(path), shown)) from None
    except DataError as exc:
        raise DataError(str(exc).replace(str(path), shown)) from None


def _check_slots(plan: Sequence[Mapping[str, Any]], limit: int, where: str) -> None:
    for entry in plan:
        experts = {e for c in entry["criteria"] for e, _ in c["labels"]}
        if len(experts) > limit:
            raise DataError(
                f"{where}:{entry['line']}: item {entry['key']} has {len(experts)} experts' "
                f"labels, more than the project's {limit} experts per item"
            )


def _write_shared(store: ReviewStore, db: Any, shared: Any) -> list[int]:
    """Criteria shared by every item, keyed after the project's last shared one."""
    taken = [c.key for c in store.criteria(current=False) if c.item_id is None]
    start = max((int(k[1:]) for k in taken if k[1:].isdigit()), default=0)
    return [
        store.add_criterion(db, key=f"c{start + k + 1:03d}", text=text, points=points, tags=tags)
        for k, (text, points, tags) in enumerate(_shared_items(shared))
    ]


def _write_plan(store: ReviewStore, db: Any, plan: Sequence[Mapping[str, Any]], where: str) -> None:
    """The planned items with their own criteria and their experts' labels (an expert met for
    the first time is added, with no password: an admin gives them one)."""
    experts = {u.name: u for u in store.users()}
    for name in sorted({e for p in plan for c in p["criteria"] for e, _ in c["labels"]}):
        if name in experts and experts[name].role != "expert":
            raise DataError(f"{where}: {name!r} labels, but is a {experts[name].role} here")
        if name not in experts:
            cursor = db.execute(
                "INSERT INTO users(name, role, password) VALUES (?, 'expert', NULL)", (name,)
            )
            experts[name] = User(int(cursor.lastrowid or 0), name, "expert")
    for entry in plan:
        if db.execute("SELECT 1 FROM items WHERE key = ?", (entry["key"],)).fetchone():
            raise DataError(
                f"{where}:{entry['line']}: item {entry['key']} is already in the project"
            )
        item_id = store.add_item(
            db,
            key=entry["key"],
            prompt=entry["prompt"],
            response=entry["response"],
            category=entry["category"],
            cluster=entry["cluster"],
        )
        for k, criterion in enumerate(entry["criteria"]):
            cid = store.add_criterion(
                db,
                key=f"{entry['key']}/c{k + 1:03d}",
                text=criterion["text"],
                points=criterion["points"],
                tags=criterion["tags"],
                item_id=item_id,
            )
            for expert, met in criterion["labels"]:
                store.claim_slot(db, experts[expert], item_id)
                db.execute(
                    "INSERT INTO labels(item_id, criterion_id, user_id, met, updated) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (item_id, cid, experts[expert].id, int(met), "import"),
                )


def _shared_items(shared: Any) -> list[tuple[str, float, list[str]]]:
    if not shared:
        return []
    return [(i.criterion, float(i.points), list(i.tags)) for i in shared]


def _plan(rows: list[tuple[int, dict[str, Any]]], path: str, shared: bool) -> list[dict[str, Any]]:
    """The items of ``rows`` (each with its criteria and labels), checked row by row; ``shared``:
    criteria shared by every item exist, so a row may carry none of its own."""
    meta_shape = any("binary_labels" in row for _, row in rows)
    items: dict[str, dict[str, Any]] = {}
    for line, row in rows:
        where = f"{path}:{line}"
        prompt = _prompt(row, where)
        response = _text(row, ("completion", "response"), where)
        category = row.get("category")
        if category is not None and not isinstance(category, str):
            raise DataError(f"{where}: 'category' must be text")
        if meta_shape:
            group = row.get("prompt_id")
            key = str(row.get("completion_id") or f"{group or line}:{hash_text(response)}")
        else:
            key = str(row.get("id", line))
            group = row.get("group", row.get("prompt_id"))
        entry = items.setdefault(
            key,
            {
                "key": key,
                "prompt": prompt,
                "response": response,
                "category": category,
                "cluster": str(group) if group is not None else key,
                "line": line,
                "criteria": [],
            },
        )
        if meta_shape:
            text, points, tags = _criterion_of(row.get("rubric", row.get("criterion")), where)
            labels = row.get("binary_labels")
            if (
                not isinstance(labels, list)
                or not labels
                or not all(isinstance(v, bool) for v in labels)
            ):
                raise DataError(f"{where}: 'binary_labels' must be a non-empty list of true/false")
            raters = row.get("anonymized_physician_ids") or [
                f"expert {k + 1}" for k in range(len(labels))
            ]
            if len(raters) != len(labels) or not all(isinstance(r, str) for r in raters):
                raise DataError(
                    f"{where}: 'anonymized_physician_ids' must name one rater per label"
                )
            entry["criteria"].append(
                {
                    "text": text,
                    "points": points,
                    "tags": tags,
                    "labels": list(zip(raters, labels, strict=True)),
                }
            )
        else:
            own = row.get("rubrics")
            if own is not None:
                if not isinstance(own, list):
                    raise DataError(f"{where}: 'rubrics' must be a list of criteria")
                for raw in own:
                    text, points, tags = _criterion_of(raw, where)
                    entry["criteria"].append(
                        {"text": text, "points": points, "tags": tags, "labels": []}
                    )
            elif not shared:
                raise DataError(
                    f"{where}: the row has no 'rubrics' and no rubric file was given (--rubric)"
                )
    return list(items.values())


def import_attacks(store: ReviewStore, report: str | Path, *, actor: str = "cli") -> int:
    """Add the responses an attack report (``truegrade attack --out``) found rewarded as items:
    each attack's example and each exploited search result, on the project's item it attacked,
    with that item's criteria. Experts label them blind like any other item; the attack is shown
    only once they have labelled it. Returns how many items were added.

    Raises:
        DataError: the report is not an attack report, or names an item the project lacks.
    """
    from pydantic import ValidationError

    from truegrade.attacks import AttackReport

    if not Path(report).is_file():
        raise DataError(f"{report}: not a file (an attack report is a JSON file)")
    try:
        parsed = AttackReport.model_validate_json(Path(report).read_text(encoding="utf-8"))
    except (OSError, ValidationError, UnicodeDecodeError) as exc:
        raise DataError(f"{report}: not an attack report ({str(exc).splitlines()[0]})") from None
    found: list[tuple[str, str, str]] = []
    for result in parsed.attacks:
        if result.example is not None:
            found.append((result.name, result.example.item, result.example.response))
    for searched in parsed.search:
        if searched.exploited:
            found.append(("search", searched.item, searched.best_response))
    items = {i.key: i for i in store.items()}
    missing = sorted({item for _, item, _ in found if item not in items})
    if missing:
        raise DataError(
            f"{report}: attacks items this project does not hold: {', '.join(missing[:5])}"
        )
    added = 0
    with store.write() as db:
        for name, key, response in found:
            origin = items[key]
            # a key that says nothing of the attack: experts see it before they label
            new_key = "i" + hash_text(f"{name}\0{key}\0{response}")
            if db.execute("SELECT 1 FROM items WHERE key = ?", (new_key,)).fetchone():
                continue
            item_id = store.add_item(
                db,
                key=new_key,
                prompt=origin.prompt,
                response=response,
                category=origin.category,
                cluster=origin.cluster,
                source="attack",
                attack=name,
            )
            own = db.execute(
                "SELECT * FROM criteria WHERE item_id = ? AND current = 1 ORDER BY key",
                (origin.id,),
            ).fetchall()
            for k, row in enumerate(own):
                store.add_criterion(
                    db,
                    key=f"{new_key}/c{k + 1:03d}",
                    text=row["text"],
                    points=row["points"],
                    tags=json.loads(row["tags"]),
                    item_id=item_id,
                    author=actor,
                )
            added += 1
        store.log(db, actor, "attacks_imported", {"report": str(report), "items": added})
    return added


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [row for _, row in read_rows(path, what="review export")]


def import_export(directory: str | Path, export: str | Path) -> ReviewStore:
    """A new project from an export of ``export_project``: its items with their criteria and
    keys, the shared rubric, every expert's labels (experts in the export's order, with no
    password: an admin gives them one) and the grader's verdicts. Exporting it again gives the
    same bytes.

    Raises:
        DataError: a file of the export is missing or malformed (named with its line).
    """
    folder = Path(export)
    for name in EXPORT_FILES:
        if not folder.is_dir() or not (folder / name).is_file():
            raise DataError(f"{folder}: not an export of truegrade review ({name} is missing)")
    items = _jsonl(folder / "items.jsonl")
    try:
        written = yaml.safe_load((folder / "rubric.yaml").read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise DataError(f"{folder / 'rubric.yaml'}: not readable YAML ({exc})") from None
    has_shared = isinstance(written, dict) and written.get("rubric")
    shared = load_rubric(folder / "rubric.yaml").items if has_shared else None
    labels = _jsonl(folder / "labels.jsonl")
    verdicts = _jsonl(folder / "verdicts.jsonl")
    try:
        numbers = json.loads((folder / "agreement.json").read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        raise DataError(f"{folder / 'agreement.json'}: not readable JSON ({exc})") from None
    experts = numbers.get("experts") if isinstance(numbers, dict) else None
    if not isinstance(experts, list) or not all(isinstance(e, str) for e in experts):
        raise DataError(f"{folder / 'agreement.json'}: 'experts' must be a list of names")
    store = ReviewStore(directory, create=True)
    try:
        with store.write() as db:
            store.set_meta(db, "name", Path(directory).name)
            store.set_meta(db, "source", str(folder))
            store.set_meta(db, "experts_per_item", _experts_per_item(folder))
            users = {}
            for name in experts:
                cursor = db.execute(
                    "INSERT INTO users(name, role, password) VALUES (?, 'expert', NULL)", (name,)
                )
                users[name] = User(int(cursor.lastrowid or 0), name, "expert")
            keys: dict[tuple[str, str], tuple[int, int]] = {}
            shared_ids = [
                (
                    f"c{k + 1:03d}",
                    store.add_criterion(db, key=f"c{k + 1:03d}", text=t, points=p, tags=g),
                )
                for k, (t, p, g) in enumerate(_shared_items(shared))
            ]
            for line, row in enumerate(items, 1):
                where = f"{folder / 'items.jsonl'}:{line}"
                item_id = store.add_item(
                    db,
                    key=str(row["id"]),
                    prompt=_prompt(row, where),
                    response=_text(row, ("response",), where),
                    category=row.get("category"),
                    cluster=str(row.get("group") or row["id"]),
                    source=str(row.get("source") or "data"),
                    attack=row.get("attack"),
                )
                for key, cid in shared_ids:
                    keys[(str(row["id"]), key)] = (item_id, cid)
                for raw in row.get("rubrics") or []:
                    text, points, tags = _criterion_of(raw, where)
                    cid = store.add_criterion(
                        db,
                        key=str(raw["key"]),
                        text=text,
                        points=points,
                        tags=tags,
                        item_id=item_id,
                    )
                    keys[(str(row["id"]), str(raw["key"]))] = (item_id, cid)
            for line, row in enumerate(labels, 1):
                found = keys.get((str(row.get("item")), str(row.get("criterion"))))
                if found is None or row.get("expert") not in users:
                    raise DataError(
                        f"{folder / 'labels.jsonl'}:{line}: names no item, criterion "
                        "or expert of the export"
                    )
                store.claim_slot(db, users[row["expert"]], found[0])
                db.execute(
                    "INSERT INTO labels(item_id, criterion_id, user_id, met, reason, "
                    "disputes_grader, updated) VALUES (?, ?, ?, ?, ?, ?, 'import')",
                    (
                        *found,
                        users[row["expert"]].id,
                        int(bool(row["met"])),
                        str(row.get("reason") or ""),
                        int(bool(row.get("disputes_grader"))),
                    ),
                )
            for line, row in enumerate(verdicts, 1):
                found = keys.get((str(row.get("item")), str(row.get("criterion"))))
                if found is None:
                    raise DataError(
                        f"{folder / 'verdicts.jsonl'}:{line}: names no item or "
                        "criterion of the export"
                    )
                met = row.get("met")
                db.execute(
                    "INSERT INTO verdicts(item_id, criterion_id, met, explanation, error) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (
                        *found,
                        None if met is None else int(bool(met)),
                        str(row.get("explanation") or ""),
                        row.get("error"),
                    ),
                )
            store.log(db, "cli", "import", {"export": str(folder), "items": len(items)})
    except (KeyError, TypeError) as exc:
        _discard(store)
        raise DataError(f"{folder}: a malformed export ({exc!r})") from None
    except BaseException:
        _discard(store)
        raise
    return store


def _discard(store: ReviewStore) -> None:
    """Remove a project whose import failed: nothing half made is left behind."""
    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store.path}{suffix}").unlink(missing_ok=True)


def hash_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def grade_project(store: ReviewStore, grader: Any, *, actor: str = "cli") -> int:
    """Grade every (item, current criterion) without a verdict with ``grader`` (a
    ``RubricGrader``); unchanged criteria of graded items are never judged again. Returns how
    many were judged."""
    from truegrade.core import Sample
    from truegrade.graders.rubric import RubricItem

    done = store.verdicts()
    todo = [(i, c) for i, c in store.pairs() if (i.id, c.id) not in done]
    if not todo:
        return 0
    jobs = [
        (
            Sample(id=i.key, prompt=i.prompt, response=i.response),
            RubricItem(criterion=c.text, points=c.points, tags=tuple(c.tags)),
        )
        for i, c in todo
    ]
    made = grader.evaluate_criteria(jobs)
    store.set_verdicts(
        [
            ReviewVerdict(i.id, c.id, None if v.error else v.met, f"by {v.by}", v.error)
            for (i, c), v in zip(todo, made, strict=True)
        ],
        actor=actor,
    )
    return len(todo)


def _dump_jsonl(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    path.write_text(
        "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows),
        encoding="utf-8",
    )


def export_project(store: ReviewStore, out: str | Path, *, n_resamples: int = 1000) -> list[Path]:
    """Write the project's export into ``out`` (see the module docstring); the files written."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise DataError(f"{folder}: a file is there; the export is a directory")
    make_directory(folder, "the export's directory")
    items = {i.id: i for i in store.items()}
    criteria = store.criteria()
    shared = [c for c in criteria if c.item_id is None]
    verdicts = store.verdicts()
    current = {c.id for c in criteria}  # the export holds what is current, not the history
    labels = store.labels()
    by_unit: dict[tuple[int, int], list[tuple[str, bool]]] = {}
    for label in labels:
        by_unit.setdefault((label.item_id, label.criterion_id), []).append((label.user, label.met))
    _dump_jsonl(
        folder / "items.jsonl",
        [
            {
                "id": i.key,
                "prompt": i.prompt,
                "response": i.response,
                "category": i.category,
                "group": i.cluster,
                "source": i.source,
                "attack": i.attack,
                "rubrics": [
                    {"key": c.key, "criterion": c.text, "points": c.points, "tags": list(c.tags)}
                    for c in criteria
                    if c.item_id == i.id
                ],
            }
            for i in items.values()
        ],
    )
    (folder / "rubric.yaml").write_text(
        yaml.safe_dump(
            {
                "rubric": [
                    {"criterion": c.text, "points": c.points, "tags": list(c.tags)} for c in shared
                ]
            },
            sort_keys=True,
            allow_unicode=True,
        ),
        encoding="utf-8",
    )
    _dump_jsonl(
        folder / "labels.jsonl",
        [
            {
                "item": items[lb.item_id].key,
                "criterion": _key(criteria, lb.criterion_id),
                "expert": lb.user,
                "met": lb.met,
                "reason": lb.reason,
                "disputes_grader": lb.disputes_grader,
            }
            for lb in labels
        ],
    )
    _dump_jsonl(
        folder / "verdicts.jsonl",
        [
            {
                "item": items[v.item_id].key,
                "criterion": _key(criteria, v.criterion_id),
                "met": v.met,
                "explanation": v.explanation,
                "error": v.error,
            }
            for (_, cid), v in sorted(verdicts.items())
            if cid in current
        ],
    )
    meta = []
    for item, criterion in store.pairs():
        given = by_unit.get((item.id, criterion.id))
        if not given:
            continue
        meta.append(
            {
                "prompt": item.prompt,
                "completion": item.response,
                "prompt_id": item.cluster,
                "completion_id": item.key,
                "category": item.category,
                "rubric": {
                    "criterion": criterion.text,
                    "points": criterion.points,
                    "tags": list(criterion.tags),
                },
                "binary_labels": [met for _, met in given],
                "anonymized_physician_ids": [name for name, _ in given],
            }
        )
    _dump_jsonl(folder / "meta_eval.jsonl", meta)
    rows, grades = _validate_rows(store, by_unit, verdicts)
    _dump_jsonl(folder / "validate.jsonl", rows)
    _dump_jsonl(folder / "grades.jsonl", grades)
    (folder / "project.json").write_text(
        json.dumps({"experts_per_item": store.experts_per_item()}, sort_keys=True) + "\n",
        encoding="utf-8",
    )
    numbers = agreement(store, n_resamples=n_resamples)
    (folder / "agreement.json").write_text(
        json.dumps(numbers, sort_keys=True, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    with store.write() as db:
        store.log(db, "cli", "export", {"out": str(folder), "files": list(EXPORT_FILES)})
    return [folder / name for name in EXPORT_FILES]


def _validate_rows(
    store: ReviewStore,
    by_unit: Mapping[tuple[int, int], list[tuple[str, bool]]],
    verdicts: Mapping[tuple[int, int], ReviewVerdict],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``truegrade validate``'s rows and grades: one row per expert's label (HealthBench's
    pairing: each label paired with the grader's verdict on the same criterion), in HealthBench's
    eval shape (``prompt``, ``completion``, ``rubrics``, ``prompt_id``: the item's cluster, so
    intervals cluster on the conversation) plus ``label``, the expert's met / not met; the one
    criterion at its points' size (so a rubric grader's score is 1 exactly when it finds the
    criterion met); and the
    grader's verdict on each as a results row joined by id (``--scores``). A unit the grader
    has no verdict on is an error row, never a 0."""
    rows: list[dict[str, Any]] = []
    grades: list[dict[str, Any]] = []
    for item, criterion in store.pairs():
        # an item's own criteria are keyed under the item already; shared ones are not
        unit = criterion.key if criterion.item_id is not None else f"{item.key}/{criterion.key}"
        verdict = verdicts.get((item.id, criterion.id))
        for expert, met in by_unit.get((item.id, criterion.id), []):
            key = f"{unit}@{expert}"
            rows.append(
                {
                    "id": key,
                    "prompt": item.prompt,
                    "completion": item.response,
                    "rubrics": [
                        {
                            "criterion": criterion.text,
                            "points": abs(criterion.points) or 1.0,
                            "tags": list(criterion.tags),
                        }
                    ],
                    "label": met,
                    "prompt_id": item.cluster,
                    "metadata": {
                        "category": item.category,
                        "criterion": criterion.key,
                        "expert": expert,
                    },
                }
            )
            if verdict is None or verdict.met is None:
                why = verdict.error if verdict is not None else None
                grades.append(
                    {"id": key, "passed": None, "error": why or "the grader gave no verdict"}
                )
            else:
                grades.append(
                    {
                        "id": key,
                        "score": 1.0 if verdict.met else 0.0,
                        "passed": verdict.met,
                        "explanation": verdict.explanation,
                    }
                )
    return rows, grades


def _experts_per_item(folder: Path) -> int | None:
    try:
        written = json.loads((folder / "project.json").read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        raise DataError(f"{folder / 'project.json'}: not readable JSON ({exc})") from None
    count = written.get("experts_per_item") if isinstance(written, dict) else "?"
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
        raise DataError(f"{folder / 'project.json'}: 'experts_per_item' must be a whole number")
    return count


def _key(criteria: Sequence[Any], criterion_id: int) -> str:
    for c in criteria:
        if c.id == criterion_id:
            return str(c.key)
    return str(criterion_id)
