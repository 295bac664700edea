"""The docs site's pages: the repository's own Markdown where it lies, and an API page per package.

``mkdocs.yml`` names this file as a hook. The pages are read from the repository root with the
paths they have in a clone (``README.md``, ``docs/code.md``, ``benchmarks/README.md``), so every
relative link between them works on the site as it does on GitHub. Each public package (found on
disk, as ``tests/test_public_api.py`` finds them) gets an API page under ``api/``, rendered from
its docstrings by mkdocstrings and showing what its ``__all__`` exports.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
#: The Markdown pages outside ``docs/`` that the site shows.
ROOT_PAGES = ("README.md", "CONTRIBUTING.md", "CHANGELOG.md", "benchmarks/README.md")
#: Packages whose public face is not Python: the command line is documented on the pages.
NOT_API = {"truegrade.cli"}


def public_packages() -> list[str]:
    """Every package with an ``__init__.py`` and no leading underscore in its path."""
    found = (
        ".".join(init.parent.relative_to(SRC).parts)
        for init in (SRC / "truegrade").rglob("__init__.py")
        if not any(part.startswith("_") for part in init.parent.relative_to(SRC).parts)
    )
    return sorted(name for name in found if name not in NOT_API)


def exported(package: str) -> list[str]:
    """The names a package's ``__init__.py`` lists in ``__all__``, read without importing it."""
    init = SRC.joinpath(*package.split("."), "__init__.py")
    for node in ast.parse(init.read_text()).body:
        target = getattr(node, "target", None) or next(iter(getattr(node, "targets", [])), None)
        if isinstance(target, ast.Name) and target.id == "__all__":
            value = getattr(node, "value", None)
            return list(ast.literal_eval(value)) if value is not None else []
    return []


def public_modules(package: str) -> list[str]:
    """A package's modules without a leading underscore (``truegrade.integrations.trl``)."""
    folder = SRC.joinpath(*package.split("."))
    return [f"{package}.{path.stem}" for path in sorted(folder.glob("*.py")) if path.stem[0] != "_"]


def api_page(package: str) -> str:
    """The package's docstring and its ``__all__``; then each public module's, a level down."""
    page = f"# `{package}`\n\n::: {package}\n"
    if not exported(package):
        page += "    options:\n      members: false\n"
    for module in public_modules(package):
        page += f"\n## `{module}`\n\n::: {module}\n    options:\n      heading_level: 3\n"
    return page


def on_config(config: Any) -> Any:
    section = [{package: f"api/{package}.md"} for package in public_packages()]
    config["nav"] = [*config["nav"], {"API reference": section}]
    return config


def on_files(files: Files, config: Any) -> Files:
    pages = [*ROOT_PAGES, *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
    out = Files(
        [
            File(
                page,
                src_dir=str(ROOT),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
            for page in pages
        ]
    )
    for package in public_packages():
        out.append(File.generated(config, f"api/{package}.md", content=api_page(package)))
    # the theme's own files (its stylesheets, scripts, fonts) and the site's stylesheet, as
    # mkdocs found them: without them the pages come out unstyled and the search never answers
    for found in files:
        if not found.is_documentation_page() and not found.src_uri.startswith("images/"):
            out.append(found)
    # the images the pages show, where their relative links from docs/ lead
    for image in sorted((ROOT / "docs" / "images").glob("*")):
        out.append(
            File(
                str(image.relative_to(ROOT)),
                src_dir=str(ROOT),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
        )
    return out
