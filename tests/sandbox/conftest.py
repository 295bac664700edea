"""``box``: a sandbox under each isolation layer in turn, for the suites that attack them all
(a module with its own ``box`` fixture uses that one instead)."""

from __future__ import annotations

import pytest

from tests.sandbox.helpers import BWRAP, CONFIGS
from truegrade.sandbox import Sandbox
from truegrade.sandbox._kernel import landlock_abi


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(name, marks=[BWRAP] if name.startswith("bwrap") else []) for name in CONFIGS
    ],
)
def box(request):
    if request.param == "native" and not landlock_abi():
        pytest.skip("the native fallback refuses to run without Landlock, which this kernel lacks")
    with Sandbox(CONFIGS[request.param]) as sandbox:
        yield sandbox
