"""One judge simulator per test session, and per-test endpoints on it.

Each test talks to the shared server under its own tag (``x-simulator-tag``), so its statistics
are its own, and with its own behaviours (``x-simulator-config``), so one server serves every
scenario.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from truegrade.simulator import SimulatorHandle, run_simulator

_tags = itertools.count()


@pytest.fixture(scope="session")
def simulator():
    with run_simulator(mode="thread") as handle:
        yield handle


def endpoint(sim: SimulatorHandle, tag: str | None = None, **behaviour: Any) -> dict[str, Any]:
    """Judge-endpoint options for a fresh tag on the simulator with these behaviours."""
    label = tag or f"t{next(_tags)}"
    headers = {"x-simulator-tag": label}
    if behaviour:
        headers["x-simulator-config"] = json.dumps(behaviour)
    return {"endpoint": sim.base_url, "model": "sim-judge", "headers": headers}
