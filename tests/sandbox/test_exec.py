"""Build once, execute per task: the image comes back fresh for every run."""

from __future__ import annotations

import pytest

from truegrade.sandbox import ExecLimits, Sandbox, SandboxConfig


@pytest.fixture(scope="module")
def box():
    with Sandbox(SandboxConfig(address_space_mb=4096)) as sandbox:
        yield sandbox


def test_each_run_starts_from_the_build_output_alone(box):
    script = b"ls /tmp; echo changed > /tmp/run.sh; echo junk > /tmp/junk\n"
    built = box.build({"run.sh": script}, None, keep=["run.sh"], timeout_s=10)
    assert built.ok
    for _ in range(2):
        result = built.exec(["/bin/sh", "/tmp/run.sh"], timeout_s=10, env={"PATH": "/usr/bin:/bin"})
        assert result.status == "exited" and result.exit_code == 0, result
        assert result.stdout.split() == ["run.sh"]  # no junk, and the script was not changed


def test_a_run_over_its_memory_limit_is_stopped(box):
    built = box.build({"x": b""}, None, keep=["x"], timeout_s=10)
    grab = "import sys; b = bytearray(512 * 1024 * 1024); print('GOT')"
    result = built.exec(
        ["/usr/bin/python3", "-I", "-S", "-c", grab],
        timeout_s=20,
        limits=ExecLimits(as_mb=128),
    )
    assert "GOT" not in result.stdout
    assert result.exit_code != 0 or result.status != "exited"
