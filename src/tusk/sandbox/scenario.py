"""Scenarios: the YAML/JSON documents that seed the local GitHub.

``build_world`` checks a scenario completely before building anything:
unknown keys, wrong types and dangling references (an author, collaborator,
token user or fork parent that does not exist) are refused with the key path
(``repos[0].issues[1].comments[0].author``). Content written by the scenario
behaves as if users had written it through the API, so @mentions in it leave
notifications. See ``sandbox/scenarios/README.md`` for the format.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tusk.sandbox.gitstore import CommitSpec, GitStore
from tusk.sandbox.secondary import Limits, SecondaryLimits
from tusk.sandbox.world import (
    PERMISSIONS,
    Artifact,
    Clock,
    Comment,
    Discussion,
    DiscussionComment,
    Issue,
    Label,
    PullInfo,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    Token,
    User,
    World,
    parse_time,
)

# YAML reads an unquoted timestamp as a datetime; both spellings are accepted.
TIME = (str, datetime)
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
ANY = object()

# Each shape: key -> expected type (a type, a tuple of types, a nested shape
# dict, or [shape] for a list of that shape). Keys ending in "!" are required.
COMMENT = {
    "author!": str,
    "body!": str,
    "id": int,
    "created_at": TIME,
    "updated_at": TIME,
    "reactions": dict,
}
REVIEW_COMMENT = {
    "author": str,
    "body!": str,
    "path!": str,
    "line": int,
    "side": str,
    "id": int,
    "created_at": TIME,
    "in_reply_to": int,
}
REVIEW = {
    "author!": str,
    "body": str,
    "state": str,
    "id": int,
    "submitted_at": TIME,
    "comments": [REVIEW_COMMENT],
}
ISSUE = {
    "number": int,
    "id": int,
    "author!": str,
    "title!": str,
    "body": (str, type(None)),
    "state": str,
    "state_reason": (str, type(None)),
    "labels": [str],
    "assignees": [str],
    "milestone": str,
    "locked": bool,
    "created_at": TIME,
    "comments": [COMMENT],
    "reactions": dict,
}
PULL = {
    **ISSUE,
    "head!": str,
    "base": str,
    "files": dict,
    "draft": bool,
    "merged": bool,
    "reviews": [REVIEW],
    "review_comments": [REVIEW_COMMENT],
}
DISCUSSION_REPLY = {"author!": str, "body!": str, "id": int, "created_at": TIME}
DISCUSSION_COMMENT = {**DISCUSSION_REPLY, "replies": [DISCUSSION_REPLY]}
DISCUSSION = {
    "number": int,
    "id": int,
    "author!": str,
    "title!": str,
    "body": str,
    "category": str,
    "closed": bool,
    "created_at": TIME,
    "comments": [DISCUSSION_COMMENT],
}
BRANCH = {"name!": str, "from": str, "files": dict, "message": str, "protected": (bool, dict)}
LABEL = {"name!": str, "color": str, "description": str}
ARTIFACT = {"name!": str, "files": dict, "run_id": int, "expired": bool}
WORKFLOW_RUN = {
    "workflow!": str,
    "created_at!": TIME,
    "event": str,
    "status": str,
    "conclusion": str,
}
REPO = {
    "name!": str,
    "id": int,
    "private": bool,
    "default_branch": str,
    "description": (str, type(None)),
    "collaborators": dict,
    "contributors": [str],  # logins with commits in it: author_association CONTRIBUTOR
    "fork_of": str,
    "archived": bool,
    "has_discussions": bool,
    "branches": [BRANCH],
    "files": dict,
    "labels": [(str, LABEL)],
    "issues": [ISSUE],
    "pulls": [PULL],
    "discussions": [DISCUSSION],
    "artifacts": [ARTIFACT],
    "workflow_runs": [WORKFLOW_RUN],
    "secrets": [str],  # names of the repository's Actions secrets
}
# ``members``: for a user of type Organization, the logins that belong to it.
USER = {"login!": str, "id": int, "type": str, "name": str, "email": str, "members": [str]}
TOKEN = {
    "user!": str,
    "scopes": [str],
    "read_only": bool,
    "repository": str,  # a workflow's GITHUB_TOKEN, for this repository only
    "permissions": dict,  # its `permissions:`, e.g. {contents: write}
}
SETTINGS = {
    "fork_ready_after_reads": int,
    "fork_git_ready_after_requests": int,
    "listing_lag_seconds": (int, float),
    "listing_lags_seconds": [(int, float)],
    "comment_listing_lag_seconds": (int, float),
    "mark_read_late_listings": int,
    "discussion_subject_url": bool,
    "fork_deletion_closes_pulls": bool,
    "secondary_limits": (bool, dict),
}
SCENARIO = {"now": TIME, "settings": SETTINGS, "users": [USER], "tokens": dict, "repos": [REPO]}


class ScenarioError(ValueError):
    """A scenario that cannot be loaded; the message lists every problem with its key path."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid scenario:\n" + "\n".join(f"- {p}" for p in problems))


