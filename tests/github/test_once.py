"""Creates happen once: an uncertain answer is followed by a look for the nonce,
a definite refusal is not, and a create is never sent blindly again."""

from __future__ import annotations

from typing import Any

import pytest

from tusk.github.gateway import Forbidden, ServerError, TransportError
from tusk.github.once import (
    DEFAULT_PATIENCE,
    NotConfirmed,
    Patience,
    create_once,
    has_nonce,
    look,
    new_nonce,
)


def lost(status: int = 502) -> ServerError:
    return ServerError(
        "kept failing",
        status=status,
        method="POST",
        path="/x",
        cause="outage",
        may_have_landed=True,
    )


class Script:
    """``send`` and ``find`` answering from lists, counting calls."""

    def __init__(self, sends: list[Any], finds: list[Any]) -> None:
        self.sends, self.finds = list(sends), list(finds)
        self.sent = self.found = 0
        self.sleeps: list[float] = []

    def send(self) -> Any:
        self.sent += 1
        answer = self.sends.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def find(self) -> Any:
        self.found += 1
        answer = self.finds.pop(0) if self.finds else None
        if isinstance(answer, Exception):
            raise answer
        return answer

    def run(self, patience: Patience = DEFAULT_PATIENCE) -> Any:
        return create_once(self.send, self.find, sleep=self.sleeps.append, patience=patience)


def test_a_confirmed_create_is_not_looked_for() -> None:
    script = Script([{"id": 1}], [])
    assert script.run() == {"id": 1} and (script.sent, script.found) == (1, 0)


def test_a_create_that_landed_behind_a_5xx_is_found_not_sent_again() -> None:
    script = Script([lost()], [{"id": 1}])
    assert script.run() == {"id": 1} and (script.sent, script.found) == (1, 1)


def test_a_lagging_listing_is_looked_at_again_with_growing_pauses() -> None:
    script = Script([lost()], [None, None, {"id": 1}])
    assert script.run(Patience(looks=3, first_pause=1.0)) == {"id": 1}
    assert script.sent == 1 and script.sleeps == [1.0, 2.0]


def test_a_create_that_did_not_land_is_sent_again_after_the_looks() -> None:
    script = Script([lost(), {"id": 2}], [None, None])
    assert script.run(Patience(looks=2)) == {"id": 2} and script.sent == 2


def test_a_definite_refusal_is_raised_without_a_look() -> None:
    refused = Forbidden("no", status=403, method="POST", path="/x", cause="permission")
    script = Script([refused], [])
    with pytest.raises(Forbidden):
        script.run()
    assert script.found == 0


def test_never_confirmed_and_never_found_is_reported_as_maybe_created() -> None:
    script = Script([lost(), lost(), lost()], [])
    with pytest.raises(NotConfirmed) as failed:
        script.run(Patience(looks=1, sends=3))
    assert script.sent == 3 and failed.value.may_have_landed
    assert "never confirmed" in str(failed.value)


def test_an_outage_while_looking_counts_as_not_found_yet() -> None:
    script = Script([lost()], [lost(503), {"id": 1}])
    assert script.run(Patience(looks=2)) == {"id": 1} and script.sent == 1


def test_a_reset_connection_is_uncertain_too() -> None:
    reset = TransportError("reset", method="POST", path="/x", cause="outage", may_have_landed=True)
    script = Script([reset], [{"id": 1}])
    assert script.run() == {"id": 1}


def test_look_gives_up_after_its_budget() -> None:
    sleeps: list[float] = []
    assert look(lambda: None, sleep=sleeps.append, patience=Patience(looks=3)) is None
    assert sleeps == [1.0, 2.0]


def test_only_the_bots_marker_with_the_nonce_counts() -> None:
    nonce = new_nonce()
    mine = {"user": {"login": "Tusk-Bot"}, "body": f'<!-- tusk:writeup {{"nonce":"{nonce}"}} -->'}
    forged = {"user": {"login": "mallory"}, "body": mine["body"]}
    other = {"user": {"login": "tusk-bot"}, "body": '<!-- tusk:writeup {"nonce":"x"} -->'}
    assert has_nonce(mine, kind="writeup", nonce=nonce, bot="tusk-bot")
    assert not has_nonce(forged, kind="writeup", nonce=nonce, bot="tusk-bot")
    assert not has_nonce(other, kind="writeup", nonce=nonce, bot="tusk-bot")
    assert len(nonce) == 16 and nonce != new_nonce()
