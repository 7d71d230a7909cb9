"""A token echoed back in an error is blanked; a short token inside a word is not
the token, and the message stays readable."""

from __future__ import annotations

import pytest

from tusk.github.gateway import scrub_token


@pytest.mark.parametrize(
    ("text", "secret", "shown"),
    [
        ("Max retries exceeded with url", "x", "Max retries exceeded with url"),
        (
            "could not reach GitHub: Max retries exceeded",
            "ex",
            "could not reach GitHub: Max retries exceeded",
        ),
        ("Authorization: Bearer ghp_abc123", "ghp_abc123", "Authorization: Bearer ***"),
        ("url?access_token=agent&x=1", "agent", "url?access_token=***&x=1"),
        (
            "'agent' is not a valid token; agents differ",
            "agent",
            "'***' is not a valid token; agents differ",
        ),
        ("token x refused", "x", "token *** refused"),
    ],
    ids=[
        "short_token_inside_words",
        "two_letters_inside_words",
        "bearer",
        "query",
        "quoted",
        "alone",
    ],
)
def test_only_whole_occurrences_of_the_token_are_blanked(
    text: str, secret: str, shown: str
) -> None:
    assert scrub_token(text, secret) == shown
