"""``PreferenceTable``: pairwise judge verdicts against one baseline, as plain arrays.

One row is one judgment: a model's output and the baseline's output for one instruction, and the
judge's preference as the probability that the model's output is the better one (a soft label:
AlpacaEval's ``preference - 1``). Lengths (and any other covariates) are kept for both outputs so
the analyses can control for them. Pure data: reading files is ``_io``'s job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = ["PreferenceTable"]


@dataclass(frozen=True)
class PreferenceTable:
    """Pairwise verdicts of one judge, each model against the same baseline.

    Attributes:
        models: The compared model, per row.
        instructions: The instruction (prompt) id, per row; the unit verdicts cluster on.
        preference: P(the model's output is better than the baseline's), per row, in [0, 1].
        model_chars: Length of the model's output in characters, per row.
        baseline_chars: Length of the baseline's output, per row.
        baseline: The baseline's name.
        covariates: Extra per-row features to control for, as ``name -> (model value, baseline
            value)`` (e.g. counts of markdown list items).
        first_is_model: Where the order the judge saw is known: True when the model's output
            was shown first; None when the order was not recorded.
        duplicates_dropped: Rows dropped because they repeated another row exactly.
    """

    models: NDArray[np.str_]
    instructions: NDArray[np.str_]
    preference: NDArray[np.float64]
    model_chars: NDArray[np.float64]
    baseline_chars: NDArray[np.float64]
    baseline: str
    covariates: Mapping[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = field(
        default_factory=dict
    )
    first_is_model: NDArray[np.bool_] | None = None
    duplicates_dropped: int = 0

    def __post_init__(self) -> None:
        n = self.models.size
        sized = [self.instructions, self.preference, self.model_chars, self.baseline_chars]
        for name, (a, b) in self.covariates.items():
            if a.size != n or b.size != n:
                raise ValueError(f"covariate {name!r} has {a.size} rows, expected {n}")
        if self.first_is_model is not None:
            sized.append(self.first_is_model)
        if any(a.size != n for a in sized):
            raise ValueError("every column of a preference table must have one value per row")
        pref = self.preference
        if n and (not np.all(np.isfinite(pref)) or pref.min() < 0 or pref.max() > 1):
            raise ValueError("preferences must be probabilities in [0, 1]")

    def __len__(self) -> int:
        return int(self.models.size)

    @property
    def model_names(self) -> list[str]:
        """Every model in the table, in order of first appearance."""
        _, first = np.unique(self.models, return_index=True)
        return [str(self.models[i]) for i in sorted(first)]

    def rows_of(self, model: str) -> NDArray[np.intp]:
        """Row indices of one model."""
        return np.flatnonzero(self.models == model)
