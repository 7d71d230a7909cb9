"""pytest plugin and helpers for the local GitHub.

``local_github`` (function scope) hands each test a clean local GitHub: one
server per test session, its state replaced per test, so tests stay fast and
independent. A test fails when the sandbox recorded a spec violation during
it, since that means Tusk sent (or the sandbox answered) something GitHub's
description does not allow; tests that provoke violations on purpose take
them with ``take_violations()``.

``LocalGitHub`` speaks only the admin HTTP API, so the same client drives an
in-process server, a subprocess (``run_local_github``, for act runs and the
demo) or any running ``tusk sandbox github``.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import pytest
import requests
import yaml
from pydantic import SecretStr


class LocalGitHub:
    """Client of one local GitHub's admin API, plus gateways for its tokens."""

    def __init__(self, url: str, admin_secret: str) -> None:
        from tusk.sandbox.github_access import ADMIN_HEADER

        self.url = url.rstrip("/")
        self.sleeps: list[float] = []
        self._session = requests.Session()
        self._session.trust_env = False
        self._session.headers[ADMIN_HEADER] = admin_secret
        self.admin_headers = {ADMIN_HEADER: admin_secret}

    def _admin(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._session.request(
            method, f"{self.url}/_sandbox/{path}", timeout=30, **kwargs
        )
        if response.status_code >= 400:
            raise AssertionError(
                f"sandbox admin {method} {path}: {response.status_code} {response.text}"
            )
        return response.json() if response.content else None

    def load(self, scenario: Mapping[str, Any] | str | Path) -> dict[str, Any]:
        """Replace the whole state with ``scenario``: a dict, YAML/JSON text, or a ``Path``."""
        if isinstance(scenario, Path):
            text = scenario.read_text(encoding="utf-8")
        elif isinstance(scenario, str):
            text = scenario
        else:
            text = json.dumps(dict(scenario), default=_json_default)
        return cast(dict[str, Any], self._admin("POST", "scenario", data=text.encode("utf-8")))

    def state(self) -> dict[str, Any]:
        return cast(dict[str, Any], self._admin("GET", "state"))

    def journal(self) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self._admin("GET", "journal"))

    def dispatches(self) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self._admin("GET", "dispatches"))

    def violations(self) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self._admin("GET", "violations"))

    def notes(self) -> list[dict[str, Any]]:
        """Things the sandbox met but does not implement (operations, GraphQL fields)."""
        return cast(list[dict[str, Any]], self._admin("GET", "notes"))

    def take_violations(self) -> list[dict[str, Any]]:
        """Return the violations recorded so far and forget them (for tests that provoke them)."""
        found = self.violations()
        self._admin("POST", "violations/clear")
        return found

    def add_fault(
        self,
        method: str,
        path_pattern: str,
        *,
        status: int | None = None,
        count: int | None = 1,
        headers: Mapping[str, str] | None = None,
        delay: float = 0.0,
        drop: bool = False,
        message: str | None = None,
        lands: bool = False,
        body: str | None = None,
    ) -> dict[str, Any]:
        """Make the next ``count`` requests matching ``method`` (or ``*``) and the
        ``path_pattern`` regex fail with ``status``, wait ``delay`` seconds, or drop
        the connection. ``count=None`` applies to every matching request.

        ``lands=True`` applies the request first and then loses its answer: the
        write exists although the caller saw a 5xx, a reset or (with ``delay``
        past its timeout) nothing at all. ``body`` (a regex) narrows the fault to requests
        whose body matches it, e.g. one GraphQL mutation."""
        spec = {
            "method": method,
            "path": path_pattern,
            "status": status,
            "count": count,
            "headers": dict(headers or {}),
            "delay": delay,
            "drop": drop,
            "message": message,
            "lands": lands,
            "body": body,
        }
        return cast(dict[str, Any], self._admin("POST", "faults", json=spec))

    def clear_faults(self) -> None:
        self._admin("DELETE", "faults")

    def advance(self, seconds: float) -> None:
        """Let time pass on the local GitHub: its wall clock (rate-limit windows, listing
        lag) and a scenario's own clock (timestamps, the Date header)."""
        self._admin("POST", "clock", json={"advance": seconds})

    def sleep(self, seconds: float) -> None:
        """An injected sleep: recorded in ``self.sleeps``, and the local GitHub's clock
        moves on by as much, as if the time had passed."""
        self.sleeps.append(seconds)
        if seconds > 0:
            self.advance(seconds)

    def gateway(self, token_name: str | None, **kwargs: Any) -> Any:
        """A ``tusk.github.gateway.Gateway`` with the sandbox token ``token_name`` (its
        string is its name).

        Waits the gateway would sleep (Retry-After, backoff, pacing) are recorded in
        ``self.sleeps`` and pass on the local GitHub's clock instead of being slept
        (``self.sleep``), unless the test passes ``sleep=``.
        """
        from tusk.github.gateway import Gateway

        kwargs.setdefault("sleep", self.sleep)
        token = SecretStr(token_name) if token_name else None
        return Gateway(
            api_url=self.url, token=token, token_name=token_name or "anonymous", **kwargs
        )

    def pygithub(self, token_name: str) -> Any:
        """A PyGithub client with the sandbox token ``token_name``, its own retry left on:
        the local GitHub must serve a real client as GitHub does (PyGithub is a test
        dependency; the product speaks HTTP through ``tusk.github.gateway.Gateway``)."""
        import github  # imported lazily: slow to import, and only the tests install it

        return github.Github(
            base_url=self.url,
            auth=github.Auth.Token(token_name),
            user_agent="tusk-agent-platform",
            retry=github.GithubRetry(total=4),
            seconds_between_requests=None,
            seconds_between_writes=None,
        )

    def clone_url(self, full_name: str) -> str:
        return f"{self.url}/{full_name}.git"

    def close(self) -> None:
        self._session.close()


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# --------------------------------------------------------------------------- fixtures


