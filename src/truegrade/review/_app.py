"""The review web app: FastAPI rendering HTML on the server (Jinja2), one SQLite file per project.

Why this stack: FastAPI and Jinja2 are already what truegrade's server runs on; pages rendered on
the server need no build step and no node, and keep every decision (what an expert may see) on
the server, where it can be tested over HTTP. The one script (``static/review.js``: keyboard
shortcuts, the dashboard's refresh) is a file of the package, served from the app itself: no
CDN, and a Content-Security-Policy that allows no inline script.

What the server enforces, not the page:

* **Blind labelling.** On an item's page an expert gets, for each criterion they have not
  labelled yet, neither the grader's verdict nor another expert's label: they are not in the
  HTTP response at all. Once they label it, both are shown, with a way to say the grader is
  wrong and why.
* **Roles.** ``expert`` labels; ``viewer`` reads items (unblinded), numbers and drill-downs;
  ``admin`` as a viewer, and manages the project. Each route names the roles it admits; any
  other gets 403 (``ROUTES`` is the matrix, tested cell by cell).
* **Sessions and CSRF.** A session cookie (HttpOnly, SameSite=Strict) whose token is stored
  hashed; every write carries the session's CSRF token in its form, checked on the server.
"""

from __future__ import annotations

import hmac
import io
import tempfile
import threading
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile as StarletteUpload
from starlette.exceptions import HTTPException as StarletteHTTPException

from truegrade.core import DataError
from truegrade.graders.rubric import Rubric, RubricItem
from truegrade.review._numbers import agreement, units, version_numbers
from truegrade.review._project import add_rows, add_rubric, export_project, grade_project
from truegrade.review._store import Criterion, EditConflict, ReviewStore, SlotsTaken, User
from truegrade.rubric import RubricSource, lint_rubrics

__all__ = ["ROUTES", "create_review_app"]

_HERE = Path(__file__).parent
COOKIE = "truegrade_review"
ROUTES: dict[tuple[str, str], tuple[str, ...]] = {
    ("GET", "/"): ("expert", "viewer", "admin"),
    ("GET", "/items/{item_id}"): ("expert", "viewer", "admin"),
    ("POST", "/items/{item_id}/labels"): ("expert",),
    ("GET", "/next"): ("expert",),
    ("GET", "/dashboard"): ("expert", "viewer", "admin"),
    ("GET", "/agreement.json"): ("viewer", "admin"),
    ("GET", "/drill"): ("viewer", "admin"),
    ("GET", "/events"): ("admin",),
    ("GET", "/criteria/{criterion_id}"): ("expert", "admin"),
    ("POST", "/criteria/{criterion_id}"): ("expert", "admin"),
    ("POST", "/lint"): ("expert", "admin"),
    ("GET", "/admin"): ("admin",),
    ("POST", "/admin/users"): ("admin",),
    ("POST", "/admin/slots"): ("admin",),
    ("POST", "/upload/data"): ("admin",),
    ("POST", "/upload/rubric"): ("admin",),
    ("GET", "/export.zip"): ("admin",),
}
"""(method, path) -> the roles admitted; every other role gets 403. Experts see the dashboard's
overall numbers, but not the per-item drill-down (it would show other experts' labels of items
they have not labelled)."""

_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


UPLOAD_LIMIT = 50 * 2**20
"""The largest upload (bytes): rows or a rubric; more gets 413 and nothing is read."""


