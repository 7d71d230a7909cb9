"""`tusk sandbox github|model` on a port something else holds: one clear line, no traceback."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tusk.cli.main import main


@pytest.mark.parametrize("which", ["github", "model"])
def test_a_port_in_use_is_said_plainly(
    which: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.yml"
    script.write_text("steps: []\n")
    extra = ["--script", str(script)] if which == "model" else []
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["sandbox", which, "--port", str(port), *extra])
    error = capsys.readouterr().err
    assert code == 1
    assert f"error: port {port} on 127.0.0.1 is already in use" in error
    assert f"tusk sandbox {which} --port N" in error
    assert "Traceback" not in error
