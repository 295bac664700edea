"""The reward server's connection handling: what uvicorn leaves to the application.

Three gaps, each closed here:

* **Bodies** (``BodyGuard``): a body larger than the limit gets 413 before it is read (by its
  declared length, or as soon as the bytes received pass the limit), so memory stays bounded.
* **Abandoned requests** (``BodyGuard``): once the body is read, the guard keeps listening on the
  connection; when the client leaves before its answer, the request's handler is cancelled, and
  with it the grading work it submitted (the engine cancels the job and frees a worker held by a
  slow item).
* **Stalled connections and shutdown** (``protocol_class``): uvicorn closes a keep-alive
  connection only while it is idle between requests, and the first byte of a request disarms that
  timer, so a client that sends half a request holds its connection forever. Here a connection
  must deliver a whole request within ``idle_timeout_s`` of opening or of its last answer. On
  shutdown uvicorn closes idle connections at once, which resets a request already on its way;
  here an idle connection lingers ``_LINGER_S`` so such a request is read and answered 503, and
  only then closes.

``Server`` is uvicorn's server without its last act: after a clean shutdown uvicorn re-raises the
signal that stopped it, so the process "dies" of SIGTERM (status -15) after serving everything;
this one returns, and the process exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import Awaitable, Callable, MutableMapping
from types import FrameType
from typing import Any, cast

import uvicorn

__all__ = ["BodyGuard", "Server", "protocol_class"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: How long an idle connection stays open once shutdown begins, so a request already sent on it
#: is answered (503) rather than reset.
_LINGER_S = 1.0
#: Scope key of the callbacks our protocol calls when a request's connection drops.
DISCONNECT_HOOKS = "truegrade.disconnect_hooks"


async def send_json(send: Send, status: int, content: dict[str, Any], *, close: bool) -> None:
    body = json.dumps(content).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodyGuard:
    """ASGI middleware: bounded bodies, and handlers cancelled when their client leaves.

    The body's size is left in ``scope["truegrade.body_bytes"]``; a cancelled handler sees
    ``scope["truegrade.disconnected"]`` set before its ``CancelledError``.
    """

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        limit = self.max_body_bytes
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._too_large(send, int(declared))
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left while sending: nothing to answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._too_large(send, None)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        scope["truegrade.body_bytes"] = size
        body = b"".join(chunks)
        delivered = False
        task = asyncio.current_task()
        left = False

        def on_disconnect(*_: Any) -> None:
            nonlocal left
            if task is not None and not left:
                left = True
                scope["truegrade.disconnected"] = True
                task.cancel()

        # Our protocol calls ``on_disconnect`` itself when the connection drops (no task per
        # request); under another server, a task waits for the message after the body, which
        # is only ever the client's disconnect (or the end of the response).
        hooks: list[Callable[[], None]] | None = scope.get(DISCONNECT_HOOKS)
        gone: asyncio.Future[Message] | None = None
        if hooks is not None:
            hooks.append(on_disconnect)
        else:
            gone = asyncio.ensure_future(receive())
            gone.add_done_callback(lambda f: None if f.cancelled() else on_disconnect())

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            if gone is not None:
                return await asyncio.shield(gone)
            return await receive()

        try:
            await self.app(scope, replay, send)
        except asyncio.CancelledError:
            if not left:
                raise  # cancelled from outside (shutdown): not ours to swallow
            if task is not None and hasattr(task, "uncancel"):  # Python 3.11+
                task.uncancel()
        finally:
            left = True  # answered (or given up): a late disconnect cancels nothing
            if hooks is not None:
                with contextlib.suppress(ValueError):
                    hooks.remove(on_disconnect)
            if gone is not None:
                gone.cancel()

    async def _too_large(self, send: Send, declared: int | None) -> None:
        size = f"{declared:,} bytes" if declared is not None else "more bytes"
        await send_json(
            send,
            413,
            {
                "error": f"request body too large: {size} against a limit of "
                f"{self.max_body_bytes:,} (--max-body-mb); send fewer samples per request"
            },
            close=True,
        )


def protocol_class(*, idle_timeout_s: float, on_shutdown: Callable[[], None]) -> type[Any]:
    """uvicorn's HTTP protocol (httptools when installed, else h11) with a whole-request
    deadline per connection and a lingering shutdown; ``on_shutdown`` is called once, when the
    server begins to shut down (before any connection is closed)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    except ImportError:  # pragma: no cover - uvicorn without [standard]
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base  # type: ignore[assignment]

    started: list[bool] = []

    class GuardedProtocol(Base):
        _deadline: asyncio.TimerHandle | None = None
        _draining = False

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm(idle_timeout_s)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            cycle = self.cycle
            super().connection_lost(exc)
            if cycle is not None and not cycle.response_complete:
                scope = cast(dict[str, Any], cycle.scope)  # uvicorn types it without our key
                for hook in list(scope.get(DISCONNECT_HOOKS, [])):
                    hook()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            cycle = self.cycle
            if cycle is not None:
                hooked = cast(dict[str, Any], cycle.scope)
                hooked.setdefault(DISCONNECT_HOOKS, [])
            if cycle is not None and not cycle.response_complete and not cycle.more_body:
                self._disarm()  # a whole request is in: its handler's own deadline applies
                if self._draining:
                    cycle.keep_alive = False

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm(_LINGER_S if self._draining else idle_timeout_s)

        def shutdown(self) -> None:
            if not started:
                started.append(True)
                on_shutdown()
            self._draining = True
            if self.cycle is None or self.cycle.response_complete:
                self._arm(_LINGER_S)  # idle: linger, then close
            else:
                self.cycle.keep_alive = False

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            cycle = self.cycle
            busy = cycle is not None and not cycle.response_complete and not cycle.more_body
            if not busy and not self.transport.is_closing():
                self.transport.close()

    return GuardedProtocol


class Server(uvicorn.Server):
    """uvicorn's server that exits normally after a clean shutdown (see the module docstring)."""

    on_signal: Callable[[int], None] | None = None
    """Told the signal that starts the shutdown, once (``serve`` says so in one line)."""

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        else:
            if not self.should_exit and self.on_signal is not None:
                self.on_signal(sig)
            self.should_exit = True
