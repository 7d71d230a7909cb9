"""Pytest plugin: the ``scripted_model`` fixture.

``url = scripted_model.start(script)`` serves ``script`` on a free port (use
``url`` as ``ANTHROPIC_BASE_URL``); ``scripted_model.journal()`` lists every
request. An unmet ``expect``, or one no request reached after the run had
started, fails the test at teardown unless the test called
``scripted_model.tolerate_failures()`` (tests of the failure itself).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tusk.sandbox.model_script import Script
from tusk.sandbox.model_server import ModelServer


class ScriptedModel:
    def __init__(self) -> None:
        self.server: ModelServer | None = None
        self._servers: list[ModelServer] = []
        self._tolerate = False

    def start(
        self,
        script: Script | Mapping[str, Any] | str | Path,
        *,
        sleep: Callable[[float], object] | None = None,
    ) -> str:
        """Serve ``script``; a second call replaces the first server."""
        if self.server is not None:
            self.server.stop()
        self.server = ModelServer(script, sleep=sleep)
        self._servers.append(self.server)
        return self.server.start()

    @property
    def url(self) -> str:
        return self._current().url

    def _current(self) -> ModelServer:
        if self.server is None:
            raise RuntimeError("scripted_model.start(script) was not called")
        return self.server

    def journal(self) -> list[dict[str, Any]]:
        return self._current().journal()

    def failures(self) -> list[dict[str, Any]]:
        """Unmet expects, including those no request reached after the run had started."""
        return [f for server in self._servers for f in (*server.failures(), *server.unreached())]

    def tolerate_failures(self) -> None:
        self._tolerate = True

    def close(self) -> None:
        for server in self._servers:
            server.stop()


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    model = ScriptedModel()
    try:
        yield model
    finally:
        model.close()
    failures = model.failures()
    if failures and not model._tolerate:
        lines = "\n".join(
            f"  request {f['n'] or '-'}, conversation {f['conversation']!r}, step {f['step']}: "
            + "; ".join(f["reasons"])
            for f in failures
        )
        pytest.fail(f"scripted model: {len(failures)} unmet expect(s)\n{lines}", pytrace=False)
