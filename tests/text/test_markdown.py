"""The one markdown module: what github.com shows of a text and whom it notifies, read
from cmark-gfm's rendering (GitHub's own parser). Each case is named by what it defends."""

from __future__ import annotations

import pytest

from tusk.text import markdown
from tusk.text.markdown import NOTIFIES, TRIGGERS, mentioned_logins, mentions_of, render


@pytest.mark.parametrize(
    ("text", "logins"),
    [
        # Entities are decoded before GitHub looks for mentions: all of these notify.
        ("&#64;u1 &#064;u2 &#x40;u3 &#X40;u4 &commat;u5", {"u1", "u2", "u3", "u4", "u5"}),
        ("<b>&#64;u1</b>", {"u1"}),  # inside raw HTML too
        # A tag between two text nodes: "@bob" starts a node, GitHub links it.
        ("a<b></b>@bob", {"bob"}),
        ("_a_@bob", {"bob"}),
        # Split inside the login: GitHub links "@bo"; the line reads "@bob": both count.
        ("@bo<b></b>b", {"bo", "bob"}),
        # Links and quotes notify too.
        ("[@ann](https://example.com) > @ben", {"ann", "ben"}),
        ("> @ann", {"ann"}),
        ("@org/team", {"org/team"}),
    ],
)
def test_mentions_github_notifies_are_read_from_the_rendering(text: str, logins: set) -> None:
    assert mentioned_logins(text, NOTIFIES) == logins


@pytest.mark.parametrize(
    "text",
    [
        "`@ann`",
        "```\n@ann\n```",
        "    @ann",
        "<!-- @ann -->",
        "me@ann.dev",
        "[x](https://example.com/@ann)",  # a link destination is no text
        '<img alt="@ann" src="x">',
    ],
)
def test_code_comments_addresses_and_attributes_notify_nobody(text: str) -> None:
    assert mentioned_logins(text, NOTIFIES) == set()


def test_code_the_text_writes_as_html_hides_no_mention_from_the_cap() -> None:
    """A browser and GitHub's HTML parser may nest a hand-written <code> otherwise."""
    assert mentioned_logins("<code>@ann</code>", NOTIFIES) == {"ann"}
    assert mentioned_logins("<code>@ann</code>", TRIGGERS) == set()


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("&#64;tusk-bot please", True),
        ("@tusk-bot **go away**", True),
        ("> @tusk-bot quoted", False),
        ("[@tusk-bot](https://example.com)", False),
        ("`@tusk-bot`", False),
        ("@tusk-bot-helper", False),
        ("@tusk-bot/team", False),
        ("mail me@tusk-bot.dev", False),
        ("snake_@tusk-bot", False),
    ],
)
def test_what_triggers_the_bot(text: str, found: bool) -> None:
    assert bool(mentions_of(text, "tusk-bot", TRIGGERS)) is found


def test_a_mention_knows_the_rest_of_its_line() -> None:
    [found] = mentions_of("hey @Tusk-Bot **go away** now\nnext", "tusk-bot", TRIGGERS)
    assert found.after == " go away now"


def test_a_tag_splits_no_string_a_reader_sees_as_one() -> None:
    shown = render("sk-ant-api<b></b>03-xyz and 3\\. <!-- hidden -->").text()
    assert "sk-ant-api03-xyz" in shown
    assert "3." in shown and "hidden" not in shown


def test_a_closed_details_folds_what_it_holds() -> None:
    page = render("<details><summary>sum</summary>\n\ninside\n\n</details>\n\nafter")
    assert any("sum" in line for line in page.shown_lines())
    assert not any("inside" in line for line in page.shown_lines())
    assert any("after" in line for line in page.shown_lines())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("&#64;tusk-bot and @tusk-bot", "tusk-bot and tusk-bot"),
        ("&commat;Tusk-Bot", "Tusk-Bot"),
        ("@@tusk-bot", "tusk-bot"),
        ("@tusk-botany @ann", "@tusk-botany @ann"),
    ],
)
def test_neutralising_drops_every_spelling_of_the_at(text: str, expected: str) -> None:
    assert markdown.neutralise_mentions(text, {"tusk-bot"}) == expected


def test_deep_nesting_is_walked_without_recursion() -> None:
    assert mentioned_logins("<b>" * 5000 + "@ann", NOTIFIES) == {"ann"}


@pytest.mark.parametrize(
    ("text", "logins"),
    [
        ("`@bob` and `@carol`", set()),
        ("`@bob` and @carol", {"carol"}),
        ("`@bob` and &#64;carol", {"carol"}),
        ("`@bob` and &commat;carol", {"carol"}),
        ("```\n@bob\n```\n\n[@carol](https://example.com)", {"carol"}),
        ("<code>@bob</code>", {"bob"}),  # code the text wrote hides nothing
    ],
)
def test_a_text_showing_no_at_outside_code_is_told_without_building_the_page(
    text: str, logins: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without "<" every element is cmark's: when its HTML outside code shows no "@", no
    # policy that skips code finds a mention, and the page is not built. Anything
    # else takes the full road.
    built: list[str] = []
    real = markdown.render

    def counted(source: str) -> markdown.Rendering:
        built.append(source)
        return real(source)

    monkeypatch.setattr(markdown, "render", counted)
    assert mentioned_logins(text, NOTIFIES) == logins
    assert mentioned_logins(text, TRIGGERS) <= logins
    assert bool(built) == bool(logins or "<" in text)
