"""``truegrade review``: a local web app where domain experts label items blind, argue with the
grader, and watch agreement between them and the grader move.

A project is one directory holding one SQLite file (``ReviewStore``). ``init_project`` makes
it from data as published (HealthBench's meta-evaluation rows, or responses with rubrics);
``grade_project`` adds the rubric grader's verdicts; ``agreement`` computes every number, each
with its rule; ``export_project`` writes the rubric, the labels, the verdicts, the meta-eval
file ``truegrade rubric meta`` reads and ``agreement.json``; ``create_review_app`` is the web
app (FastAPI, pages rendered on the server; see ``docs/review.md``).
"""

from truegrade.review._app import ROUTES, create_review_app
from truegrade.review._numbers import RULES, Unit, agreement, units, version_numbers
from truegrade.review._project import (
    EXPORT_FILES,
    add_rows,
    add_rubric,
    export_project,
    grade_project,
    import_attacks,
    import_export,
    init_project,
)
from truegrade.review._store import (
    ROLES,
    SCHEMA_VERSION,
    Criterion,
    EditConflict,
    Item,
    Label,
    ReviewStore,
    ReviewVerdict,
    SlotsTaken,
    User,
)

__all__ = [
    "EXPORT_FILES",
    "ROLES",
    "ROUTES",
    "RULES",
    "SCHEMA_VERSION",
    "Criterion",
    "EditConflict",
    "Item",
    "Label",
    "ReviewStore",
    "ReviewVerdict",
    "SlotsTaken",
    "Unit",
    "User",
    "add_rows",
    "add_rubric",
    "agreement",
    "create_review_app",
    "export_project",
    "grade_project",
    "import_attacks",
    "import_export",
    "init_project",
    "units",
    "version_numbers",
]
