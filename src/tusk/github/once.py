"""Creates that happen once although GitHub's answer got lost (ENGINEERING §2).

Every create Tusk sends carries a run-unique nonce in its hidden marker. When
the answer does not prove that the create failed (a 5xx, a timeout, a reset
connection: ``GitHubError.may_have_landed``), the create may exist, so it is
looked for by its nonce before anything is decided. Listings can lag a
write, so the look is repeated with growing pauses; only when it still finds
nothing is the create sent again, with the same nonce, so that a copy which
shows up late is recognised as the same create by whoever reads it.

``create_once`` is the loop; the ``find_*`` helpers are the look-ups Tusk
needs (a comment on an issue, an issue in a repository), each trusting only
content the bot wrote; ``post_marked_comment`` is the rule for the commonest
create, a comment carrying the bot's marker: looked up by its nonce, posted
without repeat, confirmed by GitHub's answer or by finding it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from tusk.github.gateway import Gateway, GitHubError
from tusk.text.markers import MarkerKind, first_marker

T = TypeVar("T")


def new_nonce() -> str:
    """A run-unique nonce for one create (64 random bits, hex)."""
    return secrets.token_hex(8)


@dataclass(frozen=True)
class Patience:
    """How hard to look for a create whose answer was lost, and how often to send it."""

    looks: int = 3  # look-ups after each uncertain answer
    first_pause: float = 1.0  # seconds before the second look; doubles after each
    sends: int = 3  # the create is sent at most this many times


DEFAULT_PATIENCE = Patience()


class NotConfirmed(GitHubError):
    """Every attempt at a create ended without an answer, and it was not found either."""


def create_once(
    send: Callable[[], T],
    find: Callable[[], T | None],
    *,
    sleep: Callable[[float], None],
    patience: Patience = DEFAULT_PATIENCE,
    what: str = "the create",
) -> T:
    """Send a create, and after any uncertain answer look for it before sending again.

    ``send`` performs the request without retrying blindly (``may_repeat=False``)
    and returns what was created; ``find`` looks for it by its nonce and returns
    it, or None. A definite failure (a 4xx) is raised at once. After
    ``patience.sends`` uncertain answers with nothing found, ``NotConfirmed`` is
    raised: the create may still exist, and whoever reads it later can tell it
    by its nonce.
    """
    last: GitHubError | None = None
    for _ in range(max(1, patience.sends)):
        try:
            return send()
        except GitHubError as error:
            if not error.may_have_landed:
                raise
            last = error
        found = look(find, sleep=sleep, patience=patience)
        if found is not None:
            return found
    assert last is not None
    raise NotConfirmed(
        f"{what} was sent {patience.sends} time(s) and GitHub never confirmed it; it was not "
        f"found by its nonce either ({last.title})",
        status=last.status,
        method=last.method,
        path=last.path,
        hint="It may still appear; running the step again finds it by its nonce instead of "
        "creating it twice",
        token=last.token,
        cause=last.cause,
        may_have_landed=True,
    )


def look(
    find: Callable[[], T | None], *, sleep: Callable[[float], None], patience: Patience
) -> T | None:
    """``find()`` up to ``patience.looks`` times, pausing longer each time (listing lag)."""
    pause = patience.first_pause
    for attempt in range(max(1, patience.looks)):
        if attempt:
            sleep(pause)
            pause *= 2
        try:
            found = find()
        except GitHubError as error:
            if not error.is_outage:
                raise
            found = None  # GitHub is still failing: look again after the pause
        if found is not None:
            return found
    return None


# --------------------------------------------------------------------------- look-ups


def has_nonce(
    item: dict[str, Any], *, kind: MarkerKind, nonce: str, bot: str, key: str = "nonce"
) -> bool:
    """Whether ``item`` (an issue or comment) is the bot's and carries ``nonce``."""
    author = str((item.get("user") or {}).get("login") or "")
    if author.lower() != bot.lower():
        return False
    marker = first_marker(item.get("body"), kind)
    return marker is not None and marker.get(key) == nonce


