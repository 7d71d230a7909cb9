"""A checked scenario's repositories built into the world: git contents, labels,
issues and pull requests with their comments and reviews, discussions, artifacts
and runs. Content behaves as if users had written it through the API."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tusk.sandbox.gitstore import CommitSpec
from tusk.sandbox.world import World
from tusk.sandbox.world_clock import parse_time
from tusk.sandbox.world_records import (
    Artifact,
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
)


def _user_login(world: World, login: str) -> str:
    return world.users[login.lower()].login


def build_repo(world: World, spec: dict[str, Any]) -> None:
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
        disabled_workflows=dict.fromkeys(spec.get("disabled_workflows", []), "disabled_manually"),
    )
    if "fork_of" in spec:
        parent = world.repos[spec["fork_of"].lower()]
        repo.fork_of = parent.full_name
    world.add_repo(repo)
    for former in spec.get("renamed_from", []):
        world.renamed[str(former).lower()] = repo.id
    for label in spec.get("labels", []):
        label = {"name": label} if isinstance(label, str) else label
        repo.labels[label["name"].lower()] = Label(
            id=world.new_id(),
            name=label["name"],
            color=label.get("color", "ededed"),
            description=label.get("description"),
            default=label.get("default", False),
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
    issue.labels = world.ensure_labels(repo, issue.labels)
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
