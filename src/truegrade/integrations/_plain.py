"""Dataset values as plain Python data, as the graders read them.

Frameworks hand rows over as their table libraries hold them: a Parquet list column read through
pandas (Ray Data's ``pandas`` batches, a verl ``non_tensor_batch``) is a NumPy array, and so is
every list nested inside it (IFEval's ``kwargs``: ``[{"keywords": array([...])}]``). A grader
that checks ``isinstance(value, list)`` would call such a row malformed, so the adapters turn
arrays and NumPy scalars back into lists and numbers first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["plain"]


def plain(value: Any) -> Any:
    """``value`` with every array (anything with ``tolist``) a list, at any depth; mappings
    become dicts and tuples lists, strings and numbers stay as they are.

    Examples:
        >>> plain({"kwargs": ({"keywords": ("tea",)},)})
        {'kwargs': [{'keywords': ['tea']}]}
    """
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return plain(tolist())
    return value
