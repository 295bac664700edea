"""The layer diagram in CONTRIBUTING.md, as a test: every import of the package, walked.

Each import of a ``truegrade`` package by another (function-level imports included, imports
under ``TYPE_CHECKING`` not, since they never run) must point down the diagram; every package
must be drawn; no module may import another package's private module; no two modules may import
each other, directly or round a longer loop.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "truegrade"
#: Top-level modules that import no package and may be imported from anywhere.
LEAVES = {"_version", "_ports", "_exports", "_errors", "_budgets"}
#: The package's faces, which may import anything.
FACES = {"__init__", "__main__"}


def layers() -> dict[str, int]:
    """Package -> height in the diagram (0 at the bottom)."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    block = text.split("## Layers", 1)[1].split("```", 2)[1]
    lines = [line for line in block.splitlines() if line.strip()]
    height: dict[str, int] = {}
    for level, line in enumerate(reversed(lines)):
        drawn = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        for name in drawn.split(" / "):
            assert name not in height, f"{name} is drawn twice"
            height[name.strip()] = level
    return height


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        yield "truegrade." + ".".join(parts), path


def _imports(path: Path) -> Iterator[str]:
    """Every ``truegrade`` module name ``path`` imports (``from a import b``: ``a`` and
    ``a.b``), leaving out imports under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            skipped.update(id(n) for child in node.body for n in ast.walk(child))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("truegrade"))
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").startswith("truegrade")
        ):
            # ``from package import submodule`` depends on the submodule, not on what the
            # package's face holds; ``from module import name`` on the module
            names = [f"{node.module}.{a.name}" for a in node.names]
            yield from (n for n in names if n in MODULES)
            if not all(n in MODULES for n in names):
                yield str(node.module)


MODULES: dict[str, Path] = {}


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


MODULES.update(_modules())


def test_every_package_is_drawn_once():
    drawn = layers()
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    assert packages - set(drawn) == set(), "packages the diagram does not draw"
    assert set(drawn) - packages == set(), "the diagram draws packages that do not exist"


def test_every_import_points_down_the_diagram():
    height = layers()
    wrong = set()
    for module, path in MODULES.items():
        source = _top(module)
        for target in map(_top, _imports(path)):
            if target == source or source in FACES or target in FACES:
                continue
            if source in LEAVES:
                wrong.add((source, target, "a leaf module imports a package"))
            elif target in LEAVES:
                continue
            elif height[target] >= height[source]:
                wrong.add((source, target, str(path.relative_to(ROOT))))
    assert sorted(wrong) == []


def test_no_package_imports_another_packages_private_module():
    found = set()
    for module, path in MODULES.items():
        for target in _imports(path):
            parts = target.split(".")
            private = any(p.startswith("_") and not p.startswith("__") for p in parts[2:])
            if len(parts) > 2 and parts[1] != _top(module) and private:
                found.add((str(path.relative_to(ROOT)), target))
    assert sorted(found) == []


def test_no_modules_import_each_other():
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        graph[module] = {t for t in _imports(path) if t in MODULES and t != module}
    # Tarjan's strongly connected components, iteratively
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        loops.append(sorted(component))
    assert loops == []


def test_the_diagram_reader_sees_an_upward_edge():
    # the check can fail: core importing the cli would be an edge up the whole diagram
    height = layers()
    assert height["cli"] > height["card"] > height["graders"] > height["core"] == 0
