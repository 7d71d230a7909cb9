"""Rendering: one strict environment, and quoting that keeps untrusted text inert."""

from __future__ import annotations

import unicodedata

import pytest
from jinja2 import UndefinedError

from tusk.text.render import environment, quote_block, render, reveal_hidden


def test_templates_load_from_the_package() -> None:
    names = environment().list_templates(filter_func=lambda name: name.endswith(".j2"))
    assert names, "tusk.templates ships no *.j2 template"


def test_misspelt_variable_is_an_error_not_an_empty_string() -> None:
    template = environment().from_string("Hello {{ nmae }}")
    with pytest.raises(UndefinedError):
        template.render(name="x")


def test_quote_block_is_registered_as_a_filter() -> None:
    template = environment().from_string("# Task\n\n{{ body | quote_block }}\n")
    assert template.render(body="fix\nit") == "# Task\n\n> fix\n> it\n"


def test_render_uses_the_one_environment() -> None:
    with pytest.raises(Exception, match="no-such-template"):
        render("no-such-template.j2")


def test_every_line_is_quoted_and_blank_lines_keep_the_quote_going() -> None:
    assert quote_block("one\n\ntwo\r\nthree\rfour") == "> one\n>\n> two\n> three\n> four"
    assert quote_block("") == ">"
    assert quote_block(None) == ">"


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("</details>", "> &lt;/details&gt;"),
        ("<!-- hidden -->", "> &lt;!-- hidden --&gt;"),
        ("-->", "> --&gt;"),
        ('<img src=x onerror="alert(1)">', '> &lt;img src=x onerror="alert(1)"&gt;'),
        ("&lt;b&gt;", "> &amp;lt;b&amp;gt;"),
        ("&#x202E;", "> &amp;#x202E;"),
        ("> nested", "> &gt; nested"),
        ("# Heading", "> \\# Heading"),
        ("   ### Heading", ">    \\### Heading"),
        ("```python", "> \\```python"),
        ("~~~", "> \\~~~"),
        ("===", "> \\==="),
        ("---", "> \\---"),
        ("* * *", "> \\* * *"),
        ("[home]: https://evil.example", "> \\[home]: https://evil.example"),
        ("- [home]: https://evil.example", "> - \\[home]: https://evil.example"),
        ("1. * [home]: https://evil.example", "> 1. * \\[home]: https://evil.example"),
        ("[two-line", "> \\[two-line"),
        ("[x](https://ok.example) text", "> [x](https://ok.example) text"),
    ],
)
def test_markup_that_could_end_the_quote_or_change_the_page_is_inert(
    text: str, quoted: str
) -> None:
    assert quote_block(text) == quoted


def test_ordinary_markdown_inside_the_quote_is_left_alone() -> None:
    text = "- a list item\n**bold** and `code` #hashtag"
    assert quote_block(text) == "> - a list item\n> **bold** and `code` #hashtag"


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\u200b", "[U+200B]"),
        ("\u200d", "[U+200D]"),
        ("\u202e", "[U+202E]"),
        ("\u2066", "[U+2066]"),
        ("\ufeff", "[U+FEFF]"),
        ("\U000e0041", "[U+E0041]"),
        ("\ufe0f", "[U+FE0F]"),
        ("\u2028", "[U+2028]"),
        ("\x1b", "[U+001B]"),
    ],
)
def test_invisible_and_bidi_characters_are_made_visible(char: str, shown: str) -> None:
    assert reveal_hidden(f"a{char}b") == f"a{shown}b"
    assert quote_block(f"a{char}b") == f"> a{shown}b"


def test_mentions_and_issue_references_do_not_notify_from_a_quote() -> None:
    quoted = quote_block("@tusk-bot fix #12 and alice/widgets#3, mail me@example.com")
    assert quoted == (
        "> @&#8203;tusk-bot fix #&#8203;12 and alice/widgets#&#8203;3, mail me@example.com"
    )
    assert quote_block("@alice", neutralise_mentions=False) == "> @alice"


def test_the_table_of_hidden_characters_is_what_a_scan_of_unicode_finds() -> None:
    # The table spares each process a scan of every code point; it must not drift
    # from the rule (a Unicode version it does not list is scanned instead).
    from tusk.text import render as module

    assert module.hidden_ranges() == module._scan_hidden()
    assert unicodedata.unidata_version in module._HIDDEN_RANGES_BY_VERSION
