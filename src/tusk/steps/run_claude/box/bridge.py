"""The host's end of the box's roads out: one Unix socket per server in the run's
socket folder, each connection passed on to the server's loopback port.

The box has no network of the host's, so its three servers (the model proxy, the
MCP server, the egress proxy) are reached through these sockets, bound into the
box and bridged there to loopback ports by ``socat`` (``bwrap``). This end runs
in run-claude's own process, on one thread with its own event loop, and ends
with it. Bytes pass as they come (server-sent events are not held back).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

CHUNK = 1 << 16


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(CHUNK):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()


async def _relay(
    port: int, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
) -> None:
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        client_writer.close()
        return
    try:
        await asyncio.gather(
            _pipe(client_reader, server_writer), _pipe(server_reader, client_writer)
        )
    finally:
        for writer in (client_writer, server_writer):
            writer.close()


def _relay_to(
    port: int,
) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _relay(port, reader, writer)

    return relay


class Bridges:
    """``{name: port}`` served as ``<socket_dir>/<name>.sock``; ``start()``, ``stop()``.

    Each socket is the run's agent's group's to connect to (mode 0660), or anyone's
    who can reach the folder when no ``group`` is given."""

    def __init__(
        self, socket_dir: Path, ports: Mapping[str, int], *, group: int | None = None
    ) -> None:
        self.socket_dir = socket_dir
        self.ports = dict(ports)
        self.group = group
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self._servers: list[asyncio.AbstractServer] = []

    def path(self, name: str) -> Path:
        return self.socket_dir / f"{name}.sock"

    def start(self) -> None:
        ready = threading.Event()
        failure: list[BaseException] = []

        async def serve() -> None:
            try:
                for name, port in self.ports.items():
                    path = self.path(name)
                    path.unlink(missing_ok=True)
                    server = await asyncio.start_unix_server(_relay_to(port), path=str(path))
                    if self.group is not None:
                        os.chown(path, -1, self.group)
                    os.chmod(path, 0o666 if self.group is None else 0o660)
                    self._servers.append(server)
            except BaseException as error:  # told to start()'s caller
                failure.append(error)
            finally:
                ready.set()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(serve())
            if not failure:
                self._loop.run_forever()
            self._finish()

        self._thread = threading.Thread(target=run, name="tusk-box-bridges", daemon=True)
        self._thread.start()
        ready.wait(timeout=10)
        if failure:
            raise failure[0]

    def _finish(self) -> None:
        """On the bridges' own thread, once its loop stopped: every relay still open is
        cancelled and closed on this loop, then the loop is closed. Left pending, a relay
        would be closed later by the garbage collector, on a loop that is gone ("Event
        loop is closed"). A connection accepted just before the servers closed makes its
        relay a hop later, so this repeats until none is left."""
        for server in self._servers:
            server.close()
        while relays := asyncio.all_tasks(self._loop):
            for task in relays:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*relays, return_exceptions=True))
        self._loop.close()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._thread = None
        for name in self.ports:
            self.path(name).unlink(missing_ok=True)
