"""Starting and stopping the simulator: in a thread, in a child process, or in the foreground.

``run_simulator`` binds a free local port itself and hands the socket to the server (no race for
the port), waits until it answers, yields a ``SimulatorHandle`` and shuts it down on exit. The
``process`` mode runs the server in its own interpreter (``python -m truegrade.simulator``), so
a benchmark's client and server do not share one interpreter lock; the ``thread`` mode starts in
a few milliseconds and suits tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from truegrade._ports import SIMULATOR_PORT
from truegrade.simulator._config import SimulatorConfig

__all__ = ["DEFAULT_PORT", "SimulatorHandle", "run_simulator", "serve_simulator"]

DEFAULT_PORT = SIMULATOR_PORT
"""Where ``truegrade simulate-judge`` listens unless told: next to ``truegrade serve``'s 8000
(vLLM's too), so the reward server and the judge it asks can run side by side."""


@dataclass(frozen=True)
class SimulatorHandle:
    """A running simulator.

    Attributes:
        base_url: The OpenAI-compatible API root to give a client (``http://host:port/v1``).
    """

    base_url: str

    @property
    def root(self) -> str:
        return self.base_url.removesuffix("/v1")

    def _call(self, method: str, path: str) -> Any:
        request = urllib.request.Request(self.root + path, method=method)  # noqa: S310 - our server
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            return json.loads(response.read())

    def stats(self, tag: str = "") -> dict[str, Any]:
        """Statistics of the requests sent with ``x-simulator-tag: tag``."""
        from urllib.parse import quote

        result: dict[str, Any] = self._call("GET", f"/simulator/stats?tag={quote(tag)}")
        return result

    def reset(self) -> None:
        """Forget all statistics and attempt counters."""
        self._call("POST", "/simulator/reset")

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self._call("GET", "/simulator/health")
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the judge simulator at {self.root} did not start"
                    ) from None
                time.sleep(0.02)


def _bind(host: str, port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _uvicorn_config(app: Any, **kwargs: Any) -> Any:
    import uvicorn

    return uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_keep_alive=30,
        backlog=2048,
        **kwargs,
    )


@contextlib.contextmanager
def run_simulator(
    config: SimulatorConfig | None = None,
    *,
    mode: Literal["thread", "process"] = "thread",
    host: str = "127.0.0.1",
) -> Iterator[SimulatorHandle]:
    """Run the judge simulator for the duration of a ``with`` block.

    Examples:
        >>> with run_simulator(SimulatorConfig(position_bias=1.0)) as sim:   # doctest: +SKIP
        ...     client = JudgeClient(EndpointConfig(base_url=sim.base_url, model="sim"))
    """
    cfg = config or SimulatorConfig()
    sock = _bind(host)
    port = sock.getsockname()[1]
    handle = SimulatorHandle(f"http://{host}:{port}/v1")
    if mode == "process":
        command = [
            sys.executable,
            "-m",
            "truegrade.simulator",
            "--fd",
            str(sock.fileno()),
            "--config-json",
            cfg.model_dump_json(),
        ]
        process = subprocess.Popen(command, pass_fds=(sock.fileno(),), env=dict(os.environ))
        sock.close()
        try:
            handle.wait_ready()
            yield handle
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        return
    import uvicorn

    from truegrade.simulator._app import create_app

    server = uvicorn.Server(_uvicorn_config(create_app(cfg)))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="judge-simulator", daemon=True
    )
    thread.start()
    try:
        handle.wait_ready()
        yield handle
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def serve_simulator(
    config: SimulatorConfig | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    fd: int | None = None,
) -> None:
    """Run the simulator in the foreground until interrupted (``truegrade simulate-judge``)."""
    import uvicorn

    from truegrade.simulator._app import create_app

    app = create_app(config or SimulatorConfig())
    if fd is not None:
        uvicorn.Server(_uvicorn_config(app, fd=fd)).run()
    else:
        uvicorn.Server(_uvicorn_config(app, host=host, port=port)).run()
