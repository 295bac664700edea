"""Length-controlled win rates and judge-bias reports from recorded pairwise verdicts.

``read_preferences`` reads verdicts (AlpacaEval's ``preferences.csv`` or its annotation records)
into a ``PreferenceTable``; ``length_controlled`` fits AlpacaEval's length-controlled GLM and
returns raw and LC win rates with standard errors; ``compare_to_leaderboard`` checks them against
published numbers. Only ``_io`` reads files; the fitting is pure numerics.
"""

from truegrade.lc._bias import BiasReport, bias_report
from truegrade.lc._fit import (
    LCOptions,
    LCReport,
    LeaderboardAgreement,
    ModelLC,
    compare_to_leaderboard,
    lc_win_rates_against,
    length_controlled,
)
from truegrade.lc._io import JudgeVerdicts, read_judge_verdicts, read_leaderboard, read_preferences
from truegrade.lc._table import PreferenceTable

__all__ = [
    "BiasReport",
    "JudgeVerdicts",
    "LCOptions",
    "LCReport",
    "LeaderboardAgreement",
    "ModelLC",
    "PreferenceTable",
    "bias_report",
    "compare_to_leaderboard",
    "lc_win_rates_against",
    "length_controlled",
    "read_judge_verdicts",
    "read_leaderboard",
    "read_preferences",
]
