"""Statistics for graders and evals: pure numerics, no I/O."""

from truegrade.stats._mean import MeanSE, mean_se
from truegrade.stats._summary import GradeSummary, summarize

__all__ = ["GradeSummary", "MeanSE", "mean_se", "summarize"]
