"""``python``: bring your own reward function (TRL or verl signature) and get every capability.

The user's function runs in the engine's killable workers by default: a reward function that
hangs, crashes or leaks memory on one completion costs that completion a ``timeout`` or
``crashed`` grade, not the run. What it returns is checked: ``None`` (TRL's "not applicable") is
reported as not gradable, NaN and infinities are refused, a list of the wrong length is an error
for every sample of the call, and a verl dict must carry ``"score"``.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import inspect
import math
import numbers
import pickle
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, model_validator

from truegrade.core import Flag, Sample, SpecError
from truegrade.exec import default_engine
from truegrade.graders._kernel import GraderOptions, Kernel, KernelGrader, error_verdict
from truegrade.graders.python._signature import (
    CallShape,
    Signature,
    classify,
    shape_from_callable,
    shape_from_source,
)

__all__ = ["PythonGrader", "PythonOptions"]

_REFERENCE_ALIASES = ("answer", "solution", "ground_truth", "reference")
_modules: dict[str, Any] = {}


def load_function(path: str, function: str) -> Callable[..., Any]:
    """Import ``function`` from the file at ``path`` (once per process) and return it."""
    resolved = str(Path(path).resolve())
    module = _modules.get(resolved)
    if module is None:
        name = "truegrade_user_" + hashlib.blake2b(resolved.encode(), digest_size=6).hexdigest()
        spec = importlib.util.spec_from_file_location(name, resolved)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {resolved}")
        module = importlib.util.module_from_spec(spec)
        folder = str(Path(resolved).parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)  # so the user's file can import its neighbours
        sys.modules[name] = module
        spec.loader.exec_module(module)
        _modules[resolved] = module
    fn = getattr(module, function, None)
    if fn is None or not callable(fn):
        raise AttributeError(f"{path} has no callable named {function!r}")
    return fn  # type: ignore[no-any-return]


@dataclass
class _ShapeProbe:
    """Run in a worker when a function's parameters cannot be read from source."""

    path: str
    function: str

    def __call__(self, _: Any) -> tuple[tuple[str, ...], bool, bool]:
        shape = shape_from_callable(load_function(self.path, self.function))
        return shape.params, shape.var_keyword, shape.is_async


def _finite(value: Any) -> float | str:
    """The value as a finite float, or a description of why it is not one."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        return number if math.isfinite(number) else f"returned {number!r}"
    return f"returned {type(value).__name__} {str(value)[:60]!r}, not a number"


@dataclass
class _PythonKernel:
    path: str | None
    function_name: str
    signature: Signature
    shape: CallShape
    pass_threshold: float | None
    fn: Callable[..., Any] | None = None
    _loaded: Callable[..., Any] | None = field(default=None, init=False, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_loaded"] = None
        return state

    def setup(self) -> None:
        self._function()

    def _function(self) -> Callable[..., Any]:
        if self._loaded is None:
            if self.fn is not None:
                self._loaded = self.fn
            else:
                assert self.path is not None
                self._loaded = load_function(self.path, self.function_name)
        return self._loaded

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        result = self._function()(*args, **kwargs)
        if inspect.iscoroutine(result):
            result = asyncio.run(result)
        return result

    def __call__(self, payload: dict[str, Any]) -> dict[str, Any]:
        if self.signature == "trl":
            raw = self._call_trl(payload)
            if not isinstance(raw, (list, tuple)) and not hasattr(raw, "__len__"):
                return error_verdict(
                    f"returned {type(raw).__name__}, not a list of rewards", Flag.INVALID_SCORE
                )
            rewards = list(raw)
            if len(rewards) != 1:
                return error_verdict(
                    f"returned {len(rewards)} rewards for 1 completion", Flag.INVALID_SCORE
                )
            return self._verdict(rewards[0], {})
        raw = self._call_verl(payload)
        if isinstance(raw, dict):
            if "score" not in raw:
                return error_verdict(
                    f"returned a dict without 'score' (keys: {sorted(raw)[:8]})", Flag.INVALID_SCORE
                )
            extras = {k: v for k, v in raw.items() if k != "score"}
            return self._verdict(raw["score"], extras)
        return self._verdict(raw, {})

    def _call_trl(self, p: dict[str, Any]) -> Any:
        columns: dict[str, Any] = dict(p["metadata"])
        columns["reference"] = p["reference"]
        for alias in _REFERENCE_ALIASES:
            if alias in self.shape.params and alias not in columns:
                columns[alias] = p["reference"]
        kwargs = {k: [v] for k, v in columns.items()}
        names = set(self.shape.params)
        if "prompts" in names or "completions" in names or self.shape.var_keyword:
            kwargs["prompts"] = [p["prompt"]]
            kwargs["completions"] = [p["response"]]
            if not self.shape.var_keyword:
                kwargs = {k: v for k, v in kwargs.items() if k in names}
            return self._call(**kwargs)
        first = self.shape.params[:2]  # an override on oddly named parameters: positional
        args = [[p["prompt"]], [p["response"]]][-len(first) :] if first else []
        return self._call(*args)

    def _call_verl(self, p: dict[str, Any]) -> Any:
        metadata = p["metadata"]
        values = {
            "data_source": metadata.get("data_source", "truegrade"),
            "solution_str": p["response_text"],
            "ground_truth": p["reference"],
            "extra_info": metadata.get("extra_info", metadata or None),
        }
        names = self.shape.params
        if "solution_str" in names:
            kwargs = {k: v for k, v in values.items() if k in names or self.shape.var_keyword}
            return self._call(**kwargs)
        ordered = list(values.values())[: max(3, len(names))]
        return self._call(*ordered)

    def _verdict(self, value: Any, extras: dict[str, Any]) -> dict[str, Any]:
        if value is None:
            return error_verdict(
                "the reward function returned None (not applicable to this sample)",
                Flag.NOT_GRADABLE,
            )
        score = _finite(value)
        if isinstance(score, str):
            return error_verdict(f"the reward function {score}", Flag.INVALID_SCORE)
        subscores = {}
        for key, extra in extras.items():
            number = _finite(extra)
            if isinstance(number, float):
                subscores[key] = number
        passed: bool | None = None
        if self.pass_threshold is not None:
            passed = score >= self.pass_threshold
        elif "acc" in extras and isinstance(_finite(extras["acc"]), float):
            passed = bool(extras["acc"])
        return {
            "score": score,
            "passed": passed,
            "subscores": subscores,
            "explanation": f"reward function returned {score:g}",
        }


class PythonOptions(GraderOptions):
    """Options of ``python``.

    Attributes:
        path: The ``.py`` file (relative to the spec file when given in YAML).
        function: The function's name in that file, or a callable (Python API only).
        signature: ``auto`` (decided from the parameter names), ``trl`` or ``verl``.
        pass_threshold: ``passed = score >= pass_threshold``; without it, ``passed`` comes from a
            verl dict's ``acc`` or is None.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    path: str | None = None
    function: Any = None
    signature: Literal["auto", "trl", "verl"] = "auto"
    pass_threshold: float | None = None

    @model_validator(mode="after")
    def _target(self) -> PythonOptions:
        if self.function is None:
            raise ValueError("'function' is required (the name of the reward function)")
        if self.path is None and isinstance(self.function, str):
            raise ValueError("give 'path' (the .py file) with a function name")
        if self.path is not None and not isinstance(self.function, str):
            raise ValueError("with 'path', 'function' is the function's name")
        return self


