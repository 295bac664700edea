"""Turning a spec into a grader: one loader for names, YAML files, dicts and user functions.

A spec is one of:

* a registered name: ``"exact"``, ``"math"``, ... (options as keyword arguments);
* a dict ``{"type": NAME, **options}``; compositions nest specs (``gate``, ``weighted``,
  ``all_of``);
* a YAML or JSON file holding such a dict (relative paths inside resolve against the file);
* ``"path/to/file.py:function"``, a user's own reward function in TRL or verl signature;
* a grader object (returned as is) or a Python callable (wrapped as a reward function).

Built-in graders are registered as ``"module:attribute"`` strings and imported only when asked
for, so the core imports nothing above it. Third-party graders register through the
``truegrade.graders`` entry-point group or ``register_grader``. Every grader the loader builds
carries ``spec``: a plain dict that rebuilds it (in a worker, on a Ray node, from a results log).
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from truegrade.core._compose import AllOf, Ensemble, Gate, WeightedSum
from truegrade.core._errors import DataError, SpecError
from truegrade.core._files import read_config
from truegrade.core._grader import GRADER_FAMILIES, Grader

__all__ = [
    "GraderFactory",
    "describe_grader",
    "grader_names",
    "load_grader",
    "read_config_file",
    "register_grader",
]

GraderFactory = Callable[[dict[str, Any], "Path | None"], Grader]
"""Builds a grader from its options and the directory relative paths resolve against."""

_BUILTIN: dict[str, str] = {
    "exact": "truegrade.graders.match:ExactGrader.from_options",
    "regex": "truegrade.graders.match:RegexGrader.from_options",
    "numeric": "truegrade.graders.match:NumericGrader.from_options",
    "choice": "truegrade.graders.match:ChoiceGrader.from_options",
    "json": "truegrade.graders.match:JsonGrader.from_options",
    "python": "truegrade.graders.python:PythonGrader.from_options",
    "math": "truegrade.graders.math:MathGrader.from_options",
    "code": "truegrade.graders.code:CodeGrader.from_options",
    "repo": "truegrade.graders.repo:RepoGrader.from_options",
    "judge": "truegrade.graders.judge:JudgeGrader.from_options",
    "reward_model": "truegrade.graders.reward_model:RewardModelGrader.from_options",
    "rubric": "truegrade.graders.rubric:RubricGrader.from_options",
    "instructions": "truegrade.graders.instructions:InstructionsGrader.from_options",
}
_COMPOSITIONS = ("gate", "weighted", "all_of", "ensemble")
_registered: dict[str, GraderFactory | str] = {}
_families: dict[str, str] = {}


def register_grader(name: str, factory: GraderFactory | str, *, family: str | None = None) -> None:
    """Make ``name`` loadable by ``load_grader``.

    Args:
        name: The spec name (``type`` in YAML).
        factory: A callable ``(options, base_dir) -> Grader``, or ``"module:attr"`` to import
            lazily.
        family: What its graders judge (``GRADER_FAMILIES``), when the grader does not say it
            itself (``BaseGrader.family``): the attacks and audit checks that fit follow from it.

    Raises:
        SpecError: ``name`` is a built-in composition, or ``family`` is not a known family.
    """
    if name in _COMPOSITIONS:
        raise SpecError(f"{name!r} is a built-in composition and cannot be re-registered")
    if family is not None and family not in GRADER_FAMILIES:
        raise SpecError(
            f"grader {name!r}: family {family!r} is not one of {', '.join(GRADER_FAMILIES)}"
        )
    _registered[name] = factory
    if family is not None:
        _families[name] = family
    else:
        _families.pop(name, None)


def grader_names() -> list[str]:
    """Every name ``load_grader`` accepts, sorted."""
    plugins = {ep.name for ep in entry_points(group="truegrade.graders")}
    return sorted({*_BUILTIN, *_registered, *_COMPOSITIONS, *plugins})


_COMPOSITION_SUMMARIES = {
    "gate": "A check that zeroes the score where it fails, then the grader behind it.",
    "weighted": "A weighted sum of graders, each part kept in the subscores.",
    "all_of": "Passes when every part passes.",
    "ensemble": "Members combined by mean, min or uncertainty, with their disagreement.",
}


def describe_grader(name: str) -> str:
    """One line on what the grader called ``name`` is: the first line of its docstring.

    Raises:
        SpecError: no grader has that name.
    """
    if name in _COMPOSITION_SUMMARIES:
        return _COMPOSITION_SUMMARIES[name]
    factory = _resolve(name)
    owner = getattr(factory, "__self__", None)  # Class.from_options: the class says what it is
    doc = (owner.__doc__ if isinstance(owner, type) else None) or factory.__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _resolve(name: str) -> GraderFactory:
    target: GraderFactory | str | None = _registered.get(name) or _BUILTIN.get(name)
    if target is None:
        for ep in entry_points(group="truegrade.graders"):
            if ep.name == name:
                target = ep.value
                break
    if target is None:
        close = difflib.get_close_matches(name, grader_names(), n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise SpecError(
            f"unknown grader {name!r}.{hint} Known graders: {', '.join(grader_names())}. "
            "A file of your own is given as 'path/to/file.py:function' or a YAML path."
        )
    if isinstance(target, str):
        module_name, _, attr = target.partition(":")
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError as exc:
            raise SpecError(f"grader {name!r} could not be imported: {exc}") from exc
        for part in attr.split("."):
            obj = getattr(obj, part)
        target = obj
    assert callable(target)
    return target


def _is_python_ref(text: str) -> bool:
    path, sep, func = text.rpartition(":")
    return bool(sep) and path.endswith(".py") and func.isidentifier()


def read_config_file(path: str | Path, what: str = "grader spec") -> Any:
    """The data in a YAML or JSON file (JSON by the ``.json`` suffix), or a ``SpecError`` whose one
    line names the file, ``what`` it was meant to be and why it cannot be read."""
    try:
        return read_config(path, what)
    except DataError as exc:
        raise SpecError(str(exc)) from None


def _read_spec_file(path: Path) -> dict[str, Any]:
    data = read_config_file(path)
    if isinstance(data, str):
        data = {"type": data}
    if not isinstance(data, dict):
        raise SpecError(f"grader spec {path} must hold a mapping with a 'type' key")
    return data


def load_grader(spec: Any, /, **options: Any) -> Grader:
    """Build a grader from a spec (see the module docstring for the forms a spec takes).

    Args:
        spec: A name, a dict, a YAML/JSON path, ``"file.py:function"``, a grader or a callable.
        **options: Options of the named grader (only with a name or a ``file.py:function``).

    Raises:
        SpecError: the spec names no known grader, has an unknown or invalid option, or a user
            function fits no supported signature. The message says which and how to fix it.

    Examples:
        >>> load_grader("exact", normalize=["strip", "lower"]).name
        'exact'
    """
    return _build(spec, options, base_dir=None, where="spec")


def _build(spec: Any, options: Mapping[str, Any], *, base_dir: Path | None, where: str) -> Grader:
    if isinstance(spec, Grader) and not isinstance(spec, type):
        if options:
            raise SpecError("options can only be given with a grader name, not a grader object")
        return spec
    if callable(spec) and not isinstance(spec, (str, Path, type)):
        return _build(
            {"type": "python", "function": spec, **options}, {}, base_dir=base_dir, where=where
        )
    if isinstance(spec, Path):
        spec = str(spec)
    if isinstance(spec, str):
        text = spec.strip()
        if _is_python_ref(text):
            path, _, func = text.rpartition(":")
            return _build(
                {"type": "python", "path": path, "function": func, **options},
                {},
                base_dir=base_dir,
                where=where,
            )
        candidate = Path(text) if base_dir is None else base_dir / text
        if candidate.suffix in {".yaml", ".yml", ".json"}:
            data = _read_spec_file(candidate)
            return _build(
                {**data, **options}, {}, base_dir=candidate.resolve().parent, where=str(candidate)
            )
        return _build({"type": text, **options}, {}, base_dir=base_dir, where=where)
    if not isinstance(spec, Mapping):
        raise SpecError(
            f"a grader spec is a name, a path, a mapping or a grader; got {type(spec).__name__}"
        )
    data = dict(spec)
    data.update(options)
    kind = data.pop("type", None)
    if not isinstance(kind, str):
        raise SpecError(f"{where}: the mapping needs a 'type' naming the grader")
    if _is_python_ref(kind):
        path, _, func = kind.rpartition(":")
        data = {"path": path, "function": func, **data}
        kind = "python"
    if kind in _COMPOSITIONS:
        grader = _build_composition(kind, dict(data), base_dir=base_dir, where=where)
    else:
        try:
            factory = _resolve(kind)
        except SpecError as exc:
            if where == "spec":
                raise
            raise SpecError(f"{where}: {exc}") from None
        try:
            grader = factory(data, base_dir)
        except SpecError as exc:
            raise SpecError(f"{where}: {kind}: {exc}") from None
    _attach_spec(grader, {"type": kind, **_plain(_absolute_paths(data, base_dir))})
    if kind in _families and getattr(grader, "family", None) is None:
        with contextlib.suppress(AttributeError):
            grader.family = _families[kind]  # type: ignore[attr-defined]
    return grader


_PATH_OPTIONS = ("path", "schema", "rubric", "reference_set")


def _absolute_paths(data: dict[str, Any], base_dir: Path | None) -> dict[str, Any]:
    """Options naming files, made absolute so a recorded spec rebuilds from anywhere."""
    if base_dir is None:
        return data
    out = dict(data)
    for key in _PATH_OPTIONS:
        value = out.get(key)
        if isinstance(value, str) and not Path(value).is_absolute() and (base_dir / value).exists():
            out[key] = str((base_dir / value).resolve())
    return out


def _attach_spec(grader: Grader, spec: dict[str, Any]) -> None:
    if getattr(grader, "spec", None) is None:
        with contextlib.suppress(AttributeError):
            grader.spec = spec  # type: ignore[attr-defined]


def _plain(data: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-able view of options (objects such as functions are kept by their repr)."""

    def conv(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {str(k): conv(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [conv(v) for v in value]
        if isinstance(value, (str, int, float, bool)) or value is None:
            return value
        spec = getattr(value, "spec", None)
        return spec if isinstance(spec, dict) else repr(value)

    return {str(k): conv(v) for k, v in data.items()}


def _part(value: Any, *, base_dir: Path | None, where: str) -> Grader:
    return _build(value, {}, base_dir=base_dir, where=where)


def _build_composition(
    kind: str, data: dict[str, Any], *, base_dir: Path | None, where: str
) -> Grader:
    name = data.pop("name", None)
    if kind == "gate":
        unknown = set(data) - {"check", "then"}
        if unknown or "check" not in data or "then" not in data:
            raise SpecError(
                f"{where}: a gate takes exactly 'check' and 'then' (and 'name')"
                + (f"; unknown: {sorted(unknown)}" if unknown else "")
            )
        return Gate(
            _part(data["check"], base_dir=base_dir, where=f"{where}.check"),
            _part(data["then"], base_dir=base_dir, where=f"{where}.then"),
            name=name,
        )
    if kind == "ensemble":
        members = data.pop("members", None)
        if not isinstance(members, list) or len(members) < 2:
            raise SpecError(f"{where}: an ensemble needs a list 'members' of two or more specs")
        combine = data.pop("combine", "mean")
        lam = data.pop("lambda", 1.0)
        threshold = data.pop("pass_threshold", None)
        if data:
            raise SpecError(
                f"{where}: ensemble takes members, combine, lambda, pass_threshold, "
                f"name; unknown: {sorted(data)}"
            )
        return Ensemble(
            [
                _part(m, base_dir=base_dir, where=f"{where}.members[{i}]")
                for i, m in enumerate(members)
            ],
            combine=combine,
            lam=float(lam),
            pass_threshold=threshold,
            name=name,
        )
    parts = data.pop("parts", None)
    if not isinstance(parts, list) or not parts:
        raise SpecError(f"{where}: {kind} needs a non-empty list 'parts'")
    if kind == "all_of":
        if data:
            raise SpecError(
                f"{where}: all_of takes only 'parts' and 'name'; unknown: {sorted(data)}"
            )
        return AllOf(
            [_part(p, base_dir=base_dir, where=f"{where}.parts[{i}]") for i, p in enumerate(parts)],
            name=name,
        )
    normalize = data.pop("normalize", True)
    threshold = data.pop("pass_threshold", None)
    if data:
        raise SpecError(
            f"{where}: weighted takes parts, normalize, pass_threshold, name; "
            f"unknown: {sorted(data)}"
        )
    weighted: list[tuple[Grader, float]] = []
    for i, entry in enumerate(parts):
        at = f"{where}.parts[{i}]"
        if not isinstance(entry, Mapping) or "grader" not in entry:
            raise SpecError(f"{at}: each part is a mapping with 'grader' and 'weight'")
        entry = dict(entry)
        grader_spec = entry.pop("grader")
        weight = entry.pop("weight", 1.0)
        part_label = entry.pop("name", None)
        if entry:
            raise SpecError(f"{at}: unknown keys {sorted(entry)}")
        if part_label is not None:
            if (
                isinstance(grader_spec, str)
                and not _is_python_ref(grader_spec)
                and not grader_spec.endswith((".yaml", ".yml", ".json"))
            ):
                grader_spec = {"type": grader_spec}
            if isinstance(grader_spec, Mapping):
                grader_spec = {**grader_spec, "name": part_label}
        if not isinstance(weight, (int, float)) or isinstance(weight, bool):
            raise SpecError(f"{at}: weight must be a number, got {weight!r}")
        weighted.append((_part(grader_spec, base_dir=base_dir, where=at), float(weight)))
    if not isinstance(normalize, bool):
        raise SpecError(f"{where}: normalize must be true or false")
    return WeightedSum(weighted, normalize=normalize, pass_threshold=threshold, name=name)
