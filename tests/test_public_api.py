"""The public surface: every package's ``__all__`` is sorted, complete and importable."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

import truegrade

SRC = Path(__file__).resolve().parents[1] / "src"
#: Every public package (a directory with an ``__init__.py`` and no leading underscore), found on
#: disk so that a new one is checked without being listed here.
PACKAGES = sorted(
    ".".join(init.parent.relative_to(SRC).parts)
    for init in (SRC / "truegrade").rglob("__init__.py")
    if not any(part.startswith("_") for part in init.parent.relative_to(SRC).parts)
)


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_unique_and_every_name_resolves(name):
    # (ruff's RUF022 keeps each __all__ sorted)
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported))
    for attr in exported:
        assert getattr(module, attr) is not None, f"{name}.{attr}"


def test_one_object_per_public_name():
    # a name two packages export means one concept: never two different classes or functions
    homes: dict[str, dict[int, str]] = {}
    for name in PACKAGES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            value = getattr(module, attr)
            if isinstance(value, type) or callable(value):
                homes.setdefault(attr, {})[id(value)] = f"{name}.{attr}"
    assert [sorted(h.values()) for h in homes.values() if len(h) > 1] == []


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_error_is_in_the_tree(name):
    # one ``except TruegradeError`` catches whatever truegrade raises on purpose
    module = importlib.import_module(name)
    errors = [
        attr
        for attr in module.__all__
        if isinstance(value := getattr(module, attr), type) and issubclass(value, BaseException)
    ]
    outside = [e for e in errors if not issubclass(getattr(module, e), truegrade.TruegradeError)]
    assert outside == []


#: Each package and each public module of one (``truegrade.integrations.trl``): what the API
#: reference shows.
FACES = sorted(
    PACKAGES
    + [
        f"{name}.{path.stem}"
        for name in PACKAGES
        for path in SRC.joinpath(*name.split(".")).glob("*.py")
        if path.stem[0] != "_"
    ]
)


@functools.cache
def _definitions(module: str) -> dict[str, ast.AST]:
    """The classes and functions a module's source defines, by name (top level first)."""
    tree = ast.parse(inspect.getsource(sys.modules[module]))
    found: dict[str, ast.AST] = {}
    for node in [*tree.body, *ast.walk(tree)]:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(node.name, node)
    return found


@pytest.mark.parametrize("name", FACES)
def test_every_exported_class_and_function_has_a_docstring(name):
    # the API reference shows each name of __all__ with its docstring, read from the source (a
    # dataclass's generated ``__doc__`` is no docstring); names defined outside truegrade aside
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # a module of an optional extra (the Ray backend) not installed
        if os.environ.get("TRUEGRADE_REQUIRE_FRAMEWORKS") == "1" or os.environ.get("CI"):
            raise
        pytest.skip(str(exc))
    missing = []
    for attr in module.__all__:
        value = getattr(module, attr)
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        if not value.__module__.startswith("truegrade"):
            continue
        node = _definitions(value.__module__).get(value.__name__)
        assert isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)), attr
        if not (ast.get_docstring(node) or "").strip():
            missing.append(attr)
    assert missing == []


def test_top_level_api_has_the_contracts():
    for name in ("Sample", "Grade", "Grader", "load_grader"):
        assert name in truegrade.__all__


def test_importing_truegrade_is_cheap():
    # workers import the package; the core and its dependencies load only when used
    code = (
        "import sys, truegrade; print('pydantic' in sys.modules, 'truegrade.core' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("package", ["truegrade.exec", "truegrade.sandbox"])
def test_mechanisms_do_not_import_the_layers_above_them(package):
    # the engine and the sandbox know nothing of graders (nor of the core)
    code = (
        f"import sys, {package}; print(sorted(m for m in sys.modules if m.startswith('truegrade')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(out.stdout)
    root = ("truegrade", "truegrade._exports", "truegrade._errors", "truegrade._budgets")
    assert all(m.startswith((package, "truegrade._version")) or m in root for m in loaded), loaded
