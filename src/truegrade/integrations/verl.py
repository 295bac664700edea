"""verl adapter: truegrade graders as verl's ``compute_score``, and a checked launch of its trainer.

verl 0.9's trainer scores through its reward loop: ``RewardLoopWorker`` actors load the function
named by ``reward.custom_reward_function.path`` / ``.name`` and call it once per sample through a
reward manager (``reward.reward_manager.name``: ``naive``, ``dapo``, ``gdpo``, ``rate_limited``,
``remote``; there is no ``batch`` manager there). Point ``path`` at this file (its path is printed
by ``python -c "import truegrade.integrations.verl as v; print(v.__file__)"``) with
``name: compute_score``. ``compute_score_batch`` serves verl's legacy ``BatchRewardManager``
(``verl.workers.reward_manager``), which still exists for custom loops.

The grader comes from ``grader`` in ``reward.custom_reward_function.reward_kwargs``, else the
``TRUEGRADE_GRADER`` environment variable, else ``math``. verl calls reward functions from
threads: the grader is built once per process under a lock, and its deadlines are enforced by
killing worker processes, never by signals, so nothing here breaks (or silently returns 0) off the
main thread.

A row's task travels as verl keeps it: ``ground_truth`` is the reference (a gold answer, a code
test spec such as ``{"language": "cpp", "stdio": [...]}`` or APPS's ``{"inputs", "outputs"}``, or
IFEval's ``{"instruction_id_list", "kwargs"}``; an object or its JSON text), and the keys of
``extra_info`` are the row's columns, as in a row file (IFEval's ``instruction_id_list`` and
``kwargs``, APPS's ``input_output``, ``language``) for rows whose ``ground_truth`` is empty;
``extra_info["prompt"]`` (else ``question``) is the prompt, which the instructions defences read.

Every result is a dict with the same keys, which verl logs as metrics: ``score``, ``acc``, and
0/1 indicators ``grader_error``, ``hedged``, ``no_answer``, ``timeout``; a repository task's
(``repo``) adds its shares of passing ``fail_to_pass`` and ``pass_to_pass`` tests.

verl 0.9's ``main_ppo`` keeps the pre-0.9 keys (``custom_reward_function.*``,
``reward_model.reward_manager``, ...) in its config but no longer reads them: a run configured
with them scores every sample with verl's built-in function for its ``data_source`` and gets 0
wherever that function does not apply, without an error. ``check_config`` refuses such a
configuration, and ``python -m truegrade.integrations.verl OVERRIDES...`` runs verl's trainer
only after that check (same Hydra overrides as ``python -m verl.trainer.main_ppo``).
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from truegrade.core import Flag, Grade, Grader, Sample, grade_rows, load_grader
from truegrade.integrations._plain import plain

__all__ = ["check_config", "compute_score", "compute_score_batch", "grader_for", "main"]

_lock = threading.Lock()
_graders: dict[str, Grader] = {}

# The pre-0.9 homes of the reward settings, and where verl 0.9 reads each of them (the mapping of
# verl's own ``migrate_legacy_reward_impl``, which only its fully-async trainer applies).
_LEGACY_ROOTS = ("custom_reward_function", "reward_model", "sandbox_fusion")
_MOVED = {
    "reward_model.reward_manager": "reward.reward_manager.name",
    "reward_model.reward_loop_source": "reward.reward_manager.source",
    "reward_model.reward_loop_module_path": "reward.reward_manager.module.path",
    "reward_model.reward_loop_class_name": "reward.reward_manager.name",
    "reward_model.num_workers": "reward.num_workers",
    "reward_model.reward_kwargs": "reward.reward_kwargs",
    "reward_model.model.path": "reward.reward_model.model_path",
}
# The reward loop's managers call the reward function once per sample.
_PER_SAMPLE_ARGS = ("solution_str", "ground_truth", "data_source")
_BATCH_ARGS = ("solution_strs", "ground_truths", "data_sources")


def grader_for(spec: str | None = None) -> Grader:
    """The process-wide grader for ``spec`` (built once, shared by threads)."""
    key = spec or os.environ.get("TRUEGRADE_GRADER") or "math"
    with _lock:
        grader = _graders.get(key)
        if grader is None:
            grader = _graders[key] = load_grader(key)
        return grader


#: Subscores every result of a grader family carries (verl needs the same keys in every
#: result of a batch): a repository task's shares of its FAIL_TO_PASS and PASS_TO_PASS tests.
_FAMILY_SUBSCORES = {"repo": ("fail_to_pass", "pass_to_pass")}


def _result(grade: Grade, grader: Grader) -> dict[str, Any]:
    result = {
        "score": grade.score,
        "acc": bool(grade.passed),
        "grader_error": float(grade.error is not None),
        "hedged": float(Flag.HEDGED in grade.flags),
        "no_answer": float(Flag.NO_ANSWER in grade.flags),
        "timeout": float(Flag.TIMEOUT in grade.flags),
    }
    for name in _FAMILY_SUBSCORES.get(str(getattr(grader, "family", "")), ()):
        result[name] = float(grade.subscores.get(name, 0.0))
    return result


def _sample(i: int, data_source: Any, solution: str, truth: Any, extra: Any) -> Sample:
    """One sample, read as every truegrade command reads a row: ``ground_truth`` is the
    reference ("" or None: none), and the keys of an ``extra_info`` mapping are the row's
    columns (IFEval's ``instruction_id_list`` and ``kwargs``, APPS's ``input_output``, a
    ``language``, a published dataset's columns, read by its preset); its ``prompt`` (else
    ``question``) is the prompt, which the instructions defences read.

    Raises:
        DataError: the row cannot be read (the caller makes it an error grade).
    """
    extra = plain(extra)
    truth = plain(truth)
    row: dict[str, Any] = {}
    if isinstance(extra, dict):
        row.update({str(k): v for k, v in extra.items() if k not in ("id", "metadata")})
        if not _is_prompt(row.get("prompt")):
            row.pop("prompt", None)
    if truth is not None and not (isinstance(truth, str) and not truth.strip()):
        row["reference"] = truth
    row.update({"id": i, "response": solution})
    row.pop("completion", None)
    sample = Sample.from_row(row)
    sample.metadata["data_source"] = data_source
    if extra is not None:
        sample.metadata["extra_info"] = extra
    return sample


def _grades(
    grader: Grader,
    sources: Sequence[Any],
    solutions: Sequence[str],
    truths: Sequence[Any],
    extras: Sequence[Any],
) -> list[Grade]:
    """The grades of a batch, in order; a row that cannot be read is an error grade of its own."""
    return grade_rows(
        grader,
        solutions,
        lambda solution, i: _sample(i, sources[i], solution, truths[i], extras[i]),
    )


def _is_prompt(value: Any) -> bool:
    """Text, or chat messages."""
    return isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(m, dict) for m in value)
    )


def compute_score(
    data_source: Any = None,
    solution_str: str = "",
    ground_truth: Any = None,
    extra_info: Any = None,
    grader: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's per-sample reward (the reward loop's managers): grade one solution.

    Raises:
        TypeError: when called with the batch manager's arguments (``solution_strs``...): the
            configuration names the wrong entry point, and grading nothing would score 0.
    """
    if any(name in kwargs for name in _BATCH_ARGS):
        raise TypeError(
            "compute_score was called with a batch (solution_strs, ...): verl's BatchRewardManager "
            "needs custom_reward_function.name: compute_score_batch"
        )
    chosen = grader_for(grader)
    [grade] = _grades(chosen, [data_source], [solution_str], [ground_truth], [extra_info])
    return _result(grade, chosen)


