"""A generated corpus of hostile bodies, judged by an independent reading of cmark-gfm's
rendering (``github_view``): whatever the policy lets through notifies at most five
people and never the bot, shows no planted secret, and shows the run's footer."""

from __future__ import annotations

import random

from tests.mcp import github_view
from tusk.contracts.models import PermissionConfig
from tusk.mcp.gate import policy
from tusk.mcp.gate.policy import PolicyConfig, Refused

BOT = "tusk-bot"
LOG = "https://github.com/alice/tusk-control/issues/77"
SECRET = "sk-ant-api03-" + "Q7x2Lm9Zp4Rt8Vb1Nc6Yd3Ke"
TOKEN = "agent-token-4f1c9e2b7d6a"
BODIES = 3000

AT = ["@", "&#64;", "&#064;", "&#x40;", "&#X40;", "&commat;", "&#64"]
SPLITS = ["", "<b></b>", "<!-- -->", "**", "\u200b", "<span>", "`"]
PIECES = [
    "word",
    "text.",
    "3\\.",
    "_",
    "*",
    "`",
    "``",
    "```",
    "~~~",
    "\n```\n",
    "\n~~~~\n",
    "> ",
    "\n> ",
    "<!--",
    "-->",
    "<details>",
    "</details>",
    "<summary>s</summary>",
    "<code>",
    "</code>",
    "<pre>",
    "</pre>",
    "<a href='x'>",
    "</a>",
    "[",
    "](http://x)",
    "<div hidden>",
    "</div>",
    "\n\n",
    "\n",
    "    ",
    "- ",
    "1. ",
    "| a | b |\n|---|---|\n| ",
    "<sub>",
    "\\",
    "<textarea>",
    "<!-- x --> <!--",
    "&amp;",
    "<",
    ">",
    "snake_",
    "e-mail@",
    "/",
]


def mention(rng: random.Random) -> str:
    login = rng.choice([f"u{rng.randrange(9)}", BOT, BOT.upper(), "org/team"])
    at = rng.choice(AT)
    if rng.random() < 0.2:  # split inside the login
        cut = rng.randrange(1, len(login))
        return at + login[:cut] + rng.choice(SPLITS) + login[cut:]
    return at + login


def secret(rng: random.Random) -> str:
    value = rng.choice([SECRET, TOKEN])
    cut = rng.randrange(1, len(value))
    how = rng.random()
    if how < 0.4:
        return value[:cut] + rng.choice(SPLITS) + value[cut:]
    if how < 0.6:  # an entity for one character
        return value[:cut] + f"&#{ord(value[cut])};" + value[cut + 1 :]
    return value


def body(rng: random.Random) -> tuple[str, bool]:
    parts, planted = [], False
    for _ in range(rng.randrange(3, 25)):
        roll = rng.random()
        if roll < 0.35:
            parts.append(mention(rng))
        elif roll < 0.4:
            parts.append(secret(rng))
            planted = True
        else:
            parts.append(rng.choice(PIECES))
        parts.append(rng.choice([" ", "", "\n", " "]))
    return "".join(parts), planted


def config() -> PolicyConfig:
    return PolicyConfig(
        bot=BOT,
        jobid="job-1",
        control_repo="alice/tusk-control",
        trigger_repo="alice/widgets",
        trigger_number=1,
        log_issue_url=LOG,
        permissions=PermissionConfig(),
    )


def test_no_generated_body_gets_past_the_policy_to_notify_leak_or_hide() -> None:
    rng = random.Random(23)
    cfg = config()
    refused: dict[str, int] = {}
    leaks, loud, hidden, self_mentions, planted_posts = [], [], [], [], 0
    for _ in range(BODIES):
        text, planted = body(rng)
        try:
            posted = policy.prepare_body(text, cfg, secrets=[TOKEN])
        except Refused as refusal:
            refused[refusal.code] = refused.get(refusal.code, 0) + 1
            continue
        planted_posts += planted
        shown = github_view.shown_text(posted)
        people = github_view.notified(posted)
        if any(secret in view for secret in (SECRET, TOKEN) for view in (shown, posted)):
            leaks.append(text)
        if BOT in people:
            self_mentions.append(text)
        if len(people) > cfg.mentions_per_post:
            loud.append(text)
        if not github_view.shows_footer(posted, bot=BOT, log_url=LOG):
            hidden.append(text)
    assert (leaks, self_mentions, loud, hidden) == ([], [], [], [])
    # The corpus reaches every refusal and still lets most bodies through: a policy that
    # refused everything would pass the checks above.
    posted_count = BODIES - sum(refused.values())
    assert {"SECRET_IN_BODY", "LIMIT_EXCEEDED"} <= refused.keys(), refused
    assert posted_count > BODIES // 4, refused
    print(
        f"corpus: {posted_count} posted, refused {refused}, {planted_posts} posted with a "
        "planted secret that does not show"
    )


def test_what_the_write_up_quotes_notifies_nobody() -> None:
    """The write-up quotes text from GitHub (the log issue, the summary): hostile markdown
    comes out notifying nobody, as GitHub renders it."""
    from tusk.text import render

    rng = random.Random(29)
    loud = []
    for _ in range(BODIES // 2):
        text, _planted = body(rng)
        for quote in (render.quote_markdown, render.quote_block, render.neutral_line):
            people = github_view.notified(quote(text))
            if people:
                loud.append((quote.__name__, text, people))
    assert loud == []
