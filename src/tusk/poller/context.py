"""Fetch the whole raw context of a thread (MISSION P6), in as few requests as GitHub allows.

One GraphQL document carries the thread (body, state, labels, assignees,
milestone, every comment; for PRs head/base, merged state, reviews with their
comments, and the linked issues with theirs; for discussions every comment
with its replies), the repository's default branch and branches, the bot's
repositories in bulk, and the bot's fork with its branches. Every connection
is followed to its end (``graphql_pages``). Two things come from REST: the PR
diff (GraphQL has none) and, only where the bot is an admin (nobody else may
read them), the default branch's protection rules; elsewhere the context says
they are not visible, at no cost.

The result, ``raw``, is laid out by ``raw_shape.to_raw`` (see there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from tusk.contracts.raw_context import RawContext, ThreadKind
from tusk.github.gateway import Gateway, GitHubError
from tusk.poller.graphql_pages import Conn, Locator, compact, flatten, follow, run_query
from tusk.poller.raw_shape import to_raw

DIFF_MEDIA_TYPE = "application/vnd.github.diff"
OPTIONAL_PATHS = frozenset({"botFork", "viewer", "repository.refs"})

# authorAssociation never authorizes anything (allowed_users does). It is the trust
# level's fallback when the permission endpoint is not readable (tusk.github.trust), and
# build-context reads it to tell collaborators' text from untrusted text.
ACTOR = "author { __typename login } authorAssociation"
# Which reactions the bot (the viewer) left on a node: its 👀 is the durable record that
# the node was dispatched (core.locate_triggers skips it). No connection: no points.
SEEN = "reactionGroups { content viewerHasReacted }"
COMMENT_FIELDS = f"databaseId url body createdAt updatedAt {ACTOR} {SEEN}"
LABELS = Conn("labels", "name")
ASSIGNEES = Conn("assignees", "login")
ISSUE_COMMENTS = Conn("comments", f"id {COMMENT_FIELDS}")
MILESTONE = "milestone { number title dueOn }"
ISSUE_SCALARS = (
    f"id number title body url state stateReason createdAt updatedAt lastEditedAt closedAt "
    f"{ACTOR} {SEEN} {MILESTONE}"
)
LINKED_ISSUES = Conn(
    "closingIssuesReferences",
    f"number title body url state createdAt updatedAt {ACTOR} repository {{ nameWithOwner }}",
    page=25,
    children=(ISSUE_COMMENTS, LABELS),
)
REVIEW_COMMENTS = Conn(
    "comments",
    f"{COMMENT_FIELDS} path line diffHunk replyTo {{ databaseId }}",
)
REVIEWS = Conn(
    "reviews",
    f"databaseId url body state submittedAt createdAt updatedAt {ACTOR} {SEEN}",
    children=(REVIEW_COMMENTS,),
)
PR_SCALARS = (
    f"{ISSUE_SCALARS.replace('stateReason ', '')} isDraft merged mergedAt mergeable "
    "headRefName headRefOid baseRefName baseRefOid "
    "headRepository { nameWithOwner } baseRepository { nameWithOwner }"
)
REPLIES = Conn("replies", f"id {COMMENT_FIELDS}")
DISCUSSION_COMMENTS = Conn("comments", f"id {COMMENT_FIELDS}", children=(REPLIES,))
DISCUSSION_SCALARS = (
    f"id number title body url closed stateReason isAnswered createdAt updatedAt lastEditedAt "
    f"{ACTOR} {SEEN} "
    "category { name }"
)
BRANCHES = Conn(
    "refs",
    "name target { ... on Commit { oid committedDate messageHeadline } }",
    args='refPrefix: "refs/heads/"',
)
REPO_META = (
    "nameWithOwner description isPrivate isFork url pushedAt updatedAt stargazerCount "
    "defaultBranchRef { name } parent { nameWithOwner }"
)
BOT_REPOS = Conn("repositories", REPO_META, args="ownerAffiliations: [OWNER]")

THREAD_CONNS: dict[str, tuple[Conn, ...]] = {
    "Issue": (ISSUE_COMMENTS, LABELS, ASSIGNEES),
    "PullRequest": (ISSUE_COMMENTS, LABELS, ASSIGNEES, REVIEWS, LINKED_ISSUES),
    "Discussion": (DISCUSSION_COMMENTS, LABELS),
}


class ThreadGone(LookupError):
    """The thread's issue, pull request or discussion no longer exists (deleted or moved).

    Its notification can carry no work; left unread it would fail every poll forever."""


def _thread_not_found(error: GitHubError) -> bool:
    """Only the thread itself answered NOT_FOUND (the repository and token are fine)."""
    return bool(error.errors) and all(
        isinstance(item, dict)
        and item.get("type") == "NOT_FOUND"
        and [str(part) for part in item.get("path") or []] == ["repository", "thread"]
        for item in error.errors
    )


@dataclass(frozen=True)
class ThreadRef:
    """Which thread to fetch: ``number`` None finds a discussion by ``title``."""

    repo: str
    kind: ThreadKind
    number: int | None
    title: str = ""


@dataclass
class Fetched:
    raw: RawContext
    requests: int


def _thread_selection(kind: ThreadKind) -> tuple[str, str, tuple[Conn, ...]]:
    """(field with arguments, selection, connections) of the thread inside ``repository``."""
    if kind == "discussion":
        conns = THREAD_CONNS["Discussion"]
        inner = DISCUSSION_SCALARS + " " + " ".join(c.render() for c in conns)
        return "discussion(number: $number)", inner, conns
    type_name = "PullRequest" if kind == "pull_request" else "Issue"
    scalars = PR_SCALARS if kind == "pull_request" else ISSUE_SCALARS
    conns = THREAD_CONNS[type_name]
    inner = f"... on {type_name} {{ {scalars} {' '.join(c.render() for c in conns)} }}"
    return "issueOrPullRequest(number: $number)", f"__typename {inner}", conns


def build_main_query(kind: ThreadKind, *, latest_discussion: bool = False) -> str:
    """The first request: the thread, the repository and the bot's side of it.

    ``latest_discussion``: a discussion notification names no number, only a
    title. The query then takes the most recently updated discussion whole
    (almost always the one that notified) plus the recent titles, so the
    usual case still costs one request.
    """
    thread_field, thread_inner, _ = _thread_selection(kind)
    number = "$number: Int!, "
    thread = f"thread: {thread_field} {{ {thread_inner} }}"
    if latest_discussion:
        number = ""
        order = "orderBy: {field: UPDATED_AT, direction: DESC}"
        thread = (
            f"latest: discussions(first: 1, {order}) {{ nodes {{ {thread_inner} }} }} "
            f"recent: discussions(first: 100, {order}) {{ nodes {{ number title }} }}"
        )
    return compact(
        f"""
        query($owner: String!, $name: String!, {number}$bot: String!) {{
          repository(owner: $owner, name: $name) {{
            id {REPO_META} viewerPermission {BRANCHES.render()}
            {thread}
          }}
          botFork: repository(owner: $bot, name: $name) {{ id {REPO_META} {BRANCHES.render()} }}
          viewer {{ id login {BOT_REPOS.render()} }}
        }}
        """
    )


def _first_page(
    gateway: Gateway, ref: ThreadRef, *, bot: str
) -> tuple[int, dict[str, Any], list[str], int]:
    """(number, data with ``repository.thread``, notes, requests spent)."""
    owner, name = ref.repo.split("/", 1)
    variables: dict[str, Any] = {"owner": owner, "name": name, "bot": bot}
    if ref.number is None:
        query = build_main_query(ref.kind, latest_discussion=True)
        data, notes = run_query(gateway, query, variables, optional=OPTIONAL_PATHS)
        repository = data.get("repository") or {}
        latest = [n for n in (repository.get("latest") or {}).get("nodes") or [] if n]
        if latest and latest[0].get("title") == ref.title:
            repository["thread"] = latest[0]
            return int(latest[0]["number"]), data, notes, 1
        recent = (repository.get("recent") or {}).get("nodes") or []
        numbers = [int(n["number"]) for n in recent if n and n.get("title") == ref.title]
        if not numbers:
            raise LookupError(f"no recent discussion titled {ref.title!r} in {ref.repo}")
        number, spent = numbers[0], 1
    else:
        number, spent = ref.number, 0
    query = build_main_query(ref.kind)
    try:
        data, notes = run_query(
            gateway, query, {**variables, "number": number}, optional=OPTIONAL_PATHS
        )
    except GitHubError as error:
        if _thread_not_found(error):
            raise ThreadGone(f"{ref.repo} #{number} no longer exists ({error})") from error
        raise
    return number, data, notes, spent + 1


def fetch_context(gateway: Gateway, ref: ThreadRef, *, bot: str) -> Fetched:
    """Everything P6 lists for ``ref``, each list complete."""
    number, data, notes, requests = _first_page(gateway, ref, bot=bot)
    owner, name = ref.repo.split("/", 1)
    repository = data.get("repository") or {}
    thread = repository.get("thread")
    if not thread:
        raise LookupError(f"{ref.repo} #{number} is not visible to the bot")
    thread_field, _, thread_conns = _thread_selection(ref.kind)
    thread_type = {"issue": "Issue", "pull_request": "PullRequest", "discussion": "Discussion"}
    repo_locator = Locator(
        open="repository(owner: $owner, name: $name) {",
        close="}",
        declarations={"owner": "String!", "name": "String!"},
        values={"owner": owner, "name": name},
    )
    thread_locator = Locator(
        open=(
            f"repository(owner: $owner, name: $name) {{ {thread_field} {{"
            + ("" if ref.kind == "discussion" else f" ... on {thread_type[ref.kind]} {{")
        ),
        close="} }" if ref.kind == "discussion" else "} } }",
        declarations={"owner": "String!", "name": "String!", "number": "Int!"},
        values={"owner": owner, "name": name, "number": number},
    )
    pending = flatten(thread, thread_conns, thread_locator)
    pending += flatten(repository, (BRANCHES,), repo_locator)
    fork = data.get("botFork")
    if not is_fork_of(fork, ref.repo):
        fork = None  # bot/<name> is another repository; the fork may have another name
    if fork:
        pending += flatten(fork, (BRANCHES,), _repo_locator(str(fork["nameWithOwner"])))
    viewer = data.get("viewer") or {}
    pending += flatten(
        viewer,
        (BOT_REPOS,),
        Locator(open="viewer {", close="}"),
    )
    more = follow(gateway, pending, optional=frozenset())
    requests += more.requests
    notes += more.notes
    if fork is None:
        named = fork_in(viewer.get(BOT_REPOS.name) or [], ref.repo)
        if named is not None:
            fork, spent = fetch_fork(gateway, named)
            requests += spent
    default_branch = (repository.get("defaultBranchRef") or {}).get("name")
    if repository.get("viewerPermission") == "ADMIN" and default_branch:
        protection = fetch_protection(gateway, ref.repo, default_branch)
        requests += 1
    else:
        protection = protection_not_visible(default_branch, repository.get("viewerPermission"))
    diff = None
    if ref.kind == "pull_request":
        diff = fetch_diff(gateway, ref.repo, number, notes)
        requests += 1
    raw = to_raw(
        kind=ref.kind,
        repo=ref.repo,
        repository=repository,
        thread=thread,
        fork=fork,
        viewer=viewer,
        diff=diff,
        protection=protection,
        notes=notes,
    )
    return Fetched(raw=raw, requests=requests)


def _repo_locator(full_name: str) -> Locator:
    owner, name = full_name.split("/", 1)
    return Locator(
        open="repository(owner: $owner, name: $name) {",
        close="}",
        declarations={"owner": "String!", "name": "String!"},
        values={"owner": owner, "name": name},
    )


def is_fork_of(node: dict[str, Any] | None, upstream: str) -> bool:
    parent = ((node or {}).get("parent") or {}).get("nameWithOwner") or ""
    return bool(node and node.get("isFork")) and parent.lower() == upstream.lower()


def fork_in(repositories: list[dict[str, Any]], upstream: str) -> str | None:
    """The bot's fork of ``upstream`` among its own repositories, found by its parent:
    GitHub names a fork ``name-1`` when the bot already owns a ``name``
    (octokit/octokit.js#483), and forks can be renamed."""
    for node in repositories:
        if is_fork_of(node, upstream):
            return str(node["nameWithOwner"])
    return None


FORK_QUERY = compact(
    f"""
    query($owner: String!, $name: String!) {{
      repository(owner: $owner, name: $name) {{ id {REPO_META} {BRANCHES.render()} }}
    }}
    """
)


def fetch_fork(gateway: Gateway, full_name: str) -> tuple[dict[str, Any] | None, int]:
    """The fork with all its branches, and the requests that took (it may be gone by now)."""
    owner, name = full_name.split("/", 1)
    data, _ = run_query(
        gateway, FORK_QUERY, {"owner": owner, "name": name}, optional=frozenset({"repository"})
    )
    fork = data.get("repository")
    if not fork:
        return None, 1
    more = follow(
        gateway, flatten(fork, (BRANCHES,), _repo_locator(full_name)), optional=frozenset()
    )
    return fork, 1 + more.requests


def fetch_diff(gateway: Gateway, repo: str, number: int, notes: list[str]) -> str | None:
    """The PR's full diff. GitHub refuses a diff past its size limits with 406; the
    context then says so instead of the thread failing on every poll."""
    try:
        return gateway.get_text(f"/repos/{repo}/pulls/{number}", accept=DIFF_MEDIA_TYPE)
    except GitHubError as error:
        if error.status != 406:
            raise
        notes.append(
            f"the diff of {repo}#{number} is too large for GitHub to serve ({error}); "
            "read the changed files from the branch instead"
        )
        return None


def protection_not_visible(branch: str | None, permission: Any) -> dict[str, Any]:
    """Only admins may read protection rules: without admin rights, say so and spend nothing."""
    note = (
        "the repository has no default branch"
        if not branch
        else f"the protection rules of {branch} are not visible to the bot: reading them "
        f"needs admin rights and its permission here is {str(permission or 'unknown').lower()}"
    )
    return {"branch": branch, "visible": False, "protected": None, "rules": None, "note": note}


def fetch_protection(gateway: Gateway, repo: str, branch: str) -> dict[str, Any]:
    """The branch's protection rules (the bot is an admin here), or why they are not visible."""
    try:
        rules = gateway.get(f"/repos/{repo}/branches/{quote(branch, safe='')}/protection")
    except GitHubError as error:
        if error.status == 404 and "not protected" in error.github_message.lower():
            return {
                "branch": branch,
                "visible": True,
                "protected": False,
                "rules": None,
                "note": "",
            }
        if error.status in (403, 404):
            return {
                "branch": branch,
                "visible": False,
                "protected": None,
                "rules": None,
                "note": f"the protection of {branch} is not visible to the bot "
                f"(GitHub answered {error.status}; reading it needs admin rights)",
            }
        raise
    return {"branch": branch, "visible": True, "protected": True, "rules": rules, "note": ""}
