"""The reward server: ``POST /grade``, OpenRLHF's ``POST /get_reward``, health and metrics,
with admission control (429 + Retry-After) and graceful shutdown."""

from truegrade.serve._app import (
    END_TOKENS,
    GradeRequest,
    RewardRequest,
    ServerState,
    create_app,
    response_of,
)
from truegrade.serve._run import ServerProcess, free_port, serve

__all__ = [
    "END_TOKENS",
    "GradeRequest",
    "RewardRequest",
    "ServerProcess",
    "ServerState",
    "create_app",
    "free_port",
    "response_of",
    "serve",
]
