"""Every permission marker README and docs/permission-marker.md show means what they say."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from tusk.contracts.config import Agent, Limits
from tusk.contracts.models import PermissionConfig
from tusk.poller.permissions import effective_permissions

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/permission-marker.md")
# The built-in defaults the docs speak of: a $5 budget, 60 turns, 30 minutes.
DEFAULTS = PermissionConfig(
    budget_usd=Agent.model_fields["max_budget_usd"].default,
    max_turns=Limits().max_turns,
    run_minutes=Limits().run_minutes,
)
HEADLINE = "@tusk-bot [permissions: no-issue, comment-limit=1, pr-limit=1] fix the typo"
# What each documented example must do: "narrows" (parses, no error) or "fails closed".
EXPECTED = {
    HEADLINE: "narrows",
    "［permissions： no-pr］": "narrows",
    "［permissions： no-pr，issue-limit＝１］": "narrows",
    "[permissions: no-pr,issue-limit=1]": "narrows",
    "[permissions: approve]": "narrows",  # approval mode: narrows by staging every write
    "[permissions: budget=0.5, turns=10, minutes=5]": "narrows",  # the run's own limits
    "[permissions: budget=500]": "fails closed",  # above the configured $5
    "[permissions: read-only]": "narrows",  # a resumed run under a narrower marker
    "$ tusk permissions parse '@tusk-bot [permissions: no-pr, comment-limit=1] fix it'": "narrows",
    "【permissions: no-pr】": "fails closed",
    "【permissions: ...】": "fails closed",
    "[permisions: no-pr]": "fails closed",
    "(permissions: no-pr)": "fails closed",
    "[permissions no-pr]": "fails closed",
    "[perms: no-pr]": "fails closed",
    "permissions: no-pr": "fails closed",
    "[permission:": "fails closed",
    "[permissions: ...]": "fails closed",
    "permissions:": "not a marker",  # a word of the prose, not an example
}


def documented_examples() -> list[tuple[str, str]]:
    """(file, text) of every code span or code-block line that writes a marker."""
    found = []
    for name in DOCS:
        text = (ROOT / name).read_text(encoding="utf-8")
        blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)
        lines = [line for block in blocks for line in block.splitlines()]
        prose = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
        spans = re.findall(r"(?<!`)`([^`\n]+)`(?!`)", prose)
        for snippet in lines + spans:
            folded = unicodedata.normalize("NFKC", snippet).lower()
            if folded.lstrip().startswith(('"', "marker ")):
                continue  # the grammar's own first line and JSON output, not examples
            if re.search(r"[\[({【]\s*perm", folded) or folded.startswith("permissions:"):
                found.append((name, snippet.strip()))
    return found


def test_every_documented_example_has_an_expectation() -> None:
    missing = sorted({text for _, text in documented_examples()} - set(EXPECTED))
    assert not missing, f"add what these documented markers must do to EXPECTED: {missing}"
    assert any(text == HEADLINE for _, text in documented_examples())


@pytest.mark.parametrize(("where", "text"), documented_examples())
def test_a_documented_marker_does_what_the_docs_say(where: str, text: str) -> None:
    result = effective_permissions(DEFAULTS, "@tusk-bot " + text)
    expected = EXPECTED[text]
    if expected == "narrows":
        assert result.error is None, f"{where}: {text!r}: {result.error}"
        assert result.marker is not None
    elif expected == "fails closed":
        assert result.error is not None, f"{where}: {text!r} was accepted"
        assert result.operations == ("comment",) and result.only_this_thread
    else:
        assert result.error is None and result.marker is None


def test_the_headline_example_can_open_the_fix_pull_request() -> None:
    result = effective_permissions(PermissionConfig(), HEADLINE)
    assert result.error is None
    assert result.allows("pull_request") and result.prs_per_repo == 1
    assert result.allows("push") and result.comments_per_thread == 1
    assert not result.allows("issue")
