"""Telling a TRL reward function from a verl ``compute_score``, without running the user's code.

The parameters are read from the file's syntax tree, so loading a spec never imports the user's
module in the grader's process (it may import a GPU stack, or simply be slow). Only when the
target is not a plain ``def`` or class (an object built at import time, say) is the module
imported, and then in a worker.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from truegrade.core import DataError, SpecError, read_text

__all__ = ["CallShape", "Signature", "classify", "shape_from_callable", "shape_from_source"]

Signature = Literal["trl", "verl"]

_TRL_HINT = "a TRL reward function takes 'completions' (and usually 'prompts' and **kwargs)"
_VERL_HINT = "a verl compute_score takes (data_source, solution_str, ground_truth, extra_info=None)"


@dataclass(frozen=True)
class CallShape:
    """What we know about a function's parameters.

    Attributes:
        params: Named parameters, in order (``self`` removed).
        var_keyword: It accepts ``**kwargs``.
        is_async: ``async def`` (its coroutine is awaited in the worker).
    """

    params: tuple[str, ...]
    var_keyword: bool
    is_async: bool = False


def _shape_of_args(args: ast.arguments, *, drop_self: bool, is_async: bool) -> CallShape:
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    if drop_self and names:
        names = names[1:]
    return CallShape(tuple(names), args.kwarg is not None, is_async)


def shape_from_source(path: Path, function: str) -> CallShape | None:
    """The call shape of ``function`` in the file at ``path``; None when not statically clear.

    Raises:
        SpecError: the file is missing or is not valid Python.
    """
    try:
        source = read_text(path, "reward function file", empty_ok=True)
    except DataError as exc:
        raise SpecError(str(exc)) from None
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise SpecError(f"{path}:{exc.lineno}: not valid Python: {exc.msg}") from None
    found = False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            return _shape_of_args(
                node.args, drop_self=False, is_async=isinstance(node, ast.AsyncFunctionDef)
            )
        if isinstance(node, ast.ClassDef) and node.name == function:
            raise SpecError(
                f"{path}:{function} is a class; point at an instance or a function "
                "(TRL and verl call a function, not a constructor)"
            )
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.ImportFrom, ast.Import)):
            targets = _bound_names(node)
            if function in targets:
                found = True
    if not found:
        raise SpecError(f"{path} defines no top-level function named {function!r}")
    return None


def _bound_names(node: ast.stmt) -> set[str]:
    names: set[str] = set()
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                names.add(target.id)
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        names.add(node.target.id)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            names.add(alias.asname or alias.name.split(".")[0])
    return names


def shape_from_callable(fn: Callable[..., Any]) -> CallShape:
    """The call shape of a live callable (a function, or an instance with ``__call__``)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"cannot read the signature of {fn!r}: {exc}") from None
    params = tuple(
        p.name
        for p in sig.parameters.values()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    )
    var_kw = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    target = fn if inspect.isfunction(fn) else type(fn).__call__
    is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(target)
    return CallShape(params, var_kw, is_async)


def classify(shape: CallShape, *, override: str, where: str) -> Signature:
    """Decide TRL or verl from the parameters, or check an explicit override.

    Raises:
        SpecError: neither or both signatures fit; the message says what each one looks like.
    """
    names = set(shape.params)
    is_trl = "completions" in names
    is_verl = "solution_str" in names
    if override in ("trl", "verl"):
        if override == "trl" and len(shape.params) < 1 and not shape.var_keyword:
            raise SpecError(f"{where} takes no arguments; {_TRL_HINT}")
        if override == "verl" and len(shape.params) < 3 and not is_verl:
            raise SpecError(f"{where} takes {len(shape.params)} arguments; {_VERL_HINT}")
        return "trl" if override == "trl" else "verl"
    if is_trl and not is_verl:
        return "trl"
    if is_verl and not is_trl:
        return "verl"
    shown = ", ".join(shape.params) + (", **kwargs" if shape.var_keyword else "")
    why = "fits both" if is_trl and is_verl else "fits neither"
    raise SpecError(
        f"{where}({shown}) {why} reward-function signature: {_TRL_HINT}; {_VERL_HINT}. "
        "Rename the parameters, or say which one with signature: trl | verl."
    )
