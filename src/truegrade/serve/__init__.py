"""The reward server: ``POST /grade``, OpenRLHF's ``POST /get_reward``, health and Prometheus
metrics; each request answered as its own items finish, overload refused with 429 + Retry-After,
bounded bodies, deadlines and idle connections, and a shutdown that answers everything."""

from truegrade.serve._app import create_app
from truegrade.serve._run import ServerProcess, free_port, serve
from truegrade.serve._state import ServerLimits

__all__ = [
    "ServerLimits",
    "ServerProcess",
    "create_app",
    "free_port",
    "serve",
]
