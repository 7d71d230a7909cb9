"""The record-only setting has a name of its own, ``record_only``: "staged" means
approval's staged set. The old key is read for one release, with a warning."""

from __future__ import annotations

import pytest

from tusk.cli.init import commented_settings
from tusk.contracts.config import parse_settings
from tusk.errors import ConfigError

MINIMAL = {"bot": "tusk-bot", "control_repo": "alice/tusk-control", "allowed_users": ["alice"]}


def test_record_only_is_its_own_key() -> None:
    assert parse_settings({**MINIMAL, "record_only": True}, source="t").record_only is True
    assert parse_settings(MINIMAL, source="t").record_only is False


def test_the_old_key_is_read_as_record_only_with_a_warning(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    settings = parse_settings({**MINIMAL, "staged": True}, source="t")
    assert settings.record_only is True
    said = capsys.readouterr()
    assert "`staged` is now called `record_only`" in said.err + said.out


def test_both_keys_at_odds_are_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_settings({**MINIMAL, "staged": True, "record_only": False}, source="t")
    assert "give record_only only" in str(caught.value)


def test_tusk_init_writes_the_new_key() -> None:
    text = commented_settings(
        bot="tusk-bot", control_repo="alice/tusk-control", allowed_users=["alice"], record_only=True
    )
    assert "record_only: true" in text and "staged" not in text
