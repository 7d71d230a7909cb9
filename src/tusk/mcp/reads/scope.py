"""What the read tools may look at, and whose words they present as trusted. Pure.

The read token sees every repository the bot can see: private ones unrelated
to the task, and the control repository with other runs' log issues and the
memory. A read tool serves only the run's repositories:

* the trigger repository, its upstream (when it is a fork) and the bot's fork
  of it, whatever its name (GitHub says which repository a fork's parent is);
* the repositories of the issues the context links (a pull request's closing
  references);
* repositories that text written by an allowed user names: ``owner/name#12``
  or a link to ``https://github.com/owner/name`` in the mention or in an
  allowed user's comment. Text by anyone else cannot widen the scope;
* with ``agent.read_public: true``, also any public repository.

The control repository is never read through the read tools (the history and
memory tools are its only road), except the trigger's own thread when the bot
was mentioned there. Anything else is refused with ``OUT_OF_SCOPE``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from tusk.contracts.models import ContextDocument, is_valid_repo
from tusk.contracts.raw_context import Authored, RawContext
from tusk.mcp.gate.policy import Refused
from tusk.text.neutralise import Trust

Verdict = Literal["in", "public?", "out"]

# "owner/name#12": GitHub's own autolink to an issue or pull request elsewhere.
_CROSS_REFERENCE = re.compile(
    r"(?<![\w./-])([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9_.-]{1,100})#\d+"
)
_QUALIFIER = re.compile(r"^(-?)([A-Za-z_-]+):(.*)$")
# Qualifiers that name whose repositories a search runs over.
_OWNER_QUALIFIERS = frozenset({"org", "user", "owner"})


def _url_pattern(hosts: Iterable[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(host) for host in sorted(set(hosts)))
    return re.compile(
        rf"https?://(?:{alternatives})/([A-Za-z0-9](?:[A-Za-z0-9-]{{0,38}}))/([A-Za-z0-9_.-]{{1,100}})",
        re.IGNORECASE,
    )


def named_repositories(text: str, *, hosts: Iterable[str] = ("github.com",)) -> set[str]:
    """Repositories ``text`` names as ``owner/name#N`` or as a web link (lowercase)."""
    found = set()
    for owner, name in _CROSS_REFERENCE.findall(text):
        found.add(f"{owner}/{name}")
    for owner, name in _url_pattern(hosts).findall(text):
        found.add(f"{owner}/{name.removesuffix('.git')}")
    return {name.lower() for name in found if is_valid_repo(name)}


def _texts_by(raw: RawContext, allowed: frozenset[str]) -> Iterator[str]:
    """Bodies in ``raw`` written by one of ``allowed`` (lowercase logins)."""
    items: list[Authored] = [raw.thread, *raw.comments, *raw.reviews, *raw.review_comments]
    for item in items:
        if item.user is not None and item.user.login.lower() in allowed:
            yield item.body


def run_repositories(
    context: ContextDocument, *, allowed_users: Iterable[str], upstream: bool = True
) -> frozenset[str]:
    """The run's repositories (lowercase), from the context document; with ``upstream``,
    the trigger repository's parent when it is a fork."""
    raw = context.raw
    repos = {context.repo}  # the bot's fork: from the context, or asked (ReadScope)
    if upstream and raw.repository.parent is not None:
        repos.add(raw.repository.parent)
    if raw.bot.fork is not None and raw.bot.fork.full_name is not None:
        repos.add(raw.bot.fork.full_name)
    repos |= {linked.repo for linked in raw.linked_issues if linked.repo is not None}
    host = urlsplit(context.trigger.url).hostname or "github.com"
    hosts = {"github.com", host}
    allowed = frozenset(login.lower() for login in allowed_users)
    repos |= named_repositories(context.trigger.body, hosts=hosts)
    for text in _texts_by(raw, allowed):
        repos |= named_repositories(text, hosts=hosts)
    return frozenset(name.lower() for name in repos if is_valid_repo(name))


def write_repositories(
    context: ContextDocument, *, allowed_users: Iterable[str], configured: Iterable[str] = ()
) -> frozenset[str]:
    """Where the run's writes may go (lowercase): the trigger repository, the bot's fork of
    it, the repositories the task names or links (``run_repositories`` without the
    trigger's upstream) and those of ``agent.write_repos``."""
    named = run_repositories(context, allowed_users=allowed_users, upstream=False)
    return named | {repo.lower() for repo in configured if is_valid_repo(repo)}


