"""Data in and out: readers for JSONL, JSON and Parquet (native, verl and OpenRLHF rows) and the
one streaming, resumable results writer."""

from truegrade.data._readers import (
    FORMATS,
    BadRow,
    count_rows,
    get_field,
    read_rows,
    read_samples,
    row_to_samples,
)
from truegrade.data._writer import ResultWriter, read_results

__all__ = [
    "FORMATS",
    "BadRow",
    "ResultWriter",
    "count_rows",
    "get_field",
    "read_results",
    "read_rows",
    "read_samples",
    "row_to_samples",
]
