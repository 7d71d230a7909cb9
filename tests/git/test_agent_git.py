"""The bundle broker and its client: one JSON line each way, then the bundle's bytes."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tusk.git.agent import BrokerClient, BundleError, broker_pair


class Source:
    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str]]] = []

    def bundle(self, branch: str, exclude: Sequence[str]) -> bytes:
        self.asked.append((branch, list(exclude)))
        if branch == "tusk/missing":
            raise BundleError("git bundle failed in your workspace: no such branch", "")
        return b"# v2 git bundle\n" + branch.encode() + b"\n\nPACK" + b"\x00" * 10_000


def test_bundles_travel_whole_and_errors_say_why() -> None:
    source = Source()
    broker, theirs = broker_pair(source)
    broker.start()
    client = BrokerClient(theirs)
    data = client.bundle("tusk/fix", ["a" * 40])
    assert data.startswith(b"# v2 git bundle\ntusk/fix\n") and len(data) > 10_000
    with pytest.raises(BundleError, match="no such branch"):
        client.bundle("tusk/missing", [])
    assert client.bundle("tusk/other", []).endswith(b"\x00")  # still in step
    assert source.asked == [("tusk/fix", ["a" * 40]), ("tusk/missing", []), ("tusk/other", [])]
    broker.sock.close()
    with pytest.raises(BundleError, match="not answering"):
        client.bundle("tusk/fix", [])
    with pytest.raises(BundleError, match="stopped answering earlier"):
        client.bundle("tusk/fix", [])


def test_the_broker_answers_nonsense_without_running_anything() -> None:
    source = Source()
    broker, theirs = broker_pair(source)
    broker.start()
    theirs.sendall(b"not json\n")
    answer = theirs.makefile("rb").readline()
    assert b'"ok": false' in answer and b"malformed" in answer
    assert source.asked == []


@pytest.mark.parametrize(
    ("branch", "exclude"),
    [("--output=/etc/x", []), ("tusk/../x", []), ("tusk/x y", []), ("tusk/x", ["HEAD"])],
)
def test_git_is_never_handed_an_option_or_a_range(tmp_path, branch, exclude) -> None:
    from tusk.git.agent import AgentGit

    with pytest.raises(BundleError, match="Refused to bundle"):
        AgentGit(tmp_path).bundle(branch, exclude)
