"""Statistics for graders and evals: pure numerics, no I/O.

Every estimate comes with its uncertainty, clustered on the unit that was actually sampled (the
prompt, the document) when one is given: means and rates with cluster-robust standard errors,
Wilson intervals, paired differences, the cluster bootstrap, minimum detectable effects, and the
agreement statistics a grader is judged by (Cohen's kappa, macro-F1, AUROC, calibration error)
and those of several raters with each other (Fleiss' kappa, Krippendorff's alpha).
Results are small frozen dataclasses (:class:`Estimate`), never bare tuples.
"""

from truegrade.stats._agreement import (
    auroc,
    calibration_error,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    macro_f1,
)
from truegrade.stats._bootstrap import BootstrapResult, cluster_bootstrap, cluster_totals
from truegrade.stats._estimate import Estimate, as_float_array, cluster_codes, factorize, json_ready
from truegrade.stats._inference import (
    PairedDifference,
    bootstrap_mean,
    mean_ci,
    minimum_detectable_effect,
    paired_difference,
    proportion_ci,
    wilson_interval,
    win_rate_ci,
)
from truegrade.stats._mean import MeanSE
from truegrade.stats._summary import GradeSummary, summarize

__all__ = [
    "BootstrapResult",
    "Estimate",
    "GradeSummary",
    "MeanSE",
    "PairedDifference",
    "as_float_array",
    "auroc",
    "bootstrap_mean",
    "calibration_error",
    "cluster_bootstrap",
    "cluster_codes",
    "cluster_totals",
    "cohen_kappa",
    "factorize",
    "fleiss_kappa",
    "json_ready",
    "krippendorff_alpha",
    "macro_f1",
    "mean_ci",
    "minimum_detectable_effect",
    "paired_difference",
    "proportion_ci",
    "summarize",
    "wilson_interval",
    "win_rate_ci",
]
