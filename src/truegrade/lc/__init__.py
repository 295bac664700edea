"""Length-controlled win rates and judge-bias reports from recorded pairwise verdicts.

``read_preferences`` reads verdicts (AlpacaEval's ``preferences.csv`` or its annotation records)
into a ``PreferenceTable``; ``length_controlled`` fits AlpacaEval's length-controlled GLM and
returns raw and LC win rates with standard errors; ``compare_to_leaderboard`` checks them against
published numbers. Only ``_io`` reads files; the fitting is pure numerics.
"""

from truegrade.lc._bias import (
    BiasReport,
    bias_report,
    length_preference,
    position_preference,
    score_length_correlation,
)
from truegrade.lc._fit import (
    LCOptions,
    LCReport,
    LeaderboardAgreement,
    ModelLC,
    compare_to_leaderboard,
    lc_win_rates_against,
    length_controlled,
)
from truegrade.lc._glm import FitResult, fit_logistic, sigmoid
from truegrade.lc._io import (
    JudgeVerdicts,
    markdown_headers,
    markdown_list_items,
    read_judge_verdicts,
    read_leaderboard,
    read_preferences,
)
from truegrade.lc._table import PreferenceTable

__all__ = [
    "BiasReport",
    "FitResult",
    "JudgeVerdicts",
    "LCOptions",
    "LCReport",
    "LeaderboardAgreement",
    "ModelLC",
    "PreferenceTable",
    "bias_report",
    "compare_to_leaderboard",
    "fit_logistic",
    "lc_win_rates_against",
    "length_controlled",
    "length_preference",
    "markdown_headers",
    "markdown_list_items",
    "position_preference",
    "read_judge_verdicts",
    "read_leaderboard",
    "read_preferences",
    "score_length_correlation",
    "sigmoid",
]
