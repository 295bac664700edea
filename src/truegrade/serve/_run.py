"""Running the server: in this process (``serve``) or as a child process (``ServerProcess``,
for tests, benchmarks and demos that need a real server on a real port)."""

from __future__ import annotations

import math
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
from truegrade.serve._state import ServerLimits

__all__ = ["ServerProcess", "free_port", "serve"]


def serve(
    grader: Grader,
    *,
    host: str = "127.0.0.1",
    port: int = SERVE_PORT,
    limits: ServerLimits | None = None,
    max_queue: int | None = None,
    graceful_s: float | None = None,
    log_level: str = "warning",
    end_tokens: Sequence[str] | None = None,
    preset: str = "auto",
    field_map: Mapping[str, str] | None = None,
) -> None:
    """Serve ``grader`` until SIGTERM or Ctrl-C, then shut down gracefully and return.

    ``limits`` bounds the server (``max_queue`` and ``graceful_s`` override its fields of those
    names). On shutdown it stops accepting, answers requests that arrive on open connections with
    503, lets in-flight requests finish for up to ``graceful_s`` (then answers what is left with
    503), stops the engine, and returns: the process exits 0. ``end_tokens`` replaces
    the tokens cut from the end of ``/get_reward``'s responses (``<|im_end|>``,
    ``<|endoftext|>``, ``<|eot_id|>``...); ``preset`` and ``field_map``
    say how a ``/grade`` row is read."""
    import uvicorn

    from truegrade.serve._app import END_TOKENS, create_app
    from truegrade.serve._http import Server, protocol_class

    bounds = limits or ServerLimits()
    overrides = {"max_queue": max_queue, "graceful_s": graceful_s}
    bounds = ServerLimits(**{**bounds.__dict__, **{k: v for k, v in overrides.items() if v}})
    tokens = END_TOKENS if end_tokens is None else tuple(end_tokens)
    app = create_app(grader, limits=bounds, end_tokens=tokens, preset=preset, field_map=field_map)
    state = app.state.truegrade
    grace = max(0.0, bounds.graceful_s - 1.0)  # the last second is for writing the 503s

    def said(sig: int) -> None:
        # one line, so whoever sent the signal (a scheduler, Ctrl-C) sees what happens next
        print(
            f"truegrade serve: {signal.Signals(sig).name}: stopping; {state.requests_in} "
            f"requests in flight get up to {grace:g} s to finish, new requests get 503",
            file=sys.stderr,
            flush=True,
        )

    protocol = protocol_class(
        idle_timeout_s=bounds.idle_timeout_s, on_shutdown=lambda: state.begin_drain(grace)
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        http=protocol,
        timeout_graceful_shutdown=max(1, math.ceil(bounds.graceful_s)),
        timeout_keep_alive=max(1, math.ceil(bounds.idle_timeout_s)),
        access_log=False,
    )
    # the engine's dispatcher is a thread of this process: when the event loop is busy with
    # many connections, the default 5 ms switch interval leaves workers idle waiting for it
    sys.setswitchinterval(0.001)
    server = Server(config)
    server.on_signal = said
    server.run()
    print("truegrade serve: stopped", file=sys.stderr, flush=True)


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """``truegrade serve`` as a child process, ready when the context is entered
    (``extra_args``: more ``truegrade serve`` options, such as ``["--end-token", "[END]"]``;
    ``env``: variables to set, such as ``PYTHONPATH`` to serve another truegrade source tree).

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
        env: Mapping[str, str] | None = None,
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
        self.env = {**os.environ, **(env or {})}
        self.ready_timeout_s = ready_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ServerProcess:
        self.proc = subprocess.Popen(
            self.args,
            cwd=self.cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=self.env,
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
