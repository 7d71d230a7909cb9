"""The box's bridges end cleanly: a connection still open at stop() is closed then."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from pathlib import Path

from tusk.steps.run_claude.box.bridge import Bridges


def idle_server() -> tuple[socket.socket, int]:
    """A loopback server that accepts and then says nothing: the relay stays open."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept_one() -> None:
        # Closed by the test before the relay connected: nothing to hold.
        with contextlib.suppress(OSError):
            accepted.append(server.accept()[0])

    threading.Thread(target=accept_one, daemon=True).start()
    return server, server.getsockname()[1]


def test_stopping_with_a_connection_in_flight_ends_its_relay_on_a_live_loop(
    tmp_path: Path,
) -> None:
    """Left pending at stop(), a relay's coroutine was closed later by the garbage
    collector, on a loop that was gone, and printed "Event loop is closed" under the
    test run. Now no relay outlives stop(), and the loop is closed by it."""
    server, port = idle_server()
    bridges = Bridges(tmp_path, {"model": port})
    bridges.start()
    client = socket.socket(socket.AF_UNIX)
    client.connect(str(bridges.path("model")))
    client.sendall(b"GET / HTTP/1.1\r\n\r\n")
    loop = bridges._loop  # the bridges' own loop: what is left on it is the point here
    try:
        bridges.stop()
        assert asyncio.all_tasks(loop) == set()
        assert loop.is_closed()
        assert not (tmp_path / "model.sock").exists()
    finally:
        client.close()
        server.close()
