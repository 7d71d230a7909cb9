"""The log issue reads as markdown on GitHub, and shows who asked with what rights.

Checked with a GFM renderer (markdown-it-py's gfm-like preset): the context's
headings, lists and code render, code is kept byte for byte, while mentions,
references, thread URLs, HTML and hidden characters act on nothing, without
the old escaping noise (``\\#``, ``&#8203;``)."""

from __future__ import annotations

from unittest import mock

import gfm_page
import pytest
from bc_samples import document, issue, settings, trigger_comment
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tusk.contracts.models import PermissionConfig
from tusk.issues.run_facts import run_facts
from tusk.steps.build_context import build_context as bc
from tusk.steps.build_context import log_body as lb
from tusk.text import render
from tusk.text.markers import first_marker
from tusk.text.render import neutral_markdown_lines, quote_markdown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("ping @alice and @org/team", "ping `@alice` and `@org/team`"),
        ("see #12, a/b#3 and GH-4", "see `#12`, `a/b#3` and `GH-4`"),
        ("mail me@example.com, x#1, a&b", "mail me@example.com, x#1, a&amp;b"),
        ("&#64;alice <b>bold</b>", "&amp;#64;alice &lt;b>bold&lt;/b>"),
        ("in `@code #1` stays", "in `@code #1` stays"),
        ("``a ` @b``", "``a ` @b``"),
        ("\\`x @y \\`", "\\`x `@y` \\`"),  # escaped backticks open no code span
        ("[text @z](https://x.example/@z)", "[text `@z`](https://x.example/@z)"),
        (
            "bare https://github.com/a/b/issues/9#issuecomment-1 stays text",
            "bare `https://github.com/a/b/issues/9#issuecomment-1` stays text",
        ),
        ("[Context]: https://evil.example", "\\[Context]: https://evil.example"),
        ("rtl\u202eexe", "rtl[U+202E]exe"),
    ],
)
def test_prose_is_kept_and_made_neutral(text: str, shown: str) -> None:
    assert neutral_markdown_lines(text) == [shown]


def test_fenced_code_is_left_exactly_as_written_even_inside_quotes() -> None:
    text = "> ```python\n> print('@eve #9 <b> &amp;')\n> ```\n> after @eve"
    assert neutral_markdown_lines(text) == [
        "> ```python",
        "> print('@eve #9 <b> &amp;')",
        "> ```",
        "> after `@eve`",
    ]


def test_an_unclosed_fence_ends_with_the_quote_that_holds_it() -> None:
    text = "> > ```\n> > @inside\n>\n> @outside"
    assert neutral_markdown_lines(text)[-1] == "> `@outside`"


@pytest.mark.parametrize(
    ("text", "shown", "live"),
    [
        # CommonMark 0.31.2, 6.2: the second "_" is right-flanking (after "a") and not
        # left-flanking (before the punctuation "@"), so it closes: <em>a</em>@bob. "@bob"
        # then starts a text node, where GitHub links it.
        ("_a_@bob", "_a_`@bob`", ["@bob"]),
        ("__a__@bob", "__a__`@bob`", ["@bob"]),
        ("*a*@bob", "*a*`@bob`", ["@bob"]),
        # No opener: a literal "_" before "@", GitHub links nothing. Wrapped all the same
        # (telling needs the whole paragraph's emphasis); it reads the same.
        ("snake_@bob", "snake_`@bob`", []),
        ("a_@bob", "a_`@bob`", []),
        # References the same way: "#12" starts a text node after </em>.
        ("_a_#12", "_a_`#12`", ["#12"]),
        # Before a letter the "_" cannot close (6.2: left- and right-flanking, not
        # followed by punctuation): literal, nothing linked; wrapped all the same.
        ("_a_GH-12", "_a_`GH-12`", []),
    ],
)
def test_a_mention_right_after_emphasis_is_made_neutral(
    text: str, shown: str, live: list[str]
) -> None:
    assert gfm_page.live_text(gfm_page.parse(text)[0]) == live
    assert neutral_markdown_lines(text) == [shown]
    assert gfm_page.live_text(gfm_page.parse(shown)[0]) == []


def test_a_mention_after_a_slash_is_made_neutral() -> None:
    """GitHub's mention filter (html-pipeline's MentionFilter) takes ``@login`` after
    any non-word character, ``/`` included; outside a link it may notify."""
    assert neutral_markdown_lines("see x/@bob") == ["see x/`@bob`"]


def context_doc(comment_body: str, permission_config: PermissionConfig | None = None) -> bc.Built:
    raw = {
        "kind": "issue",
        "thread": issue(body="## Steps\n\n1. open\n2. resize @bob\n\n```\n@code stays\n```"),
        "comments": [trigger_comment(body=comment_body)],
        "linked_issues": [],
    }
    doc = document(raw, trigger_body=comment_body)
    if permission_config is not None:
        doc = doc.model_copy(update={"permission_config": permission_config})
    return doc


