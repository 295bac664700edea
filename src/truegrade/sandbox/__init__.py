"""Running untrusted programs isolated from the grader and the host.

A mechanism package: it knows nothing about graders. ``Sandbox`` starts a pre-warmed zygote under
the strongest isolation available (bubblewrap, else native namespaces with Landlock), reports
which layers really hold (``layers``), and forks a fresh, confined child for every task: a
function call that only receives inputs and returns plain data, or a whole program run on stdin.
"""

from truegrade.sandbox._buildcache import BuildCache, CachedBuild
from truegrade.sandbox._codec import (
    MAX_DEPTH,
    PlainDataError,
    crowded,
    crowded_within,
    decode_value,
    encode_value,
)
from truegrade.sandbox._layers import Layer, layers
from truegrade.sandbox._sandbox import (
    CallResult,
    CallStream,
    ExecLimits,
    Executable,
    Isolation,
    Opaque,
    Program,
    RunResult,
    Sandbox,
    SandboxConfig,
    SandboxError,
    SandboxUnavailable,
)
from truegrade.sandbox._zygote import STREAM_BYTES_MAX

__all__ = [
    "MAX_DEPTH",
    "STREAM_BYTES_MAX",
    "BuildCache",
    "CachedBuild",
    "CallResult",
    "CallStream",
    "ExecLimits",
    "Executable",
    "Isolation",
    "Layer",
    "Opaque",
    "PlainDataError",
    "Program",
    "RunResult",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "SandboxUnavailable",
    "crowded",
    "crowded_within",
    "decode_value",
    "encode_value",
    "layers",
]