def _picklable_by_reference(fn: Callable[..., Any]) -> bool:
    if getattr(fn, "__module__", None) == "__main__":
        return False
    try:
        pickle.loads(pickle.dumps(fn))  # trusted: the user's own reward function
    except Exception:
        return False
    return True


class PythonGrader(KernelGrader):
    """A user's reward function (TRL or verl signature) as a full grader.

    Examples:
        >>> g = PythonGrader.from_options({"path": "rewards.py", "function": "f"})  # doctest: +SKIP
    """

    kind = "python"
    Options = PythonOptions
    default_execution = "process"
    default_timeout_s = 30.0
    options: PythonOptions

    def __init__(self, options: GraderOptions | None = None, **kwargs: Any) -> None:
        super().__init__(options, **kwargs)
        o = self.options
        self.requires_reference = False
        self.fn: Callable[..., Any] | None = None
        if o.path is not None:
            path = Path(o.path)
            if self.base_dir is not None and not path.is_absolute():
                path = self.base_dir / path
            if not path.is_file():
                raise SpecError(f"reward function file {path} does not exist")
            self.path: str | None = str(path.resolve())
            name = str(o.function)
            shape = shape_from_source(path, name) or self._probe_shape(name)
            where = f"{path}:{name}"
        else:
            if not callable(o.function):
                raise SpecError(f"'function' must be callable, got {type(o.function).__name__}")
            self.path = None
            self.fn = o.function
            name = getattr(o.function, "__name__", type(o.function).__name__)
            shape = shape_from_callable(o.function)
            where = name
            if o.execution is None and not _picklable_by_reference(o.function):
                self.execution = "inline"  # it cannot be sent to a worker; run it here
        if o.name is None:
            self.name = name
        self.function_name = name
        self.signature = classify(shape, override=o.signature, where=where)
        self.shape = shape

    def _probe_shape(self, name: str) -> CallShape:
        assert self.path is not None
        engine = self.engine or default_engine()
        [outcome] = engine.map(_ShapeProbe(self.path, name), [None], timeout_s=self.timeout_s)
        if not outcome.ok:
            raise SpecError(f"{self.path}:{name} could not be imported: {outcome.message}")
        params, var_kw, is_async = outcome.value
        return CallShape(tuple(params), bool(var_kw), bool(is_async))

    def kernel(self) -> Kernel:
        return _PythonKernel(
            self.path,
            self.function_name,
            self.signature,
            self.shape,
            self.options.pass_threshold,
            fn=self.fn,
        )

    def payload(self, sample: Sample) -> Any:
        return {
            "prompt": sample.prompt,
            "response": sample.response,
            "response_text": sample.response_text,
            "reference": sample.reference,
            "metadata": sample.metadata,
        }