def test_the_log_issue_renders_its_context_as_markdown_and_acts_on_nothing() -> None:
    doc = context_doc("@tusk-bot please fix #7 for @carol <img src=x>")
    built = bc.build(doc, settings())
    log = lb.log_issue_body(
        jobid=doc.jobid,
        repo=doc.repo,
        task_text=built.task.text,
        context_text=bc.render_context(built.context),
        artifact_name="tusk-context-x",
        artifact_url=None,
        facts=run_facts(doc, settings()),
    )
    tokens, env = gfm_page.parse(log.body)
    # The context's own structure renders: its title, sections and items are headings
    # inside the quote, the description's list is a list, its code is code.
    inside = [(tag, text) for tag, level, text in gfm_page.headings(tokens) if level > 0]
    assert ("h1", "Context: alice/widgets `#7`") in inside  # the inline source: `#7` is code
    assert ("h2", "Description") in inside and ("h2", "Conversation") in inside
    assert any(t.type == "ordered_list_open" and t.level > 1 for t in tokens)
    assert any(t.type == "fence" and t.content == "@code stays\n" for t in tokens)
    # Nothing acts on GitHub, and nothing is escaped into noise.
    assert gfm_page.live_text(tokens) == []
    assert gfm_page.html(tokens) == [tokens[0].content]
    assert env.get("references", {}) == {}
    assert "&#8203;" not in log.body and "\\#" not in log.body


def test_the_log_issue_says_who_asked_with_what_trust_rights_and_limits() -> None:
    marker_error = "unknown permission 'push-everywhere' (@mallory wrote it)"
    config = PermissionConfig(
        marker="[permissions: push-everywhere]",
        error=marker_error,
        operations=("comment",),
        only_this_thread=True,
        comments_per_thread=1,
        issues_per_repo=0,
        prs_per_repo=0,
        memory_writes=0,
    )
    doc = context_doc("@tusk-bot [permissions: push-everywhere] do it", config)
    doc = doc.model_copy(update={"trust_source": "author_association"})
    conf = settings().model_copy(update={"record_only": True})
    built = bc.build(doc, conf)
    log = lb.log_issue_body(
        jobid=doc.jobid,
        repo=doc.repo,
        task_text=built.task.text,
        context_text=bc.render_context(built.context),
        artifact_name="tusk-context-x",
        artifact_url=None,
        facts=run_facts(doc, conf),
    )
    facts = log.body.split("# Context")[0]
    assert (
        f"- **requested by** `{doc.actor}`, trust **{doc.trust_level}, by association** (from "
        "the mention's author association: the permission endpoint was not readable"
    ) in facts
    assert "- **may**: allowed writes: comment\n- **may**: only on the thread of the mention" in (
        facts
    )
    assert "- **permission marker**: `[permissions: push-everywhere]`" in facts
    assert (
        "- ⚠️ **the permission marker could not be read**, so the most restrictive "
        "permissions apply: unknown permission 'push-everywhere' (`@mallory` wrote it)"
    ) in facts
    assert "- **budget**: 60 turns, 30 minutes, $5.00 of model spend" in facts
    assert "- **network asked for**: fenced (" in facts and "hosts allowed)" in facts
    assert "- **record-only**: the agent's writes are recorded in this issue" in facts
    tokens, _ = gfm_page.parse(log.body)
    assert gfm_page.live_text(tokens) == []
    # The limits across runs count runs per requester from the job marker, and hold the
    # run's budget against the requester's cap until it ends.
    assert first_marker(log.body, "job") == {
        "jobid": doc.jobid,
        "repo": doc.repo,
        "requester": doc.actor,
        "budget_usd": 5.0,
    }


def test_quote_markdown_quotes_every_line() -> None:
    assert quote_markdown("a\n\nb") == "> a\n>\n> b"


MARKDOWN_PIECES = [
    *("word", " ", "   ", "\t", "\n", "\r\n", "> ", ">", ">>", "```", "~~~", "`", "``"),
    *("@bob", "@org/team", "#12", "a/b#3", "GH-4", "https://github.com/a/b/issues/9", "://"),
    *("[x]: y", "[a](b)", "](", "&", "&#64;", "<b>", "=", "-", "*", "1.", "\u200b", "\x01"),
    *("\u202e", "é", "GH", "-4", "/", ":"),
]


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(MARKDOWN_PIECES), max_size=40).map("".join))
def test_the_shortcuts_for_plain_text_change_nothing(text: str) -> None:
    """Plain lines and prose with nothing linkable skip the work; the full path agrees."""
    fast = neutral_markdown_lines(text)
    with (
        mock.patch.object(render, "_plain", lambda line: False),
        mock.patch.object(render, "_may_link", lambda text: True),
    ):
        assert neutral_markdown_lines(text) == fast