def compute_score_batch(
    data_sources: Sequence[Any] | None = None,
    solution_strs: Sequence[str] = (),
    ground_truths: Sequence[Any] = (),
    extra_infos: Sequence[Any] | None = None,
    grader: str | None = None,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """verl's legacy ``BatchRewardManager`` entry point: one dict per solution, in order.

    Raises:
        TypeError: when called with one sample (``solution_str``...), as verl 0.9's reward loop
            calls every reward function: it needs ``name: compute_score``.
        ValueError: when the lists differ in length.
    """
    if any(name in kwargs for name in _PER_SAMPLE_ARGS):
        raise TypeError(
            "compute_score_batch was called with one sample (solution_str, ...), as verl 0.9's "
            "reward loop calls its reward function: set "
            "reward.custom_reward_function.name=compute_score"
        )
    n = len(solution_strs)
    if len(ground_truths) != n:
        raise ValueError(f"{len(ground_truths)} ground truths for {n} solutions")
    sources = list(data_sources) if data_sources is not None else [None] * n
    extras = list(extra_infos) if extra_infos is not None else [None] * n
    chosen = grader_for(grader)
    grades = _grades(chosen, sources, solution_strs, ground_truths, extras)
    return [_result(g, chosen) for g in grades]


def _plain(config: Any) -> dict[str, Any]:
    """A verl (OmegaConf) config or a mapping as plain dicts, interpolations resolved if they
    can be."""
    if isinstance(config, Mapping) and not hasattr(config, "_metadata"):
        return dict(config)
    from omegaconf import OmegaConf  # installed with verl, whose configs these are

    try:
        tree = OmegaConf.to_container(config, resolve=True, throw_on_missing=False)
    except Exception:  # an interpolation that only resolves inside verl's workers
        tree = OmegaConf.to_container(config, resolve=False, throw_on_missing=False)
    if not isinstance(tree, dict):
        raise TypeError(f"a verl config is a mapping, not {type(config).__name__}")
    return {str(k): v for k, v in tree.items()}


def _leaves(node: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _leaves(value, f"{prefix}.{key}")
    elif node is not None:
        yield prefix, node


def _new_key(old: str) -> str:
    for legacy, current in _MOVED.items():
        if old == legacy or old.startswith(legacy + "."):
            return current + old[len(legacy) :]
    if old.startswith("reward_model."):
        return "reward.reward_model." + old[len("reward_model.") :]
    return "reward." + old


def _registered_managers() -> set[str] | None:
    try:
        with warnings.catch_warnings():  # verl's own imports of Ray's deprecated state API
            warnings.simplefilter("ignore", DeprecationWarning)
            from verl.experimental.reward_loop.reward_manager import registry
    except ImportError:  # a verl without the reward loop: nothing to compare against
        return None
    return set(registry.REWARD_MANAGER)


def check_config(config: Any) -> None:
    """Refuse a verl 0.9 trainer config whose rewards would not come from its reward function.

    ``config`` is the trainer's config (OmegaConf, as Hydra composes it, or plain dicts).

    Raises:
        ValueError: naming each problem and its fix: a pre-0.9 reward key that ``main_ppo`` no
            longer reads (verl would score with its built-in function for each ``data_source``,
            0 where none applies, without an error); no ``reward.custom_reward_function.path``
            (the same fallback) or one that is not a file; a reward manager the reward loop does
            not register (``batch``); ``compute_score_batch`` named for the per-sample loop.

    Examples:
        >>> check_config({"custom_reward_function": {"path": "verl.py"}, "reward": {}})
        Traceback (most recent call last):
        ...
        ValueError: verl config: custom_reward_function.path='verl.py' is a pre-0.9 key that ...
    """
    tree = _plain(config)
    problems: list[str] = []
    for root in _LEGACY_ROOTS:
        for key, value in _leaves(tree.get(root), root):
            problems.append(
                f"{key}={value!r} is a pre-0.9 key that verl 0.9's trainer ignores "
                f"(set {_new_key(key)})"
            )
    reward = tree.get("reward") or {}
    function = reward.get("custom_reward_function") or {}
    path, name = function.get("path"), function.get("name") or "compute_score"
    if not path:
        problems.append(
            "reward.custom_reward_function.path is not set, so verl would score with its "
            "built-in function for each data_source, 0 where none applies, without an error "
            f"(set it to {__file__})"
        )
    elif not Path(str(path)).is_file():
        problems.append(f"reward.custom_reward_function.path={path!r} is not a file")
    manager = reward.get("reward_manager") or {}
    manager_name = manager.get("name") or "naive"
    registered = _registered_managers() if manager.get("source", "register") == "register" else None
    # A reward-function file may register its own manager when verl's worker imports it; only
    # truegrade's file is known to register none (and no file brings back the legacy "batch").
    ours = bool(path) and Path(str(path)).resolve() == Path(__file__).resolve()
    if (
        registered is not None
        and manager_name not in registered
        and (manager_name == "batch" or ours)
    ):
        hint = (
            " (verl 0.9's reward loop grades one sample per call; use naive with "
            "name: compute_score)"
            if manager_name == "batch"
            else ""
        )
        problems.append(
            f"reward.reward_manager.name={manager_name!r} is not one of verl's reward-loop "
            f"managers {sorted(registered)}{hint}"
        )
    if name == "compute_score_batch":
        problems.append(
            "reward.custom_reward_function.name=compute_score_batch: verl 0.9's reward loop "
            "calls its reward function once per sample; use compute_score"
        )
    if problems:
        raise ValueError("verl config: " + "; ".join(problems))


def main() -> None:
    """``python -m truegrade.integrations.verl OVERRIDES...``: verl's PPO trainer, after
    ``check_config``; the same Hydra config and overrides as ``python -m verl.trainer.main_ppo``."""
    try:
        import hydra
        from verl.trainer import main_ppo
    except ImportError as exc:
        sys.exit(f"truegrade.integrations.verl needs verl: pip install 'truegrade[verl]' ({exc})")

    def checked(config: Any) -> None:
        try:
            check_config(config)
        except ValueError as exc:
            sys.exit(f"error: {exc}")
        main_ppo.main(config)

    launch = hydra.main(
        config_path="pkg://verl.trainer.config", config_name="ppo_trainer", version_base=None
    )
    launch(checked)()


if __name__ == "__main__":
    main()
