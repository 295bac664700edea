"""Running the server: in this process (``serve``) or as a child process (``ServerProcess``,
for tests, benchmarks and demos that need a real server on a real port)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from truegrade._ports import SERVE_PORT
from truegrade.core import Grader

__all__ = ["ServerProcess", "free_port", "serve"]


def serve(
    grader: Grader,
    *,
    host: str = "127.0.0.1",
    port: int = SERVE_PORT,
    max_queue: int = 65_536,
    graceful_s: float = 30.0,
    log_level: str = "warning",
    end_tokens: Sequence[str] | None = None,
    preset: str = "auto",
    field_map: Mapping[str, str] | None = None,
) -> None:
    """Serve ``grader`` until interrupted; in-flight requests finish before the engine stops.
    ``end_tokens`` replaces ``END_TOKENS``, the tokens cut from ``/get_reward``'s responses;
    ``preset`` and ``field_map`` say how a ``/grade`` row is read."""
    import uvicorn

    from truegrade.serve._app import END_TOKENS, create_app

    tokens = END_TOKENS if end_tokens is None else tuple(end_tokens)
    uvicorn.run(
        create_app(
            grader, max_queue=max_queue, end_tokens=tokens, preset=preset, field_map=field_map
        ),
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=int(graceful_s),
        access_log=False,
    )


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """``truegrade serve`` as a child process, ready when the context is entered
    (``extra_args``: more ``truegrade serve`` options, such as ``["--end-token", "[END]"]``).

    Examples:
        >>> with ServerProcess("math", workers=2) as server:  # doctest: +SKIP
        ...     httpx.post(server.url + "/grade", json={"samples": rows})
    """

    def __init__(
        self,
        grader: str,
        *,
        workers: int | None = None,
        max_queue: int | None = None,
        options: dict[str, Any] | None = None,
        cwd: Path | None = None,
        ready_timeout_s: float = 120.0,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [
            sys.executable,
            "-m",
            "truegrade",
            "serve",
            "--grader",
            grader,
            "--port",
            str(self.port),
        ]
        if workers is not None:
            args += ["--workers", str(workers)]
        if max_queue is not None:
            args += ["--max-queue", str(max_queue)]
        for key, value in (options or {}).items():
            args += ["-o", f"{key}={value}"]
        self.args = [*args, *extra_args]
        self.cwd = cwd
        self.ready_timeout_s = ready_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ServerProcess:
        self.proc = subprocess.Popen(
            self.args,
            cwd=self.cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=dict(os.environ),
        )
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"the server exited with {self.proc.returncode}: {err[-2000:]}")
            try:
                if httpx.get(self.url + "/health", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the server did not answer on {self.url} in {self.ready_timeout_s} s")

    def stop(self, *, graceful: bool = True) -> int | None:
        """Stop the server (SIGTERM: graceful) and return its exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM if graceful else signal.SIGKILL)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self.proc is not None and self.proc.stderr is not None:
            self.proc.stderr.close()