# What is code is CommonMark's answer per paragraph, not per line. Each case cites the
# rule (CommonMark 0.31.2; the table case, GFM 0.29's tables extension); every posted
# page is read back with the GFM renderer: nothing live, the expected code spans there.
CODE_ACROSS_LINES = [
    # 6.1 Code spans: a span may hold a line ending (example 335); the backtick closing
    # line 1's span opens nothing on line 2, so the mention after it is text.
    ("`a\nb` @alice `c`", ["`a", "b` `@alice` `c`"], ["a b", "@alice", "c"]),
    # 6.1: a mention inside a span that crosses a line ending is code, kept as written.
    ("`a\n@bob b`", ["`a", "@bob b`"], ["a @bob b"]),
    # 5.2 List items: the item's paragraph continues on its indented line (6.1 as above).
    ("- `a\n  @bob` @carol", ["- `a", "  @bob` `@carol`"], ["a @bob", "@carol"]),
    # 5.1 Block quotes: the quoted paragraph continues on the next quoted line...
    ("> `a\n> @bob` @carol", ["> `a", "> @bob` `@carol`"], ["a @bob", "@carol"]),
    # ...and on a lazy continuation line (5.1, laziness).
    ("> `a\n@bob` @carol", ["> `a", "@bob` `@carol`"], ["a @bob", "@carol"]),
    # 4.8 Paragraphs: a blank line ends the paragraph, so no span crosses it; 6.1: an
    # unclosed backtick string is literal, and stays literal next to the added spans.
    ("`a\n\n@bob `", ["\\`a", "", "`@bob` \\`"], ["@bob"]),
    ("` @bob", ["\\` `@bob`"], ["@bob"]),
    # 4.5 Fenced code blocks interrupt a paragraph: the span cannot reach into the fence.
    ("a `x\n```\n@bob\n```", ["a \\`x", "```", "@bob", "```"], []),
    # GFM tables: the row is split into cells at pipes before inline parsing.
    (
        "| a | b |\n|---|---|\n| `x | @bob` |",
        ["| a | b |", "|---|---|", "| \\`x | `@bob`\\` |"],
        ["@bob"],
    ),
    # 2.4 Backslash escapes: `\@` is a plain "@", and must not escape the added backtick.
    ("\\@bob and \\GH-4", ["`@bob` and \\\\`GH-4`"], ["@bob", "GH-4"]),
    # 6.1: backtick strings that touch merge into a longer one; an added span keeps apart.
    ("@bob`x`", ["`@bob` `x`"], ["@bob", "x"]),
    # 6.3 Links: a literal backtick in a destination is escaped, the same URL (2.4).
    ("x](b`c) @bob", ["x](b\\`c) `@bob`"], ["@bob"]),
]


@pytest.mark.parametrize(("text", "shown", "code"), CODE_ACROSS_LINES)
def test_code_spans_are_found_per_paragraph_as_commonmark_reads_them(
    text: str, shown: list[str], code: list[str]
) -> None:
    lines = neutral_markdown_lines(text)
    assert lines == shown
    tokens, _ = gfm_page.parse("\n".join(lines))
    assert gfm_page.live_text(tokens) == []
    spans = [c.content for t in tokens if t.type == "inline" for c in t.children or []]
    kinds = [c.type for t in tokens if t.type == "inline" for c in t.children or []]
    assert [s for s, k in zip(spans, kinds, strict=True) if k == "code_inline"] == code


def test_a_quoted_context_keeps_a_span_across_lines_whole() -> None:
    quoted = quote_markdown("see `a\n@bob` and @carol")
    assert quoted == "> see `a\n> @bob` and `@carol`"
    tokens, _ = gfm_page.parse(quoted)
    assert gfm_page.live_text(tokens) == []


def test_only_the_blocks_holding_a_backtick_are_parsed_for_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A context is mostly prose; markdown-it reads just the blocks where code can be,
    # each on its own, and finds the same spans as over the whole text.
    prose = "\n\n".join(
        f"#### comment by @a{i}\n\n> plain words, @b{i} and #{i}" for i in range(50)
    )
    text = f"{prose}\n\n> the `@c` span\n> and `a span\n> over lines @d`\n\n- a list `@e`\n  `@f`"
    parsed: list[str] = []
    real = render._PARSER.parse

    def recording(source: str, env: object = None) -> object:
        parsed.append(source)
        return real(source, env)

    monkeypatch.setattr(render._PARSER, "parse", recording)
    lines = neutral_markdown_lines(text)
    assert parsed == [
        "> the `@c` span\n> and `a span\n> over lines @d`",
        "- a list `@e`\n  `@f`",
    ]
    assert lines[-6:] == [
        "> the `@c` span",
        "> and `a span",
        "> over lines @d`",
        "",
        "- a list `@e`",
        "  `@f`",
    ]
    assert lines[12:15] == ["#### comment by `@a3`", "", "> plain words, `@b3` and `#3`"]


def test_a_fence_indented_by_a_tab_leaves_the_text_whole_to_markdown_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "\t```" does not close a fence (a tab is four columns): what follows is still code,
    # which only markdown-it, reading the whole text, tells.
    text = "```\ncode\n\t```\n\nstill `code` @bob\n```"
    parsed: list[str] = []
    real = render._PARSER.parse
    monkeypatch.setattr(
        render._PARSER, "parse", lambda source, env=None: parsed.append(source) or real(source, env)
    )
    neutral_markdown_lines(text)
    assert parsed == [text]
