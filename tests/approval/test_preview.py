"""The preview on the trigger's thread: readable, inert, within GitHub's limit."""

from __future__ import annotations

from test_staged_set import staged

from tusk.approval.preview import preview_body
from tusk.approval.staged_set import set_digest
from tusk.text.markers import first_marker


def test_the_preview_names_each_write_and_notifies_nobody() -> None:
    one = staged(body="Thanks @bob, fixed in #3 <details>x</details>")
    text = preview_body(one, bot="tusk-bot")
    assert first_marker(text, "preview")["digest"] == set_digest(one)
    assert "comment on `alice/widgets#1`" in text
    assert "`@bob`" in text and "`#3`" in text and "<details>x" not in text
    assert "@tusk-bot apply" in text and "`@tusk-bot apply " in text  # only in code


def test_long_bodies_are_shortened_to_fit_one_comment() -> None:
    big = staged(body="word " * 8_000, count=12)
    text = preview_body(big, bot="tusk-bot")
    assert len(text) <= 65_536
    assert "shortened here; the log issue holds the whole body" in text
    assert "12 write(s) staged" in text