@dataclass(frozen=True)
class ReadScope:
    """The run's repositories and its trust, fixed for the run."""

    trigger_repo: str
    control_repo: str
    repos: frozenset[str] = field(default_factory=frozenset)  # lowercase
    trigger_number: int | None = None
    read_public: bool = False
    trust: Trust = field(default_factory=lambda: Trust(frozenset()))
    bot: str = ""

    def may_be_bots_fork(self, repo: str) -> bool:
        """A repository of the bot's that may be its fork of one of the run's repositories
        under another name (GitHub names it ``name-1`` when ``name`` is taken)."""
        return bool(self.bot) and repo.split("/", 1)[0].lower() == self.bot.lower()

    def is_runs_fork(self, data: Mapping[str, Any]) -> bool:
        """Whether GitHub's ``data`` of a repository shows a fork of one of the run's."""
        parent = data.get("parent")
        name = parent.get("full_name") if isinstance(parent, Mapping) else None
        return bool(data.get("fork")) and isinstance(name, str) and name.lower() in self.repos

    def trust_in(self, repo: str) -> Trust:
        """Collaborators count only in the trigger repository; elsewhere allowed users do."""
        if repo.lower() == self.trigger_repo.lower():
            return self.trust
        return self.trust.strangers_only()

    def verdict(self, repo: str, *, number: int | None = None) -> Verdict:
        """ "in", "out", or "public?" (allowed only if GitHub says the repository is public)."""
        key = repo.lower()
        if key == self.control_repo.lower():
            here = key == self.trigger_repo.lower() and number == self.trigger_number
            return "in" if here and number is not None else "out"
        if key in self.repos:
            return "in"
        return "public?" if self.read_public else "out"

    def refusal(self, repo: str) -> Refused:
        if repo.lower() == self.control_repo.lower():
            return Refused(
                "OUT_OF_SCOPE",
                f"{repo} is the bot's control repository; it is read only through the history "
                "and memory tools, whose entries are already in your context.",
            )
        where = ", ".join(sorted(r for r in self.repos if r != self.control_repo.lower()))
        public = (
            " (public repositories are readable too, and this one is not public)"
            if self.read_public
            else ""
        )
        return Refused(
            "OUT_OF_SCOPE",
            f"{repo} is not one of this run's repositories{public}; read only {where}. If the "
            "task needs it, say so in your final message.",
        )

    def search_query(self, query: str) -> tuple[str, bool]:
        """The query to send and whether its results may come from any public repository.

        A search names its repositories with ``repo:``; each must be in scope.
        Without one it runs over public repositories (``is:public`` added) when
        those may be read, and is refused otherwise. Results are filtered again
        afterwards (``allows_result``): the query only narrows what GitHub does.
        """
        try:
            tokens = shlex.split(query)
        except ValueError:
            tokens = query.split()
        named, owners = [], []
        for token in tokens:
            found = _QUALIFIER.match(token)
            if not found or found.group(1):
                continue
            qualifier, value = found.group(2).lower(), found.group(3)
            if qualifier == "repo":
                named.append(value)
            elif qualifier in _OWNER_QUALIFIERS:
                owners.append(value)
        for repo in named:
            if not is_valid_repo(repo) or self.verdict(repo) == "out":
                raise self.refusal(repo)
        if named and not owners and all(self.verdict(r) == "in" for r in named):
            return query, False
        if self.read_public:
            return f"{query} is:public", True
        where = ", ".join(sorted(r for r in self.repos if r != self.control_repo.lower()))
        raise Refused(
            "OUT_OF_SCOPE",
            "a search must name its repositories with repo:owner/name, each one of this run's "
            f"repositories ({where}); org:, user: and owner: searches reach beyond them.",
        )

    def allows_result(self, repo: str, *, public_search: bool) -> bool:
        """Whether a search result from ``repo`` may be shown."""
        if repo.lower() == self.control_repo.lower():
            return False
        return repo.lower() in self.repos or public_search


def repo_of_api_url(url: Any) -> str | None:
    """``owner/name`` of a ``.../repos/owner/name`` API URL (a search item's repository_url)."""
    if not isinstance(url, str):
        return None
    parts = urlsplit(url).path.rstrip("/").split("/")
    if len(parts) >= 3 and parts[-3] == "repos":
        return f"{parts[-2]}/{parts[-1]}"
    return None