_SESSION_SERVERS: list[Any] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """List what tests asked of the local GitHub that it does not implement."""
    notes = [note for running in _SESSION_SERVERS for note in running.app.notes]
    if notes:
        # Not a failure by itself: each such request already failed its own test, or
        # was answered null on purpose; this says which operations the stand-in lacks.
        terminalreporter.section(
            "local GitHub: operations the tests reached that it does not serve (answered "
            "404 or null; the tests above are the verdict)"
        )
        for note in notes:
            terminalreporter.write_line(f"{note['kind']}: {note['detail']}")


@pytest.fixture(scope="session")
def _local_github_server() -> Iterator[Any]:
    from tusk.sandbox.github_server import start_server

    running = start_server(port=0, strict=True)
    _SESSION_SERVERS.append(running)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def local_github(_local_github_server: Any) -> Iterator[LocalGitHub]:
    """A clean local GitHub for one test; the test fails if a spec violation was recorded."""
    client = LocalGitHub(_local_github_server.url, _local_github_server.app.admin_secret)
    client.load({})
    client.take_violations()
    yield client
    violations = client.violations()
    client.close()
    if violations:
        lines = "\n".join(v["message"] for v in violations)
        pytest.fail(
            f"the local GitHub recorded {len(violations)} spec violation(s):\n{lines}",
            pytrace=False,
        )


# --------------------------------------------------------------------------- subprocess


@contextlib.contextmanager
def run_local_github(
    scenario: Mapping[str, Any] | str | Path | None = None,
    *,
    port: int = 0,
    strict: bool = True,
    env: Mapping[str, str] | None = None,
) -> Iterator[LocalGitHub]:
    """Run ``tusk sandbox github`` as a subprocess (act runs, the demo) and yield its client."""
    from tusk.sandbox.github_access import ADMIN_SECRET_ENV

    admin_secret = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="tusk-sandbox-") as folder:
        args = [
            sys.executable,
            "-P",
            "-m",
            "tusk.cli.main",
            "sandbox",
            "github",
            "--port",
            str(port),
        ]
        if scenario is not None:
            path = Path(folder) / "scenario.yml"
            if isinstance(scenario, Path):
                path = scenario
            elif isinstance(scenario, str):
                path.write_text(scenario, encoding="utf-8")
            else:
                path.write_text(yaml.safe_dump(dict(scenario)), encoding="utf-8")
            args += ["--scenario", str(path)]
        if not strict:
            args.append("--lenient")
        process = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {}), ADMIN_SECRET_ENV: admin_secret},
        )
        try:
            assert process.stdout is not None
            url = process.stdout.readline().strip()
            if not url.startswith("http"):
                raise RuntimeError(f"tusk sandbox github did not start (exit {process.poll()})")
            client = LocalGitHub(url, admin_secret)
            yield client
            client.close()
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