def newest_first(gateway: Gateway, path: str, *, per_page: int = 100) -> Iterator[dict[str, Any]]:
    """Items of a list endpoint sorted oldest first (issue comments), newest first.

    Page 1 tells (``Link: rel="last"``) how many pages there are; the pages are
    then read from the last back. An item posted while we read may push one onto
    the next page, hence the dedup by id.
    """
    first = gateway.request("GET", path, params={"per_page": per_page, "page": 1})
    links = first.links
    pages: Iterable[list[dict[str, Any]]]
    if "last" in links:
        last = _page_number(links["last"]) or 1
        pages = _chain(
            (
                gateway.get(path, params={"per_page": per_page, "page": page})
                for page in range(last, 1, -1)
            ),
            first.body or [],
        )
    elif "next" in links:  # no rel="last": walk forward once, then replay backwards
        pages = [list(gateway.paginate(path, per_page=per_page))]
    else:
        pages = [first.body or []]
    seen: set[int] = set()
    for items in pages:
        for item in reversed(items):
            if item["id"] not in seen:
                seen.add(item["id"])
                yield item


def _chain(
    pages: Iterable[list[dict[str, Any]]], first: list[dict[str, Any]]
) -> Iterator[list[dict[str, Any]]]:
    yield from pages
    yield first


def _page_number(url: str | None) -> int | None:
    if not url:
        return None
    values = parse_qs(urlsplit(url).query).get("page")
    try:
        return int(values[0]) if values else None
    except ValueError:
        return None


def find_comment(
    gateway: Gateway,
    repo: str,
    number: int,
    *,
    kind: MarkerKind,
    nonce: str,
    bot: str,
    key: str = "nonce",
    max_items: int = 300,
) -> dict[str, Any] | None:
    """The bot's comment on ``repo#number`` whose ``kind`` marker has ``key`` = ``nonce``.

    Comments are read newest first: a create we just sent is among the last, so
    only the newest ``max_items`` are looked at (state issues hold thousands).
    """
    path = f"/repos/{repo}/issues/{number}/comments"
    for index, comment in enumerate(newest_first(gateway, path)):
        if index >= max_items:
            return None
        if has_nonce(comment, kind=kind, nonce=nonce, bot=bot, key=key):
            return comment
    return None


def find_issues(
    gateway: Gateway, repo: str, *, kind: MarkerKind, nonce: str, bot: str, pages: int = 1
) -> list[dict[str, Any]]:
    """The bot's issues in ``repo`` carrying ``nonce``, lowest number first (newest pages only).

    Issue listings can lag a create; callers look again (``look``) before
    concluding that an issue does not exist.
    """
    found = []
    params = {"creator": bot, "state": "all", "sort": "created", "direction": "desc"}
    for index, item in enumerate(
        gateway.paginate(f"/repos/{repo}/issues", params=params, per_page=100)
    ):
        if index >= 100 * pages:
            break
        if item.get("pull_request") is None and has_nonce(item, kind=kind, nonce=nonce, bot=bot):
            found.append(item)
    return sorted(found, key=lambda item: int(item["number"]))


def post_marked_comment(
    gateway: Gateway,
    repo: str,
    number: int,
    body: str,
    *,
    kind: MarkerKind,
    nonce: str,
    bot: str,
    key: str = "nonce",
    look_first: bool = False,
    patience: Patience = DEFAULT_PATIENCE,
    what: str = "the comment",
) -> dict[str, Any]:
    """The bot's comment ``body`` on ``repo#number``, whose ``kind`` marker carries
    ``key`` = ``nonce``, made once: never sent again blindly, looked for by its nonce after
    an answer that was lost, and returned as GitHub answered it or as it was found.
    ``look_first``: an earlier run may have posted it already (a rerun), so look before
    the first send too."""

    def find() -> dict[str, Any] | None:
        return find_comment(gateway, repo, number, kind=kind, nonce=nonce, bot=bot, key=key)

    if look_first and (found := find()) is not None:
        return found
    path = f"/repos/{repo}/issues/{number}/comments"

    def send() -> dict[str, Any]:
        return dict(gateway.post(path, json={"body": body}, may_repeat=False).body)

    return create_once(send, find, sleep=gateway.sleep, patience=patience, what=what)
