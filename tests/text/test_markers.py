"""Hidden markers: they round-trip, cannot be broken by their data, and count only when trusted."""

from __future__ import annotations

import pytest

from tusk.text.markers import (
    backlink_footer,
    first_marker,
    is_trusted_author,
    job_marker,
    parse_markers,
    render_marker,
    strip_backlink_footer,
    trusted_job_id,
)


def test_marker_round_trips() -> None:
    data = {"kind": "history", "generation": 3, "note": "ünïcode"}
    body = f"text before\n{render_marker('state', data)}\ntext after"
    assert parse_markers(body, "state") == [data]
    assert parse_markers(body, "job") == []


@pytest.mark.parametrize(
    "value", ["--", "a-->b", "-->", "--!>", "<!-- x -->", "}} -->", ">", "-" * 7, "\n--\n"]
)
def test_data_cannot_end_the_comment_early(value: str) -> None:
    marker = render_marker("job", {"jobid": value})
    inner = marker[len("<!-- ") : -len(" -->")]
    assert "--" not in inner.replace("tusk:job", "") and ">" not in inner
    assert marker.count("-->") == 1 and marker.endswith(" -->")
    assert first_marker(f"a {marker} b", "job") == {"jobid": value}


def test_malformed_marker_is_ignored() -> None:
    body = '<!-- tusk:job {"jobid": } --> <!-- tusk:job ["not", "a", "dict"] -->'
    assert parse_markers(body, "job") == []
    assert first_marker(None, "job") is None


def test_markers_are_trusted_only_on_the_bots_content_or_in_the_control_repo() -> None:
    assert is_trusted_author(author="Tusk-Bot", bot="tusk-bot")
    assert not is_trusted_author(author="mallory", bot="tusk-bot")
    assert not is_trusted_author(author=None, bot="tusk-bot")
    assert not is_trusted_author(
        author="mallory", bot="tusk-bot", repo="alice/widgets", control_repo="alice/control"
    )
    assert is_trusted_author(
        author="alice", bot="tusk-bot", repo="Alice/Control", control_repo="alice/control"
    )


def test_forged_job_marker_by_another_author_is_ignored() -> None:
    body = f"please look\n{job_marker('alice-widgets-101')}"
    assert (
        trusted_job_id(
            body, author="mallory", bot="tusk-bot", repo="alice/widgets", control_repo="a/control"
        )
        is None
    )
    assert (
        trusted_job_id(
            body, author="tusk-bot", bot="tusk-bot", repo="alice/widgets", control_repo="a/control"
        )
        == "alice-widgets-101"
    )


def test_backlink_footer_links_the_log_and_says_how_to_send_the_bot_away() -> None:
    footer = backlink_footer(
        log_issue_url="https://github.com/a/c/issues/7",
        bot="tusk-bot",
        go_away_phrase="go away",
        jobid="alice-widgets-101",
    )
    assert "[run log](https://github.com/a/c/issues/7)" in footer
    assert "`@tusk-bot go away`" in footer
    # The only "@tusk-bot" sits in a code span, where GitHub notifies nobody, so
    # someone quoting the footer does not trigger the bot.
    assert footer.replace("`@tusk-bot go away`", "").count("@tusk-bot") == 0
    assert first_marker(footer, "backlink") == {
        "jobid": "alice-widgets-101",
        "log": "https://github.com/a/c/issues/7",
    }
    assert strip_backlink_footer("Fixed it." + footer) == "Fixed it."