def create_review_app(
    project: str | Path,
    *,
    n_resamples: int = 500,
    grader: Any = None,
    upload_limit: int = UPLOAD_LIMIT,
) -> FastAPI:
    """The app of the project in ``project`` (a directory made by ``truegrade review init``).

    ``grader`` (a ``RubricGrader``) re-grades an edited criterion's items as soon as it is
    saved; without one, ``truegrade review grade`` does it later.
    """
    store = ReviewStore(project)
    templates = Environment(
        loader=FileSystemLoader(_HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    app = FastAPI(title="truegrade review", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=_HERE / "static"), name="static")
    app.state.store = store
    cached: dict[tuple[int, str, bool | str], Any] = {}
    guard = threading.Lock()

    def at_newest(kind: str, detail: bool | str, compute: Callable[[], Any]) -> Any:
        """``compute()`` at the newest event: computed once per change and kind (the dashboard,
        one criterion's numbers, every criterion's, the drill-down), whatever asks for it, and
        by one request at a time (others wait for it rather than compute it again)."""
        key = (store.last_event(), kind, detail)
        with guard:
            if key not in cached:
                for stale in [k for k in cached if k[0] != key[0]]:
                    del cached[stale]
                while len(cached) >= 64:  # many criteria's pages at one event
                    del cached[next(iter(cached))]
                cached[key] = compute()
            return cached[key]

    def numbers_now(per_criterion: bool | str) -> dict[str, Any]:
        """The numbers at the newest event (recomputed only when something changed)."""
        found: dict[str, Any] = at_newest(
            "numbers",
            per_criterion,
            lambda: agreement(store, n_resamples=n_resamples, per_criterion=per_criterion),
        )
        return found

    def version_now(criterion: Criterion) -> dict[str, Any]:
        """One wording's own numbers (its labels and verdicts), at the newest event."""
        found: dict[str, Any] = at_newest(
            "version",
            str(criterion.id),
            partial(version_numbers, store, criterion, n_resamples=n_resamples),
        )
        return found

    @app.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Any]) -> Response:
        response: Response = await call_next(request)
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    def page(name: str, request: Request, **context: Any) -> HTMLResponse:
        who = _who(request, store)
        body = templates.get_template(name).render(
            user=who[0] if who else None,
            csrf=who[1] if who else "",
            project=store.meta("name", "review"),
            **context,
        )
        return HTMLResponse(body)

    def admit(request: Request, method: str, route: str) -> tuple[User, str]:
        who = _who(request, store)
        if who is None:
            raise HTTPException(status_code=401, detail="log in first")
        if who[0].role not in ROUTES[(method, route)]:
            raise HTTPException(status_code=403, detail=f"a {who[0].role} may not do this")
        return who

    def check_csrf(given: str, expected: str) -> None:
        if not given or not hmac.compare_digest(given, expected):
            raise HTTPException(status_code=403, detail="the form's CSRF token is missing or wrong")

    @app.exception_handler(HTTPException)
    async def problem(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 401 and "text/html" in request.headers.get("accept", ""):
            return RedirectResponse("/login", status_code=303)
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request) -> HTMLResponse:
        return page("login.j2", request, failed=False)

    @app.post("/login")
    def login(request: Request, name: str = Form(...), password: str = Form(...)) -> Response:
        made = store.login(name, password)
        if made is None:
            response = page("login.j2", request, failed=True)
            response.status_code = 401
            return response
        token, _ = made
        redirect = RedirectResponse("/", status_code=303)
        redirect.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return redirect

    @app.post("/logout")
    def logout(request: Request, csrf: str = Form("")) -> Response:
        who = _who(request, store)
        if who is not None:
            check_csrf(csrf, who[1])
            store.logout(request.cookies.get(COOKIE, ""))
        redirect = RedirectResponse("/login", status_code=303)
        redirect.delete_cookie(COOKIE)
        return redirect

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request, page_number: int = 1) -> HTMLResponse:
        user, _ = admit(request, "GET", "/")
        size = 100
        total = store.count_items()
        pages = max(1, -(-total // size))
        at = min(max(page_number, 1), pages)
        rows = [
            {"item": item, "done": done, "total": count}
            for item, done, count in store.progress(user.name, offset=(at - 1) * size, limit=size)
        ]
        return page("home.j2", request, rows=rows, at=at, pages=pages, total=total)

    @app.get("/items/{item_id}", response_class=HTMLResponse)
    def item_page(request: Request, item_id: int) -> HTMLResponse:
        user, _ = admit(request, "GET", "/items/{item_id}")
        item = store.item(item_id)
        if item is None:
            raise HTTPException(status_code=404, detail=f"no item {item_id}")
        verdicts = store.verdicts(item_id)
        labels = store.labels(item_id=item_id)
        criteria = []
        for criterion in store.criteria(item_id):
            own = next(
                (lb for lb in labels if lb.criterion_id == criterion.id and lb.user == user.name),
                None,
            )
            # blind: what others said is sent only once this expert has said their own
            sees = user.role != "expert" or own is not None
            verdict = verdicts.get((item_id, criterion.id)) if sees else None
            others = (
                [lb for lb in labels if lb.criterion_id == criterion.id and lb.user != user.name]
                if sees
                else []
            )
            criteria.append(
                {
                    "criterion": criterion,
                    "own": own,
                    "verdict": verdict,
                    "others": others,
                    "sees": sees,
                }
            )
        holders = store.assignments(item_id)
        limit = store.experts_per_item()
        # with a fixed number of experts per item, one whose slots are all held by others is
        # closed to this expert (the server refuses the label too, with 409)
        closed = (
            user.role == "expert"
            and limit is not None
            and len(holders) >= limit
            and user.name not in {name for _, name in holders}
        )
        previous, following = store.neighbours(item_id)
        # an attack's item is named for its attack only once this expert labelled all of it
        all_seen = all(c["sees"] for c in criteria)
        return page(
            "item.j2",
            request,
            item=item,
            criteria=criteria,
            previous=previous,
            next=following,
            all_seen=all_seen,
            closed=closed,
            limit=limit,
        )

    @app.get("/next")
    def next_item(request: Request) -> Response:
        user, _ = admit(request, "GET", "/next")
        found = store.next_item(user)
        if found is None:
            return page("done.j2", request, limit=store.experts_per_item())
        return RedirectResponse(f"/items/{found}", status_code=303)

    @app.post("/items/{item_id}/labels")
    def label(
        request: Request,
        item_id: int,
        criterion_id: int = Form(...),
        met: str = Form(...),
        reason: str = Form(""),
        disputes_grader: str = Form(""),
        csrf: str = Form(""),
    ) -> Response:
        user, expected = admit(request, "POST", "/items/{item_id}/labels")
        check_csrf(csrf, expected)
        if met not in ("met", "not_met"):
            raise HTTPException(status_code=422, detail="'met' must be 'met' or 'not_met'")
        try:
            store.set_label(
                user,
                item_id,
                criterion_id,
                met == "met",
                reason,
                disputes_grader=disputes_grader == "yes",
            )
        except SlotsTaken as exc:
            raise HTTPException(status_code=409, detail=str(exc)) from None
        except DataError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from None
        if "text/html" in request.headers.get("accept", ""):
            return RedirectResponse(f"/items/{item_id}#c{criterion_id}", status_code=303)
        return JSONResponse({"saved": True, "item": item_id, "criterion": criterion_id})

    @app.get("/dashboard", response_class=HTMLResponse)
    def dashboard(request: Request) -> HTMLResponse:
        admit(request, "GET", "/dashboard")
        return page("dashboard.j2", request, numbers=numbers_now(False))

    @app.get("/agreement.json")
    def numbers(request: Request) -> JSONResponse:
        admit(request, "GET", "/agreement.json")
        return JSONResponse(numbers_now(True))

    @app.get("/drill", response_class=HTMLResponse)
    def drill(request: Request, category: str = "", criterion: str = "") -> HTMLResponse:
        admit(request, "GET", "/drill")
        every = at_newest("drill", True, lambda: units(store, labelled_only=True))
        split = []
        for u in every:
            if category and (u.item.category or "(none)") != category:
                continue
            if criterion and u.criterion.key != criterion:
                continue
            if u.grader is None or not u.labels:
                continue
            if any(met != u.grader for met in u.labels.values()):
                split.append(u)
        return page("drill.j2", request, units=split, category=category, criterion=criterion)

    @app.get("/criteria/{criterion_id}", response_class=HTMLResponse)
    def criterion_page(request: Request, criterion_id: int) -> HTMLResponse:
        admit(request, "GET", "/criteria/{criterion_id}")
        found = store.criterion(criterion_id)
        if found is None:
            raise HTTPException(status_code=404, detail=f"no criterion {criterion_id}")
        return page(
            "criterion.j2",
            request,
            criterion=found,
            versions=[(v, version_now(v)) for v in store.versions(found.key)],
            findings=lint_text(found.text, found.points),
        )

    @app.post("/criteria/{criterion_id}")
    def edit(
        request: Request,
        criterion_id: int,
        text: str = Form(...),
        csrf: str = Form(""),
    ) -> Response:
        user, expected = admit(request, "POST", "/criteria/{criterion_id}")
        check_csrf(csrf, expected)
        base = store.criterion(criterion_id)
        before = numbers_now(base.key)["criteria"] if base is not None else {}
        try:
            made = store.edit_criterion(user, criterion_id, text)
        except EditConflict as exc:
            return JSONResponse(
                {"error": str(exc), "current": exc.now.id, "diff": exc.diff()}, status_code=409
            )
        except DataError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from None
        graded = grade_project(store, grader, actor=user.name) if grader is not None else 0
        after = numbers_now(made.key)["criteria"]
        if "text/html" in request.headers.get("accept", ""):
            return RedirectResponse(f"/criteria/{made.id}", status_code=303)
        return JSONResponse(
            {
                "criterion": made.id,
                "version": made.version,
                "regraded": graded,
                "before": before.get(made.key),
                "after": after.get(made.key),
            }
        )

    @app.post("/lint")
    def lint(
        request: Request, text: str = Form(""), points: float = Form(1.0), csrf: str = Form("")
    ) -> JSONResponse:
        _, expected = admit(request, "POST", "/lint")
        check_csrf(csrf, expected)
        return JSONResponse({"findings": lint_text(text, points)})

    @app.get("/events")
    def events(request: Request) -> JSONResponse:
        admit(request, "GET", "/events")
        return JSONResponse(store.events())

    def admin_page(
        request: Request, note: str = "", error: str = "", status: int = 200
    ) -> Response:
        response = page(
            "admin.j2",
            request,
            users=store.users(),
            limit=store.experts_per_item(),
            items=store.count_items(),
            shared=[c for c in store.criteria() if c.item_id is None],
            upload_limit=upload_limit,
            note=note,
            error=error,
        )
        response.status_code = status
        return response

    def done(request: Request, note: str, payload: dict[str, Any]) -> Response:
        if "text/html" in request.headers.get("accept", ""):
            return RedirectResponse(f"/admin?note={quote(note)}", status_code=303)
        return JSONResponse(payload)

    def refused(request: Request, status: int, why: str) -> Response:
        if "text/html" in request.headers.get("accept", ""):
            return admin_page(request, error=why, status=status)
        return JSONResponse({"error": why}, status_code=status)

    @app.get("/admin", response_class=HTMLResponse)
    def admin(request: Request, note: str = "") -> Response:
        admit(request, "GET", "/admin")
        return admin_page(request, note=note[:200])

    @app.post("/admin/users")
    def add_user(
        request: Request,
        name: str = Form(...),
        role: str = Form("expert"),
        password: str = Form(...),
        csrf: str = Form(""),
    ) -> Response:
        user, expected = admit(request, "POST", "/admin/users")
        check_csrf(csrf, expected)
        if len(password) < 8:
            return refused(request, 422, "a password is at least 8 characters")
        try:
            store.add_user(name, role, password, actor=user.name)
        except DataError as exc:
            return refused(request, 422, str(exc))
        return done(request, f"{name} ({role}) added", {"added": name, "role": role})

    @app.post("/admin/slots")
    def set_slots(
        request: Request, experts_per_item: str = Form(""), csrf: str = Form("")
    ) -> Response:
        user, expected = admit(request, "POST", "/admin/slots")
        check_csrf(csrf, expected)
        text = experts_per_item.strip()
        if text and not text.isdigit():
            return refused(request, 422, "experts per item: a whole number, or empty for no limit")
        count = int(text) if text else None
        try:
            store.set_experts_per_item(count, actor=user.name)
        except DataError as exc:
            return refused(request, 422, str(exc))
        said = f"{count} experts per item" if count else "no limit of experts per item"
        return done(request, said, {"experts_per_item": count})

    async def upload(request: Request, route: str, add: Callable[..., int], what: str) -> Response:
        user, expected = admit(request, "POST", route)
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > upload_limit + 64 * 1024:
            return refused(request, 413, f"the upload is larger than {upload_limit:,} bytes")
        try:
            async with request.form(
                max_files=1, max_fields=4, max_part_size=64 * 1024
            ) as form:  # closed (its spooled files too) however the upload ends
                check_csrf(str(form.get("csrf") or ""), expected)
                sent = form.get("file")
                if not isinstance(sent, StarletteUpload) or not sent.filename:
                    return refused(request, 422, f"choose a {what} file to upload (field 'file')")
                return await receive(request, user, sent, add, what)
        except StarletteHTTPException as exc:
            if exc.status_code != 400:
                raise
            return refused(request, 400, f"not a form upload ({exc.detail})")

    async def receive(
        request: Request, user: User, sent: StarletteUpload, add: Callable[..., int], what: str
    ) -> Response:
        shown = _safe_name(sent.filename or "", what)
        with tempfile.TemporaryDirectory(prefix="truegrade-upload-") as folder:
            target = Path(folder) / shown
            size = 0
            with target.open("wb") as out:
                while chunk := await sent.read(1 << 20):
                    size += len(chunk)
                    if size > upload_limit:
                        return refused(
                            request, 413, f"{shown} is larger than {upload_limit:,} bytes"
                        )
                    out.write(chunk)
            try:
                added = await run_in_threadpool(add, store, target, actor=user.name, shown=shown)
            except DataError as exc:
                return refused(request, 422, str(exc).replace(folder + "/", ""))
        noun = what if added != 1 else {"items": "item", "criteria": "criterion"}[what]
        return done(request, f"{shown}: {added} {noun} added", {"file": shown, "added": added})

    @app.post("/upload/data")
    async def upload_data(request: Request) -> Response:
        return await upload(request, "/upload/data", add_rows, "items")

    @app.post("/upload/rubric")
    async def upload_rubric(request: Request) -> Response:
        return await upload(request, "/upload/rubric", add_rubric, "criteria")

    @app.get("/export.zip")
    def export_zip(request: Request) -> Response:
        admit(request, "GET", "/export.zip")
        with tempfile.TemporaryDirectory(prefix="truegrade-export-") as folder:
            written = export_project(store, Path(folder) / "export", n_resamples=n_resamples)
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in written:
                    archive.write(path, f"export/{path.name}")
        name = f"{store.meta('name', 'review')}-export.zip".replace('"', "")
        return Response(
            buffer.getvalue(),
            media_type="application/zip",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    return app


def lint_text(text: str, points: float) -> list[dict[str, str]]:
    """``truegrade rubric lint``'s findings on one criterion's text (as the expert types)."""
    if not text.strip():
        return [{"code": "empty", "severity": "error", "reason": "a criterion needs text"}]
    try:
        rubric = Rubric(items=(RubricItem(criterion=text, points=points or 1.0),))
    except ValueError as exc:
        return [{"code": "invalid", "severity": "error", "reason": str(exc)}]
    report = lint_rubrics([RubricSource("draft", rubric)])
    return [
        {"code": f.code, "severity": str(f.severity), "reason": f.reason} for f in report.findings
    ]


def _safe_name(filename: str, what: str) -> str:
    """The base name of an uploaded file, in plain characters (it names the file in messages
    and nothing else: the upload is written under a directory of its own)."""
    base = Path(filename.replace("\\", "/")).name
    kept = "".join(ch for ch in base if ch.isalnum() or ch in "._-")[:100].lstrip(".")
    return kept or f"upload-{what}"


def _who(request: Request, store: ReviewStore) -> tuple[User, str] | None:
    token = request.cookies.get(COOKIE)
    return store.session(token) if token else None