def read_scenario_file(path: str | Path) -> dict[str, Any]:
    text = Path(path).read_text(encoding="utf-8")
    return parse_scenario_text(text)


def parse_scenario_text(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ScenarioError(["the scenario must be a mapping at the top level"])
    return data


# --------------------------------------------------------------------------- shape checks


def check_shape(value: Any, shape: Any, where: str, problems: list[str]) -> None:
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            problems.append(
                f"{where or 'scenario'}: expected a mapping, got {type(value).__name__}"
            )
            return
        keys = {k.rstrip("!"): k.endswith("!") for k in shape}
        for key in value:
            if key not in keys:
                problems.append(
                    f"{_join(where, key)}: unknown key (known: {', '.join(sorted(keys))})"
                )
        for key, required in keys.items():
            if required and key not in value:
                problems.append(f"{_join(where, key)}: required")
        for key, sub in shape.items():
            name = key.rstrip("!")
            if name in value:
                check_shape(value[name], sub, _join(where, name), problems)
        return
    if isinstance(shape, list):
        if not isinstance(value, list):
            problems.append(f"{where}: expected a list, got {type(value).__name__}")
            return
        for index, item in enumerate(value):
            check_shape(item, shape[0], f"{where}[{index}]", problems)
        return
    if shape is TIME and isinstance(value, str):
        try:
            parse_time(value)
        except ValueError:
            problems.append(f"{where}: {value!r} is not an ISO 8601 time")
        return
    if isinstance(shape, tuple):
        if any(isinstance(s, dict) for s in shape) and isinstance(value, dict):
            check_shape(value, next(s for s in shape if isinstance(s, dict)), where, problems)
            return
        if not isinstance(value, tuple(s for s in shape if isinstance(s, type))):
            problems.append(f"{where}: unexpected type {type(value).__name__}")
        return
    if shape is int and isinstance(value, bool):
        problems.append(f"{where}: expected an integer")
    elif not isinstance(value, shape):
        problems.append(f"{where}: expected {shape.__name__}, got {type(value).__name__}")


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


# --------------------------------------------------------------------------- references


@dataclass
class _Refs:
    users: set[str]
    repos: set[str]
    problems: list[str]

    def user(self, login: Any, where: str) -> None:
        if isinstance(login, str) and login.lower() not in self.users:
            self.problems.append(f"{where}: unknown user {login!r} (add it under users)")

    def repo(self, name: Any, where: str) -> None:
        if isinstance(name, str) and name.lower() not in self.repos:
            self.problems.append(f"{where}: unknown repository {name!r}")


def check_references(data: dict[str, Any]) -> list[str]:
    users = {u["login"].lower() for u in data.get("users", []) if isinstance(u.get("login"), str)}
    repos = {r["name"].lower() for r in data.get("repos", []) if isinstance(r.get("name"), str)}
    refs = _Refs(users, repos, [])
    for name, token in (data.get("tokens") or {}).items():
        if not isinstance(token, dict):
            refs.problems.append(f"tokens.{name}: expected a mapping")
            continue
        problems: list[str] = []
        check_shape(token, TOKEN, f"tokens.{name}", problems)
        refs.problems.extend(problems)
        refs.user(token.get("user"), f"tokens.{name}.user")
    seen_repos: set[str] = set()
    for r_index, repo in enumerate(data.get("repos", [])):
        where = f"repos[{r_index}]"
        name = repo.get("name", "")
        if name.count("/") != 1:
            refs.problems.append(f"{where}.name: expected owner/name, got {name!r}")
            continue
        if name.lower() in seen_repos:
            refs.problems.append(f"{where}.name: repository {name!r} is listed twice")
        seen_repos.add(name.lower())
        refs.user(name.split("/")[0], f"{where}.name (owner)")
        if "fork_of" in repo:
            refs.repo(repo["fork_of"], f"{where}.fork_of")
        for login, level in (repo.get("collaborators") or {}).items():
            refs.user(login, f"{where}.collaborators.{login}")
            if level not in PERMISSIONS[1:]:
                refs.problems.append(
                    f"{where}.collaborators.{login}: {level!r} is not one of {PERMISSIONS[1:]}"
                )
        branch_names = {b.get("name") for b in repo.get("branches", [])} | {
            repo.get("default_branch", "main")
        }
        for b_index, branch in enumerate(repo.get("branches", [])):
            if "from" in branch and branch["from"] not in branch_names:
                refs.problems.append(
                    f"{where}.branches[{b_index}].from: unknown branch {branch['from']!r}"
                )
        numbers: set[int] = set()
        for kind in ("issues", "pulls", "discussions"):
            for i_index, item in enumerate(repo.get(kind, [])):
                here = f"{where}.{kind}[{i_index}]"
                number = item.get("number")
                if number is not None and kind != "discussions":
                    if number in numbers:
                        refs.problems.append(f"{here}.number: #{number} is used twice")
                    numbers.add(number)
                _check_content_refs(refs, item, here)
                if kind == "pulls":
                    head = item.get("head", "")
                    if ":" in head:
                        owner = head.split(":", 1)[0]
                        candidates = [r for r in repos if r.split("/")[0] == owner.lower()]
                        if not candidates:
                            refs.problems.append(
                                f"{here}.head: no repository of {owner!r} to hold {head!r}"
                            )
                for key in ("state",):
                    if key in item and item[key] not in ("open", "closed"):
                        refs.problems.append(f"{here}.state: must be open or closed")
    return refs.problems


def _check_content_refs(refs: _Refs, item: dict[str, Any], where: str) -> None:
    refs.user(item.get("author"), f"{where}.author")
    for index, login in enumerate(item.get("assignees", [])):
        refs.user(login, f"{where}.assignees[{index}]")
    _check_reactions(refs, item.get("reactions"), f"{where}.reactions")
    for c_index, comment in enumerate(item.get("comments", [])):
        here = f"{where}.comments[{c_index}]"
        refs.user(comment.get("author"), f"{here}.author")
        _check_reactions(refs, comment.get("reactions"), f"{here}.reactions")
        for r_index, reply in enumerate(comment.get("replies", [])):
            refs.user(reply.get("author"), f"{here}.replies[{r_index}].author")
        for r_index, review_comment in enumerate(comment.get("comments", [])):
            refs.user(review_comment.get("author"), f"{here}.comments[{r_index}].author")
    for r_index, review in enumerate(item.get("reviews", [])):
        refs.user(review.get("author"), f"{where}.reviews[{r_index}].author")
    for r_index, comment in enumerate(item.get("review_comments", [])):
        refs.user(comment.get("author"), f"{where}.review_comments[{r_index}].author")


def _check_reactions(refs: _Refs, reactions: Any, where: str) -> None:
    for content, logins in (reactions or {}).items():
        if content not in REACTIONS:
            refs.problems.append(f"{where}.{content}: not one of {REACTIONS}")
        for index, login in enumerate(logins or []):
            refs.user(login, f"{where}.{content}[{index}]")


# --------------------------------------------------------------------------- building


def build_world(data: dict[str, Any], git: GitStore | None) -> World:
    """Check ``data`` and build the world it describes (git repositories included)."""
    problems: list[str] = []
    check_shape(data, SCENARIO, "", problems)
    problems += Limits.problems((data.get("settings") or {}).get("secondary_limits"))
    if not problems:
        problems = check_references(data)
    if problems:
        raise ScenarioError(problems)
    start = parse_time(data["now"]) if "now" in data else None
    world = World(clock=Clock(start), git=git)
    settings = data.get("settings") or {}
    world.fork_ready_after_reads = settings.get("fork_ready_after_reads", 0)
    world.fork_git_ready_after_requests = settings.get("fork_git_ready_after_requests", 0)
    world.listing_lag = float(settings.get("listing_lag_seconds", 0))
    world.listing_lags = [float(x) for x in settings.get("listing_lags_seconds", [])]
    world.comment_listing_lag = float(settings.get("comment_listing_lag_seconds", 0))
    world.mark_read_late_listings = int(settings.get("mark_read_late_listings", 0))
    world.fork_deletion_closes_pulls = bool(settings.get("fork_deletion_closes_pulls", True))
    world.discussion_subject_url = bool(settings.get("discussion_subject_url", True))
    world.secondary = SecondaryLimits(Limits.from_setting(settings.get("secondary_limits")))
    for spec in data.get("users", []):
        user = User(
            login=spec["login"],
            id=spec.get("id") or world.new_id(),
            type=spec.get("type", "Bot" if spec["login"].endswith("[bot]") else "User"),
            name=spec.get("name"),
            email=spec.get("email"),
            members=[str(m) for m in spec.get("members") or []],
        )
        world.users[user.login.lower()] = user
    for name, spec in (data.get("tokens") or {}).items():
        user = world.users[spec["user"].lower()]
        world.tokens[name] = Token(
            name=name,
            user=user.login,
            scopes=list(spec.get("scopes", [])),
            read_only=spec.get("read_only", False),
            repository=spec.get("repository"),
            permissions=dict(spec.get("permissions") or {}),
        )
    # Parents first, so forks can be cloned from them.
    ordered = sorted(data.get("repos", []), key=lambda r: 1 if "fork_of" in r else 0)
    for spec in ordered:
        _build_repo(world, spec)
    return world


def _user_login(world: World, login: str) -> str:
    return world.users[login.lower()].login


def _build_repo(world: World, spec: dict[str, Any]) -> None:
    owner, name = spec["name"].split("/")
    moment = world.clock.tick()
    repo = Repo(
        owner=_user_login(world, owner),
        name=name,
        id=spec.get("id") or world.new_id(),
        created_at=moment,
        updated_at=moment,
        pushed_at=moment,
        private=spec.get("private", False),
        default_branch=spec.get("default_branch", "main"),
        description=spec.get("description"),
        collaborators={
            _user_login(world, k): v for k, v in (spec.get("collaborators") or {}).items()
        },
        contributors=[str(login) for login in spec.get("contributors") or []],
        fork_of=None,
        archived=spec.get("archived", False),
        has_discussions=spec.get("has_discussions", True),
        secrets={name: moment for name in spec.get("secrets", [])},
    )
    if "fork_of" in spec:
        parent = world.repos[spec["fork_of"].lower()]
        repo.fork_of = parent.full_name
    world.add_repo(repo)
    for label in spec.get("labels", []):
        label = {"name": label} if isinstance(label, str) else label
        repo.labels[label["name"]] = Label(
            id=world.new_id(),
            name=label["name"],
            color=label.get("color", "ededed"),
            description=label.get("description"),
        )
    for branch in spec.get("branches", []):
        protected = branch.get("protected")
        if protected:
            repo.protected[branch["name"]] = protected if isinstance(protected, dict) else {}
    if world.git is not None:
        _build_git(world, repo, spec, moment)
    items = [("issues", i) for i in spec.get("issues", [])] + [
        ("pulls", p) for p in spec.get("pulls", [])
    ]
    for kind, item in items:
        _build_issue(world, repo, item, is_pull=kind == "pulls")
    for item in spec.get("discussions", []):
        _build_discussion(world, repo, item)
    for item in spec.get("workflow_runs", []):
        from tusk.sandbox.rest_runs import WorkflowRun

        repo.workflow_runs.append(
            WorkflowRun(
                id=world.new_id(),
                workflow=item["workflow"],
                created_at=_time(item, "created_at", world),
                event=item.get("event", "schedule"),
                status=item.get("status", "completed"),
                conclusion=item.get("conclusion", "success"),
            )
        )
    for item in spec.get("artifacts", []):
        from tusk.sandbox.artifacts import zip_files

        created = world.clock.tick()
        artifact = Artifact(
            id=world.new_id(),
            name=item["name"],
            data=zip_files({k: str(v) for k, v in (item.get("files") or {}).items()}),
            created_at=created,
            expires_at=created - timedelta(days=1)
            if item.get("expired")
            else created + timedelta(days=90),
            run_id=item.get("run_id", 1),
            head_branch=repo.default_branch,
        )
        repo.artifacts[artifact.id] = artifact


def _build_git(world: World, repo: Repo, spec: dict[str, Any], moment: datetime) -> None:
    owner = world.users[repo.owner.lower()]
    email = f"{owner.id}+{owner.login}@users.noreply.github.com"
    if repo.fork_of:
        world.git.fork(repo.fork_of, repo.full_name)
        commits: list[CommitSpec] = []
    else:
        commits = [
            CommitSpec(
                branch=repo.default_branch,
                parent=None,
                files={k: str(v) for k, v in (spec.get("files") or {}).items()},
                message="Initial commit",
                author=owner.login,
                email=email,
                when=moment,
            )
        ]
    known = (
        {b.name for b in world.git.branches(repo.fork_of)}
        if repo.fork_of
        else {repo.default_branch}
    )
    for branch in spec.get("branches", []):
        if branch["name"] in known and not branch.get("files"):
            continue
        commits.append(
            CommitSpec(
                branch=branch["name"],
                parent=branch.get(
                    "from", branch["name"] if branch["name"] in known else repo.default_branch
                ),
                files={
                    k: (None if v is None else str(v))
                    for k, v in (branch.get("files") or {}).items()
                },
                message=branch.get("message", f"Update {branch['name']}"),
                author=owner.login,
                email=email,
                when=world.clock.tick(),
            )
        )
        known.add(branch["name"])
    for pull in spec.get("pulls", []):
        head_owner, _, head_ref = pull["head"].rpartition(":")
        if pull.get("files") and not head_owner and head_ref not in known:
            commits.append(
                CommitSpec(
                    branch=head_ref,
                    parent=pull.get("base", repo.default_branch),
                    files={k: (None if v is None else str(v)) for k, v in pull["files"].items()},
                    message=pull["title"],
                    author=pull["author"],
                    email=f"{pull['author']}@users.noreply.github.com",
                    when=world.clock.tick(),
                )
            )
            known.add(head_ref)
    if repo.fork_of:
        world.git.append(repo.full_name, commits)
    else:
        world.git.create(repo.full_name, commits, repo.default_branch)


def _time(item: dict[str, Any], key: str, world: World) -> datetime:
    return parse_time(item[key]) if key in item else world.clock.tick()


def _reactions(world: World, spec: dict[str, Any] | None, moment: datetime) -> list[Reaction]:
    out = []
    for content, logins in (spec or {}).items():
        for login in logins:
            out.append(
                Reaction(
                    id=world.new_id(),
                    user=_user_login(world, login),
                    content=content,
                    created_at=moment,
                )
            )
    return out


def _build_issue(world: World, repo: Repo, item: dict[str, Any], *, is_pull: bool) -> None:
    number = item.get("number") or _next_free_number(repo)
    created = _time(item, "created_at", world)
    author = _user_login(world, item["author"])
    issue = Issue(
        number=number,
        id=item.get("id") or world.new_id(),
        author=author,
        title=item["title"],
        body=item.get("body"),
        created_at=created,
        updated_at=created,
        state=item.get("state", "open"),
        state_reason=item.get("state_reason"),
        closed_at=created if item.get("state") == "closed" else None,
        labels=list(item.get("labels", [])),
        assignees=[_user_login(world, a) for a in item.get("assignees", [])],
        milestone=item.get("milestone"),
        locked=item.get("locked", False),
        reactions=_reactions(world, item.get("reactions"), created),
    )
    world.ensure_labels(repo, issue.labels)
    if is_pull:
        head_owner, _, head_ref = item["head"].rpartition(":")
        head_repo = repo.full_name
        if head_owner:
            forks = [
                r
                for r in world.repos.values()
                if r.owner.lower() == head_owner.lower() and r.name == repo.name
            ]
            others = [r for r in world.repos.values() if r.owner.lower() == head_owner.lower()]
            head_repo = (forks or others)[0].full_name
        issue.pull = PullInfo(
            head_repo=head_repo,
            head_ref=head_ref,
            base_ref=item.get("base", repo.default_branch),
            draft=item.get("draft", False),
            merged=item.get("merged", False),
            merged_at=created if item.get("merged") else None,
        )
    repo.issues[number] = issue
    repo.next_number = max(repo.next_number, number + 1)
    issue.subscribers.add(author)
    world.record_activity(repo, issue, author, issue.body, created)
    for spec in item.get("comments", []):
        moment = _time(spec, "created_at", world)
        comment = Comment(
            id=spec.get("id") or world.new_id(),
            author=_user_login(world, spec["author"]),
            body=spec["body"],
            created_at=moment,
            updated_at=parse_time(spec["updated_at"]) if "updated_at" in spec else moment,
            reactions=_reactions(world, spec.get("reactions"), moment),
        )
        issue.comments.append(comment)
        issue.updated_at = max(issue.updated_at, comment.updated_at)
        world.record_activity(
            repo, issue, comment.author, comment.body, moment, ("issues", comment.id)
        )
    if issue.pull is not None:
        for spec in item.get("reviews", []):
            moment = _time(spec, "submitted_at", world)
            review = Review(
                id=spec.get("id") or world.new_id(),
                author=_user_login(world, spec["author"]),
                body=spec.get("body", ""),
                state=spec.get("state", "COMMENTED"),
                submitted_at=moment,
            )
            issue.pull.reviews.append(review)
            world.record_activity(repo, issue, review.author, review.body, moment)
            for c_spec in spec.get("comments", []):
                _add_review_comment(world, repo, issue, c_spec, review.id, review.author)
        for c_spec in item.get("review_comments", []):
            _add_review_comment(world, repo, issue, c_spec, None, c_spec.get("author"))


def _add_review_comment(
    world: World,
    repo: Repo,
    issue: Issue,
    spec: dict[str, Any],
    review_id: int | None,
    author: str | None,
) -> None:
    assert issue.pull is not None
    moment = _time(spec, "created_at", world)
    login = _user_login(world, spec.get("author") or author or issue.author)
    comment = ReviewComment(
        id=spec.get("id") or world.new_id(),
        review_id=review_id,
        author=login,
        body=spec["body"],
        path=spec["path"],
        line=spec.get("line"),
        side=spec.get("side", "RIGHT"),
        created_at=moment,
        updated_at=moment,
        in_reply_to=spec.get("in_reply_to"),
    )
    issue.pull.review_comments.append(comment)
    world.record_activity(repo, issue, login, comment.body, moment, ("pulls", comment.id))


def _next_free_number(repo: Repo) -> int:
    number = repo.next_number
    while number in repo.issues:
        number += 1
    return number


def _build_discussion(world: World, repo: Repo, item: dict[str, Any]) -> None:
    number = item.get("number") or _next_free_number(repo)
    created = _time(item, "created_at", world)
    author = _user_login(world, item["author"])
    discussion = Discussion(
        number=number,
        id=item.get("id") or world.new_id(),
        author=author,
        title=item["title"],
        body=item.get("body", ""),
        category=item.get("category", "General"),
        created_at=created,
        updated_at=created,
        closed=item.get("closed", False),
    )
    repo.discussions[number] = discussion
    repo.next_number = max(repo.next_number, number + 1)
    subscribers = {author}
    world.notify_activity(
        repo,
        "Discussion",
        number,
        author,
        discussion.body,
        created,
        subscribers=set(),
        author=author,
        latest_comment=None,
    )
    for spec in item.get("comments", []):
        comment = _discussion_comment(world, spec, None)
        discussion.comments.append(comment)
        world.notify_activity(
            repo,
            "Discussion",
            number,
            comment.author,
            comment.body,
            comment.created_at,
            subscribers=subscribers,
            author=author,
            latest_comment=None,
        )
        subscribers.add(comment.author)
        for reply_spec in spec.get("replies", []):
            reply = _discussion_comment(world, reply_spec, comment.id)
            comment.replies.append(reply)
            world.notify_activity(
                repo,
                "Discussion",
                number,
                reply.author,
                reply.body,
                reply.created_at,
                subscribers=subscribers,
                author=author,
                latest_comment=None,
            )
            subscribers.add(reply.author)


def _discussion_comment(
    world: World, spec: dict[str, Any], reply_to: int | None
) -> DiscussionComment:
    moment = _time(spec, "created_at", world)
    return DiscussionComment(
        id=spec.get("id") or world.new_id(),
        author=_user_login(world, spec["author"]),
        body=spec["body"],
        created_at=moment,
        updated_at=moment,
        reply_to=reply_to,
    )
