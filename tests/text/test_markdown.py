"""The one markdown module: what github.com shows of a text and whom it notifies, read
from cmark-gfm's rendering (GitHub's own parser). Each case is named by what it defends."""

from __future__ import annotations

import re

import pytest

from tusk.text import markdown
from tusk.text.markdown import NOTIFIES, TRIGGERS, mentioned_logins, mentions_of, render
from tusk.text.markers import backlink_footer


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


# -- GitHub's own additions after cmark-gfm: autolinks and heading anchors

SHA = "3f3f005b29247e51a4f4d6b8ce07b67646cd6074"


def github_additions(rendered: str) -> str:
    """What github.com adds to cmark-gfm's HTML before showing it: ``#123`` and commit
    SHAs in text outside code and links become links (a SHA shown as its first seven
    characters), and each heading gets an anchor holding an icon. (Its ``@login`` links
    are the mentions themselves, which Tusk finds in the text those links hold.)"""
    out, code, link = [], 0, 0
    for part in re.split(r"(<[^>]+>)", rendered):
        if part.startswith("<"):
            name = re.match(r"</?([a-z0-9]+)", part)
            tag = name[1] if name else ""
            step = -1 if part.startswith("</") else 1
            code += step if tag in ("code", "pre") else 0
            link += step if tag == "a" else 0
            heading = re.fullmatch(r"<(h[1-6])>", part)
            if heading:
                part += (
                    '<a id="user-content-x" class="anchor" aria-hidden="true" href="#x">'
                    '<svg class="octicon" viewBox="0 0 16 16"><path d="M0"></path></svg></a>'
                )
        elif not code and not link:
            part = re.sub(
                r"(?<![\w/])#(\d+)\b", r'<a class="issue-link" href="/o/r/issues/\1">#\1</a>', part
            )
            part = re.sub(
                r"\b([0-9a-f]{40})\b",
                lambda m: f'<a href="/o/r/commit/{m[1]}"><tt>{m[1][:7]}</tt></a>',
                part,
            )
        out.append(part)
    return "".join(out)


FOOTER = backlink_footer(
    log_issue_url="https://github.com/o/control/issues/5",
    bot="tusk-bot",
    go_away_phrase="go away",
    jobid="j1",
)
AUTOLINKED = [
    f"@tusk-bot fix #12, broken since {SHA}",
    "## @tusk-bot please\n\nSee #3 and @alice's note in #4.",
    f"# Done\n\nFixed in {SHA} (#7), thanks @bob." + FOOTER,
    "> @carol said #9\n\n`#10 @dave`",
]


@pytest.mark.parametrize("text", AUTOLINKED)
def test_githubs_autolinks_and_heading_anchors_change_nothing_tusk_judges(text: str) -> None:
    """Who is mentioned under both policies, the footer's line and link: the same whether
    or not GitHub's additions are in the HTML. The text they change is a SHA's (shown
    shortened; it stays whole in the link, and secrets are judged on the source)."""
    plain = render(text)
    shown = markdown.read(github_additions(markdown.html(text)), text)
    for policy in (NOTIFIES, TRIGGERS):
        assert [m.login for m in shown.mentions(policy)] == [
            m.login for m in plain.mentions(policy)
        ]
    footer_link = ("run log", "https://github.com/o/control/issues/5")
    assert (footer_link in shown.links()) == (footer_link in plain.links())
    line = "🤖 Posted by tusk-bot's agent"
    assert any(line in t for t in shown.shown_lines()) == any(
        line in t for t in plain.shown_lines()
    )
    assert [t.replace(SHA, SHA[:7]) for t in plain.shown_lines()] == shown.shown_lines()
    assert any(SHA in a for a in shown.attributes) == (SHA in text)


def test_the_request_after_a_mention_keeps_the_references_github_links() -> None:
    """What GitHub's additions would change: read from github.com's own HTML, ``#12`` is
    a link, and a trigger's request (read outside links) would lose it. Tusk reads
    cmark-gfm's HTML, where the request is the text as typed."""
    text = "@tusk-bot fix #12 and #13"
    [mention] = render(text).mentions(TRIGGERS)
    assert mention.after == " fix #12 and #13"
    [linked] = markdown.read(github_additions(markdown.html(text)), text).mentions(TRIGGERS)
    assert linked.after == " fix  and "
