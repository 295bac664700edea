"""Data in and out: readers for JSONL, JSON, CSV and Parquet (native rows, and public datasets and
trainers' rows read by their presets) and the one streaming, resumable results writer."""

from truegrade.data._items import group_rollouts, rollout_key
from truegrade.data._readers import (
    BadRow,
    count_rows,
    get_field,
    one_sample,
    read_rows,
    read_samples,
)
from truegrade.data._writer import ResultWriter, read_results

__all__ = [
    "BadRow",
    "ResultWriter",
    "count_rows",
    "get_field",
    "group_rollouts",
    "one_sample",
    "read_results",
    "read_rows",
    "read_samples",
    "rollout_key",
]
