"""Length-controlled win rates: AlpacaEval's GLM, fitted from the verdicts alone.

For each model ``m`` against the baseline, on instruction ``x``::

    logit P(m beats baseline | x) = theta_m + phi_m * tanh(d_mx / sd_m) + psi_m * gamma_x

``d_mx`` is the model's length minus the baseline's (characters), divided by its standard
deviation over the model's rows (not centred, as AlpacaEval does); ``gamma_x`` is the
instruction's difficulty. The length-controlled (LC) win rate is the model's predicted win rate
with the length term set to zero, averaged over its instructions:
``mean_x sigmoid(theta_m + psi_m * gamma_x)``. Extra covariates (markdown lists, headers...)
enter like length, one ``tanh`` term each, and are zeroed too.

How each part is estimated (and where it differs from AlpacaEval, which needs data it does not
publish per instruction):

* **Soft labels.** The judge's preference is a probability; the loss is the cross-entropy to it.
* **Instruction difficulty.** ``gamma_x`` is estimated jointly across every model in the table:
  one GLM with a model term and a length slope per model and a shared ``gamma_x`` (a small ridge
  keeps instructions every model loses finite), then centred. AlpacaEval downloads a
  precomputed difficulty; this reproduces it from the same kind of data.
* **Regularisation.** Per model, an L1 penalty whose strength is chosen by 5-fold
  cross-validation on the soft log-loss over a grid of 10 values (liblinear's ``C`` from 1e-4 to
  1e4), then a refit on all rows, as AlpacaEval does. AlpacaEval also adds, with total weight
  ``0.2``, verdicts on deliberately verbose and concise rewrites of the baseline, where quality
  is fixed and only length moves. Those verdicts are not in the published tables, so here the
  same weight goes to pseudo-verdicts that carry the length effect pooled over all models (a
  joint fit with one shared slope): rows with the model and instruction terms off, the
  covariates of a fixed sample of real rows, and the pooled model's prediction as label. They
  pull a model's length slope toward the pooled one, which matters most where a model's own data
  cannot separate length from quality (every output far shorter than the baseline's).
* **Standard errors.** Raw win rates: the standard error of the mean preference. LC: the delta
  method with a sandwich (per-instruction) covariance of the model's coefficients; the
  uncertainty of ``gamma_x`` itself is not propagated.

Pure numerics: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from truegrade.lc._glm import cross_entropy, fit_logistic, sigmoid
from truegrade.lc._table import PreferenceTable
from truegrade.stats import mean_ci

__all__ = [
    "LCOptions",
    "LCReport",
    "LeaderboardAgreement",
    "ModelLC",
    "compare_to_leaderboard",
    "lc_win_rates_against",
    "length_controlled",
]

FloatArray = NDArray[np.float64]

DEFAULT_CS = tuple(float(c) for c in np.logspace(-4, 4, 10))
_GAMMA_RIDGE = 1.0
_PSEUDO_ROWS = 256


@dataclass(frozen=True)
class LCOptions:
    """How the length-controlled GLM is fitted (defaults reproduce AlpacaEval's settings).

    Attributes:
        regularize_lambda: Total weight of the pooled-length pseudo-verdicts, as a fraction of
            the model's own rows (AlpacaEval: 0.2). 0 turns them off.
        n_splits: Cross-validation folds for the L1 strength (0: no CV, use ``cs[-1]``).
        cs: Candidate inverse L1 strengths (liblinear's ``C``).
        seed: Seeds the fold assignment and the sample of pseudo-verdict rows.
        confidence: Coverage of the reported intervals.
    """

    regularize_lambda: float = 0.2
    n_splits: int = 5
    cs: tuple[float, ...] = DEFAULT_CS
    seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.regularize_lambda < 0:
            raise ValueError("regularize_lambda must be >= 0")
        if self.n_splits == 1 or self.n_splits < 0:
            raise ValueError("n_splits must be 0 (no cross-validation) or at least 2")
        if not self.cs or min(self.cs) <= 0:
            raise ValueError("cs must be a non-empty list of positive numbers")


@dataclass(frozen=True)
class ModelLC:
    """One model's raw and length-controlled win rates against the baseline (in percent).

    Attributes:
        model: The model's name.
        n: Verdicts behind the numbers.
        win_rate_pct: Mean preference for the model, in percent (AlpacaEval's ``win_rate``).
        standard_error_pct: Its standard error.
        discrete_win_rate_pct: Wins plus half the draws, over all verdicts, in percent.
        n_wins / n_losses / n_draws: Verdicts above, below and exactly at 0.5.
        lc_win_rate_pct: The length-controlled win rate.
        lc_standard_error_pct: Its standard error (delta method, sandwich covariance).
        avg_length: Mean length of the model's outputs, in characters.
        coefficients: The GLM's coefficients: ``model`` (theta), ``instruction_difficulty``
            (psi), and one per controlled covariate (``length``, ...). Positive ``length``
            means the judge prefers the longer output (AlpacaEval's published ``tanh`` weight
            has the opposite sign: it uses baseline minus model).
        c: The chosen inverse L1 strength.
        converged: Whether every Newton fit converged.
    """

    model: str
    n: int
    win_rate_pct: float
    standard_error_pct: float
    discrete_win_rate_pct: float
    n_wins: int
    n_losses: int
    n_draws: int
    lc_win_rate_pct: float
    lc_standard_error_pct: float
    avg_length: float
    coefficients: dict[str, float]
    c: float | None
    converged: bool


@dataclass(frozen=True)
class LCReport:
    """Every model's raw and length-controlled win rates, and what the fit shared across them.

    Attributes:
        baseline: The baseline every model was judged against.
        models: One entry per model, the baseline included (50% by construction), sorted by LC
            win rate, best first.
        controls: The covariates controlled for (``length`` first).
        pooled_effects: The pooled slope of each controlled covariate (joint fit).
        instruction_difficulty: ``gamma_x`` per instruction id (centred).
        options: The fitting options.
        duplicates_dropped: Exact duplicate rows dropped when the table was read.
    """

    baseline: str
    models: list[ModelLC]
    controls: list[str]
    pooled_effects: dict[str, float]
    instruction_difficulty: dict[str, float]
    options: LCOptions
    duplicates_dropped: int = 0

    def model(self, name: str) -> ModelLC:
        """One model's entry (``KeyError`` if absent)."""
        for entry in self.models:
            if entry.model == name:
                return entry
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (NaN becomes None)."""
        data: dict[str, Any] = _no_nan(asdict(self))
        data["options"]["cs"] = list(self.options.cs)
        return data


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_nan(v) for v in value]
    return value


@dataclass
class _Design:
    """Per-row features shared by the joint and per-model fits."""

    model_codes: NDArray[np.intp]
    instruction_codes: NDArray[np.intp]
    features: FloatArray  # (rows, controls): tanh of the standardised differences
    y: FloatArray
    models: list[str]
    instructions: list[str]
    controls: list[str] = field(default_factory=list)


def _standardised(diff: FloatArray, codes: NDArray[np.intp], groups: int) -> FloatArray:
    """``tanh(diff / sd)``, the sd taken within each model over its rows (not centred)."""
    out = np.zeros_like(diff)
    for g in range(groups):
        rows = codes == g
        if rows.sum() < 2:
            continue
        sd = float(np.std(diff[rows], ddof=1))
        if sd > 0 and math.isfinite(sd):
            out[rows] = np.tanh(diff[rows] / sd)
    return out


def _design(table: PreferenceTable, rows: NDArray[np.intp], controls: Sequence[str]) -> _Design:
    models, model_codes = np.unique(table.models[rows], return_inverse=True)
    instructions, instruction_codes = np.unique(table.instructions[rows], return_inverse=True)
    columns = []
    for name in controls:
        if name == "length":
            diff = table.model_chars[rows] - table.baseline_chars[rows]
        else:
            ours, theirs = table.covariates[name]
            diff = ours[rows] - theirs[rows]
        columns.append(_standardised(diff.astype(np.float64), model_codes, len(models)))
    features = np.column_stack(columns) if columns else np.zeros((rows.size, 0))
    return _Design(
        model_codes=model_codes.astype(np.intp),
        instruction_codes=instruction_codes.astype(np.intp),
        features=features,
        y=table.preference[rows].astype(np.float64),
        models=[str(m) for m in models],
        instructions=[str(x) for x in instructions],
        controls=list(controls),
    )


def _joint_fit(design: _Design, *, shared_slopes: bool) -> FloatArray:
    """One GLM over every model: model terms, length (covariate) slopes per model or shared, and
    one difficulty per instruction. Returns the coefficient vector."""
    n = design.y.size
    m, k, x = len(design.models), design.features.shape[1], len(design.instructions)
    slope_columns = k if shared_slopes else m * k
    rows = np.arange(n)
    cols: list[NDArray[np.intp]] = [design.model_codes]
    data: list[FloatArray] = [np.ones(n)]
    for j in range(k):
        slope_col = j if shared_slopes else design.model_codes * k + j
        cols.append(m + np.broadcast_to(slope_col, (n,)).astype(np.intp))
        data.append(design.features[:, j])
    cols.append(m + slope_columns + design.instruction_codes)
    data.append(np.ones(n))
    width = m + slope_columns + x
    matrix = sparse.csr_matrix(
        (np.concatenate(data), (np.tile(rows, len(cols)), np.concatenate(cols))),
        shape=(n, width),
    )
    ridge = np.zeros(width)
    ridge[m + slope_columns :] = _GAMMA_RIDGE
    return fit_logistic(matrix, design.y, l2=ridge).coef


def _folds(n: int, n_splits: int, rng: np.random.Generator) -> NDArray[np.intp]:
    fold = np.empty(n, dtype=np.intp)
    fold[rng.permutation(n)] = np.arange(n) % n_splits
    return fold


def _choose_c(
    x: FloatArray, y: FloatArray, w: FloatArray, fold: NDArray[np.intp], options: LCOptions
) -> float:
    """The ``C`` with the lowest mean held-out soft log-loss (ties: the smallest ``C``)."""
    cs = sorted(options.cs)
    if options.n_splits == 0:
        return cs[-1]
    losses = np.zeros(len(cs))
    for k in range(options.n_splits):
        train, test = fold != k, fold == k
        x_train, y_train, w_train = x[train], y[train], w[train]
        x_test, y_test, w_test = x[test], y[test], w[test]
        start = None
        for i, c in enumerate(cs):  # small C first: each fit warm-starts the next
            start = fit_logistic(x_train, y_train, w_train, l1=1.0 / c, start=start).coef
            losses[i] += cross_entropy(y_test, x_test @ start, w_test) / w_test.sum()
    return cs[int(np.argmin(losses))]


def _delta_se(
    x: FloatArray,
    y: FloatArray,
    w: FloatArray,
    coef: FloatArray,
    real: int,
    gradient: FloatArray,
) -> float:
    """Delta-method SE of a function of the coefficients, sandwich covariance over real rows.

    Every coefficient counts, including any the L1 penalty set to zero: that a coefficient was
    shrunk to zero does not make it known.
    """
    p = sigmoid(x @ coef)
    hessian = x.T @ (x * (w * p * (1 - p))[:, None])
    scores = x[:real] * (w[:real] * (p[:real] - y[:real]))[:, None]
    meat = scores.T @ scores
    bread = np.linalg.pinv(hessian)
    variance = float(gradient @ bread @ meat @ bread @ gradient)
    return math.sqrt(variance) if variance >= 0 else math.nan


def length_controlled(
    table: PreferenceTable,
    *,
    controls: Sequence[str] = ("length",),
    options: LCOptions | None = None,
) -> LCReport:
    """Raw and length-controlled win rates of every model in ``table`` against its baseline.

    Args:
        table: The verdicts (each model against ``table.baseline``).
        controls: Covariates to control for; ``length`` is always first, others must be keys of
            ``table.covariates``.
        options: Fitting options (see ``LCOptions``).

    Returns:
        An ``LCReport``; see the module docstring for the model.

    Raises:
        ValueError: no model other than the baseline, or an unknown covariate.
    """
    opts = options or LCOptions()
    names = ["length", *[c for c in controls if c != "length"]]
    for name in names[1:]:
        if name not in table.covariates:
            known = ", ".join(sorted(table.covariates)) or "none"
            raise ValueError(f"unknown covariate {name!r} (the table has: {known})")
    others = np.flatnonzero(table.models != table.baseline)
    if others.size == 0:
        raise ValueError("the table has no verdicts on any model other than the baseline")
    design = _design(table, others, names)
    k = len(names)
    m = len(design.models)
    joint = _joint_fit(design, shared_slopes=False)
    gamma = joint[m + m * k :]
    gamma = gamma - gamma.mean()
    pooled = _joint_fit(design, shared_slopes=True)[m : m + k]

    rng = np.random.default_rng(opts.seed)
    pseudo_rows = rng.choice(design.y.size, size=min(_PSEUDO_ROWS, design.y.size), replace=False)
    pseudo_x = np.zeros((pseudo_rows.size, k + 2))
    pseudo_x[:, :k] = design.features[pseudo_rows]
    pseudo_y = sigmoid(pseudo_x[:, :k] @ pooled)

    results = [
        _fit_model(design, code, gamma, pseudo_x, pseudo_y, table, opts)
        for code in range(len(design.models))
    ]
    base_rows = table.rows_of(table.baseline)
    if base_rows.size:
        results.append(_baseline_entry(table, base_rows, k, names, opts))
    results.sort(key=lambda r: -r.lc_win_rate_pct)
    return LCReport(
        baseline=table.baseline,
        models=results,
        controls=names,
        pooled_effects={name: float(v) for name, v in zip(names, pooled, strict=True)},
        instruction_difficulty={
            x: float(g) for x, g in zip(design.instructions, gamma, strict=True)
        },
        options=opts,
        duplicates_dropped=table.duplicates_dropped,
    )


def _raw_counts(y: FloatArray) -> tuple[int, int, int, float]:
    wins, losses = int((y > 0.5).sum()), int((y < 0.5).sum())
    draws = int(y.size - wins - losses)
    return wins, losses, draws, 100 * (wins + draws / 2) / max(y.size, 1)


def _fit_model(
    design: _Design,
    code: int,
    gamma: FloatArray,
    pseudo_x: FloatArray,
    pseudo_y: FloatArray,
    table: PreferenceTable,
    opts: LCOptions,
) -> ModelLC:
    rows = np.flatnonzero(design.model_codes == code)
    k = design.features.shape[1]
    n = rows.size
    x_real = np.column_stack([design.features[rows], gamma[design.instruction_codes[rows]]])
    x_real = np.column_stack([x_real, np.ones(n)])
    y_real = design.y[rows]
    if opts.regularize_lambda > 0:
        x = np.vstack([x_real, pseudo_x])
        y = np.concatenate([y_real, pseudo_y])
        w_pseudo = np.full(pseudo_y.size, opts.regularize_lambda * n / pseudo_y.size)
        w = np.concatenate([np.ones(n), w_pseudo])
    else:
        x, y, w = x_real, y_real, np.ones(n)
    rng = np.random.default_rng(opts.seed + code)
    fold = np.concatenate(
        [_folds(n, max(opts.n_splits, 1), rng), _folds(y.size - n, max(opts.n_splits, 1), rng)]
    )
    c = _choose_c(x, y, w, fold, opts)
    fit = fit_logistic(x, y, w, l1=1.0 / c)
    coef = fit.coef
    theta, psi = coef[k + 1], coef[k]
    g_rows = gamma[design.instruction_codes[rows]]
    lc_probs = sigmoid(theta + psi * g_rows)
    lc = float(lc_probs.mean())
    slope = lc_probs * (1 - lc_probs)
    gradient = np.zeros(k + 2)
    gradient[k] = float((slope * g_rows).mean())
    gradient[k + 1] = float(slope.mean())
    lc_se = _delta_se(x, y, w, coef, n, gradient)
    raw = mean_ci(y_real, confidence=opts.confidence)
    wins, losses, draws, discrete = _raw_counts(y_real)
    model = design.models[code]
    coefficients = {name: float(v) for name, v in zip(design.controls, coef[:k], strict=True)}
    coefficients["instruction_difficulty"] = float(psi)
    coefficients["model"] = float(theta)
    return ModelLC(
        model=model,
        n=int(n),
        win_rate_pct=100 * raw.estimate,
        standard_error_pct=100 * raw.se,
        discrete_win_rate_pct=discrete,
        n_wins=wins,
        n_losses=losses,
        n_draws=draws,
        lc_win_rate_pct=100 * lc,
        lc_standard_error_pct=100 * lc_se,
        avg_length=float(table.model_chars[table.rows_of(model)].mean()),
        coefficients=coefficients,
        c=c,
        converged=fit.converged,
    )


def _baseline_entry(
    table: PreferenceTable, rows: NDArray[np.intp], k: int, names: list[str], opts: LCOptions
) -> ModelLC:
    y = table.preference[rows]
    raw = mean_ci(y, confidence=opts.confidence)
    wins, losses, draws, discrete = _raw_counts(y)
    return ModelLC(
        model=table.baseline,
        n=int(rows.size),
        win_rate_pct=100 * raw.estimate,
        standard_error_pct=100 * raw.se if raw.se == raw.se else 0.0,
        discrete_win_rate_pct=discrete,
        n_wins=wins,
        n_losses=losses,
        n_draws=draws,
        lc_win_rate_pct=50.0,
        lc_standard_error_pct=0.0,
        avg_length=float(table.model_chars[rows].mean()),
        coefficients={**dict.fromkeys(names, 0.0), "instruction_difficulty": 0.0, "model": 0.0},
        c=None,
        converged=True,
    )


def lc_win_rates_against(report: LCReport, other: str) -> dict[str, float]:
    """Every model's LC win rate (percent) against ``other``, another model of the report.

    Both were fitted against the report's baseline, so the comparison goes through the fitted
    coefficients (AlpacaEval's ``predict_winrate``): for ``m`` against ``o``,
    ``mean_x sigmoid((theta_m - theta_o) + (psi_m - psi_o) * gamma_x)`` over every instruction.
    """
    entries = {e.model: e.coefficients for e in report.models}
    if other not in entries:
        raise KeyError(f"{other!r} is not a model of this report")
    gamma = np.array(list(report.instruction_difficulty.values()))
    base = entries[other]
    out = {}
    for name, coef in entries.items():
        theta = coef["model"] - base["model"]
        psi = coef["instruction_difficulty"] - base["instruction_difficulty"]
        out[name] = 100 * float(sigmoid(theta + psi * gamma).mean())
    return out


@dataclass(frozen=True)
class LeaderboardAgreement:
    """How far computed win rates are from published ones, over the models both have.

    Attributes:
        column: Which of our numbers was compared (``win_rate_pct`` or ``lc_win_rate_pct``).
        n: Models compared.
        spearman: Rank correlation.
        mean_abs_error: Mean absolute difference, in percentage points.
        max_abs_error: Largest absolute difference.
        differences: Ours minus published, per model.
        excluded: Models left out of the comparison (reported separately).
    """

    column: str
    n: int
    spearman: float
    mean_abs_error: float
    max_abs_error: float
    differences: dict[str, float]
    excluded: dict[str, dict[str, float]]


def compare_to_leaderboard(
    report: LCReport,
    published: Mapping[str, float],
    *,
    column: str = "lc_win_rate_pct",
    exclude: Iterable[str] = (),
) -> LeaderboardAgreement:
    """Spearman correlation and mean absolute error of ``column`` against ``published`` values.

    The baseline is left out (it is 50 by construction on both sides); models in ``exclude`` are
    reported separately in ``excluded`` (ours and published), not in the statistics.
    """
    from scipy.stats import spearmanr

    left_out = set(exclude)
    ours: list[float] = []
    theirs: list[float] = []
    differences: dict[str, float] = {}
    excluded: dict[str, dict[str, float]] = {}
    for entry in report.models:
        value = published.get(entry.model)
        if entry.model == report.baseline or value is None or not math.isfinite(value):
            continue
        mine = float(getattr(entry, column))
        if entry.model in left_out:
            excluded[entry.model] = {"ours": mine, "published": float(value)}
            continue
        ours.append(mine)
        theirs.append(float(value))
        differences[entry.model] = mine - float(value)
    errors = np.abs(np.array(ours) - np.array(theirs))
    rho = float(spearmanr(ours, theirs).statistic) if len(ours) > 2 else math.nan
    return LeaderboardAgreement(
        column=column,
        n=len(ours),
        spearman=rho,
        mean_abs_error=float(errors.mean()) if errors.size else math.nan,
        max_abs_error=float(errors.max()) if errors.size else math.nan,
        differences=differences,
        excluded=excluded,
    )
