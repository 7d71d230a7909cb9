"""REST handlers: issues, issue comments, labels, reactions and issue search."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import quote

from tusk.sandbox.rest import Call, Reply, handles, listing, paginate, validation_failed
from tusk.sandbox.world import SandboxError
from tusk.sandbox.world_clock import parse_time
from tusk.sandbox.world_records import Comment, Issue, Reaction, Repo

LABEL_COLOR = re.compile(r"[0-9A-Fa-f]{6}")


def since_arg(call: Call) -> datetime | None:
    text = call.arg("since")
    if not text:
        return None
    try:
        return parse_time(text)
    except ValueError:
        raise validation_failed("Issue", "since") from None


@handles("issues/get")
def get_issue(call: Call) -> Reply:
    repo = call.repo()
    return Reply(200, call.shapes.issue(repo, call.issue(repo), single=True))


@handles("issues/list-for-repo")
def list_issues(call: Call) -> Reply:
    repo = call.repo()
    state = call.arg("state", "open")
    labels = [x for x in (call.arg("labels") or "").split(",") if x]
    since = since_arg(call)
    creator = call.arg("creator")
    assignee = call.arg("assignee")
    items = []
    for issue in repo.issues.values():
        if not call.world.listed(issue):  # listings can lag a write (settings.listing_lag)
            continue
        if state != "all" and issue.state != state:
            continue
        if labels and not {x.lower() for x in labels} <= {x.lower() for x in issue.labels}:
            continue
        if since and issue.updated_at < since:
            continue
        if creator and issue.author.lower() != creator.lower():
            continue
        if (
            assignee
            and assignee != "*"
            and assignee.lower() not in {a.lower() for a in issue.assignees}
        ):
            continue
        items.append(issue)
    sort = call.arg("sort", "created")
    keys: dict[str, Callable[[Issue], Any]] = {
        "updated": lambda i: i.updated_at,
        "comments": lambda i: len(i.comments),
    }
    key: Callable[[Issue], Any] = keys.get(sort or "", lambda i: i.created_at)
    items.sort(key=lambda i: (key(i), i.number), reverse=call.arg("direction", "desc") == "desc")
    return listing(call, [call.shapes.issue(repo, i) for i in items])


def _labels_in(value: Any) -> list[str]:
    out = []
    for label in value or []:
        out.append(label["name"] if isinstance(label, dict) else str(label))
    return out


@handles("issues/create")
def create_issue(call: Call) -> Reply:
    repo = call.writable_repo()
    login = call.require_user()
    title = call.field("title")
    body = call.field("body")
    if title in (None, ""):
        raise validation_failed("Issue", "title", "missing_field")
    call.world.check_title(title, "Issue")
    call.world.check_body(body, "Issue")
    moment = call.world.clock.tick()
    pusher = call.world.can_push(repo, login)
    issue = Issue(
        number=next_number(repo),
        id=call.world.new_id(),
        author=login,
        title=str(title),
        body=body,
        created_at=moment,
        updated_at=moment,
        # Labels, assignees and milestone are silently dropped without push access.
        labels=_labels_in(call.field("labels")) if pusher else [],
        assignees=[a for a in call.field("assignees") or [] if call.world.user(a)]
        if pusher
        else [],
        milestone=str(call.field("milestone"))
        if pusher and call.field("milestone") is not None
        else None,
    )
    lag = call.world.next_listing_lag()
    if lag > 0:
        # Issue listings and search can lag a just-created issue on GitHub; only its own
        # URL is read-after-write (no documented bound or order; widely observed).
        issue.listed_from = call.world.wall() + lag
    issue.labels = call.world.ensure_labels(repo, issue.labels)
    repo.issues[issue.number] = issue
    repo.updated_at = moment
    issue.subscribers.add(login)
    call.world.record_activity(repo, issue, login, body, moment)
    return Reply(
        201,
        call.shapes.issue(repo, issue, single=True),
        {"Location": f"{call.shapes.repo_url(repo)}/issues/{issue.number}"},
    )


def next_number(repo: Repo) -> int:
    while repo.next_number in repo.issues or repo.next_number in repo.discussions:
        repo.next_number += 1
    number = repo.next_number
    repo.next_number += 1
    return number


def edit_text(call: Call, repo: Repo, issue: Issue, login: str, *, kind: str) -> datetime:
    """An edit of an issue's or a pull request's title and body, as GitHub takes it: by
    its author or someone with push access, within the length limits; mentions in an
    edited body notify. Returns the edit's moment."""
    if issue.author.lower() != login.lower() and not call.world.can_push(repo, login):
        raise SandboxError(403, "Resource not accessible by personal access token")
    call.world.check_title(call.field("title"), kind)
    call.world.check_body(call.field("body"), kind)
    moment = call.world.clock.tick()
    if "title" in call.body:
        issue.title = str(call.field("title"))
    if "body" in call.body:
        issue.body = call.field("body")
        issue.body_edited_at = moment
        call.world.record_activity(repo, issue, login, issue.body, moment)
    return moment


@handles("issues/update")
def update_issue(call: Call) -> Reply:
    repo = call.writable_repo()
    login = call.require_user()
    issue = call.issue(repo)
    pusher = call.world.can_push(repo, login)
    moment = edit_text(call, repo, issue, login, kind="Issue")
    state = call.field("state")
    if state and state != issue.state:
        reason = call.field("state_reason")
        if state == "closed":
            issue.state_reason = reason or "completed"
            issue.closed_at = moment
            issue.closed_by = login
        else:
            issue.state_reason = "reopened"
            issue.closed_at = None
            issue.closed_by = None
        issue.state = state
    if pusher:
        if "labels" in call.body:
            issue.labels = call.world.ensure_labels(repo, _labels_in(call.field("labels")))
        if "assignees" in call.body:
            issue.assignees = [a for a in call.field("assignees") or [] if call.world.user(a)]
        if "milestone" in call.body:
            value = call.field("milestone")
            issue.milestone = None if value is None else str(value)
    issue.updated_at = moment
    return Reply(200, call.shapes.issue(repo, issue, single=True))


@handles("issues/add-labels")
def add_labels(call: Call) -> Reply:
    repo = call.push_repo()
    issue = call.issue(repo)
    names = _labels_in(call.field("labels") if isinstance(call.body, dict) else call.body)
    issue.labels = call.world.ensure_labels(repo, issue.labels + names)
    issue.updated_at = call.world.clock.tick()
    return Reply(200, call.shapes.issue_labels(repo, issue))


@handles("issues/set-labels")
def set_labels(call: Call) -> Reply:
    repo = call.push_repo()
    issue = call.issue(repo)
    names = _labels_in(call.field("labels") if isinstance(call.body, dict) else call.body)
    issue.labels = call.world.ensure_labels(repo, names)
    issue.updated_at = call.world.clock.tick()
    return Reply(200, call.shapes.issue_labels(repo, issue))


@handles("issues/remove-label")
def remove_label(call: Call) -> Reply:
    repo = call.push_repo()
    issue = call.issue(repo)
    name = call.params["name"].lower()  # label names are case-insensitive
    if name not in {n.lower() for n in issue.labels}:
        raise SandboxError(404, "Label does not exist")
    issue.labels = [n for n in issue.labels if n.lower() != name]
    issue.updated_at = call.world.clock.tick()
    return Reply(200, call.shapes.issue_labels(repo, issue))


@handles("issues/list-labels-on-issue")
def list_issue_labels(call: Call) -> Reply:
    repo = call.repo()
    issue = call.issue(repo)
    return listing(call, call.shapes.issue_labels(repo, issue))


@handles("issues/list-labels-for-repo")
def list_repo_labels(call: Call) -> Reply:
    repo = call.repo()
    return listing(call, [call.shapes.label(repo, label) for label in repo.labels.values()])


@handles("issues/create-label")
def create_label(call: Call) -> Reply:
    repo = call.push_repo()
    name = str(call.field("name"))
    color = str(call.field("color", "ededed"))
    # GitHub wants six hex digits without "#" (recorded: @octokit/fixtures errors: 422
    # with errors[] naming the field) and refuses a name that differs only in case.
    if not LABEL_COLOR.fullmatch(color):
        raise validation_failed("Label", "color")
    if name.lower() in repo.labels:
        raise validation_failed("Label", "name", "already_exists")
    from tusk.sandbox.world_records import Label

    label = Label(
        id=call.world.new_id(),
        name=name,
        color=color,
        description=call.field("description"),
    )
    repo.labels[name.lower()] = label
    url = f"{call.shapes.repo_url(repo)}/labels/{quote(name)}"
    return Reply(201, call.shapes.label(repo, label), {"Location": url})


# --------------------------------------------------------------------------- comments


@handles("issues/list-comments")
def list_comments(call: Call) -> Reply:
    repo = call.repo()
    issue = call.issue(repo)
    since = since_arg(call)
    items = [
        c
        for c in issue.comments
        if call.world.listed(c) and (since is None or c.updated_at >= since)
    ]
    return listing(call, [call.shapes.comment(repo, issue, c) for c in items])


@handles("issues/list-comments-for-repo")
def list_repo_comments(call: Call) -> Reply:
    repo = call.repo()
    since = since_arg(call)
    pairs = [
        (i, c)
        for i in repo.issues.values()
        for c in i.comments
        if call.world.listed(c) and (since is None or c.updated_at >= since)
    ]
    sort = call.arg("sort")
    direction = call.arg("direction", "desc" if sort else "asc")
    if sort == "updated":
        pairs.sort(key=lambda p: (p[1].updated_at, p[1].id))
    elif sort == "created":
        pairs.sort(key=lambda p: (p[1].created_at, p[1].id))
    else:
        pairs.sort(key=lambda p: p[1].id)
    if direction == "desc":
        pairs.reverse()
    return listing(call, [call.shapes.comment(repo, i, c) for i, c in pairs])


def _comment(call: Call, repo: Repo) -> tuple[Issue, Comment]:
    found = call.world.find_comment(repo, call.int_param("comment_id"))
    if found is None:
        raise SandboxError(404, "Not Found")
    return found


@handles("issues/get-comment")
def get_comment(call: Call) -> Reply:
    repo = call.repo()
    issue, comment = _comment(call, repo)
    return Reply(200, call.shapes.comment(repo, issue, comment))


@handles("issues/create-comment")
def create_comment(call: Call) -> Reply:
    repo = call.writable_repo()
    login = call.require_user()
    issue = call.issue(repo)
    if issue.locked and not call.world.can_push(repo, login):
        raise SandboxError(403, "Unable to create comment because issue is locked.")
    comment = call.world.add_comment(
        repo, issue, login, str(call.field("body")), call.world.clock.tick()
    )
    if call.world.comment_listing_lag > 0:
        # Like issue listings, comment listings can lag a write on GitHub; only the
        # comment's own URL is read-after-write (no documented bound; ENGINEERING §2).
        comment.listed_from = call.world.wall() + call.world.comment_listing_lag
    url = f"{call.shapes.repo_url(repo)}/issues/comments/{comment.id}"
    return Reply(201, call.shapes.comment(repo, issue, comment), {"Location": url})


@handles("issues/update-comment")
def update_comment(call: Call) -> Reply:
    repo = call.writable_repo()
    login = call.require_user()
    issue, comment = _comment(call, repo)
    if comment.author.lower() != login.lower() and not call.world.can_push(repo, login):
        raise SandboxError(403, "Resource not accessible by personal access token")
    body = str(call.field("body"))
    call.world.check_body(body, "IssueComment")
    moment = call.world.clock.tick()
    comment.body = body
    comment.updated_at = moment
    issue.updated_at = moment
    return Reply(200, call.shapes.comment(repo, issue, comment))


@handles("issues/delete-comment")
def delete_comment(call: Call) -> Reply:
    repo = call.writable_repo()
    login = call.require_user()
    issue, comment = _comment(call, repo)
    if comment.author.lower() != login.lower() and not call.world.can_push(repo, login):
        raise SandboxError(403, "Resource not accessible by personal access token")
    issue.comments.remove(comment)
    return Reply(204)


# --------------------------------------------------------------------------- reactions


def reaction_list(call: Call, reactions: list[Reaction]) -> Reply:
    content = call.arg("content")
    items = [r for r in reactions if content is None or r.content == content]
    return listing(call, [call.shapes.reaction(r) for r in items])


def add_reaction(call: Call, reactions: list[Reaction]) -> Reply:
    login = call.require_user()
    content = call.field("content")
    for reaction in reactions:
        if reaction.user.lower() == login.lower() and reaction.content == content:
            return Reply(200, call.shapes.reaction(reaction))
    reaction = Reaction(
        id=call.world.new_id(), user=login, content=content, created_at=call.world.clock.tick()
    )
    reactions.append(reaction)
    return Reply(201, call.shapes.reaction(reaction))


def delete_reaction(call: Call, reactions: list[Reaction]) -> Reply:
    login = call.require_user()
    target = call.int_param("reaction_id")
    for reaction in reactions:
        if reaction.id == target:
            if reaction.user.lower() != login.lower():
                raise SandboxError(403, "Resource not accessible by personal access token")
            reactions.remove(reaction)
            return Reply(204)
    raise SandboxError(404, "Not Found")


@handles("reactions/list-for-issue-comment")
def list_comment_reactions(call: Call) -> Reply:
    repo = call.repo()
    return reaction_list(call, _comment(call, repo)[1].reactions)


@handles("reactions/create-for-issue-comment")
def create_comment_reaction(call: Call) -> Reply:
    repo = call.writable_repo()
    return add_reaction(call, _comment(call, repo)[1].reactions)


@handles("reactions/delete-for-issue-comment")
def delete_comment_reaction(call: Call) -> Reply:
    repo = call.writable_repo()
    return delete_reaction(call, _comment(call, repo)[1].reactions)


@handles("reactions/list-for-issue")
def list_issue_reactions(call: Call) -> Reply:
    repo = call.repo()
    return reaction_list(call, call.issue(repo).reactions)


@handles("reactions/create-for-issue")
def create_issue_reaction(call: Call) -> Reply:
    repo = call.writable_repo()
    return add_reaction(call, call.issue(repo).reactions)


@handles("reactions/delete-for-issue")
def delete_issue_reaction(call: Call) -> Reply:
    repo = call.writable_repo()
    return delete_reaction(call, call.issue(repo).reactions)


# --------------------------------------------------------------------------- search


QUALIFIER = re.compile(r"^(-?)([a-z-]+):(.+)$")


def parse_query(query: str) -> tuple[list[tuple[bool, str, str]], list[str]]:
    """Split a search query into (negated, qualifier, value) triples and free words."""
    try:
        tokens = shlex.split(query)
    except ValueError:
        tokens = query.split()
    qualifiers, words = [], []
    for token in tokens:
        found = QUALIFIER.match(token)
        if found:
            qualifiers.append((found.group(1) == "-", found.group(2), found.group(3)))
        elif token.upper() not in ("AND", "OR", "NOT"):
            words.append(token)
    return qualifiers, words


def _matches(
    call: Call, repo: Repo, issue: Issue, qualifiers: list[tuple[bool, str, str]], words: list[str]
) -> bool:
    fields = {"title", "body"}
    for negated, name, value in qualifiers:
        if name == "in":
            fields = set(value.split(","))
            continue
        hit = _qualifier_hit(repo, issue, name, value)
        if hit is None:
            raise validation_failed(
                "Search", "q", "invalid", f"the qualifier {name}: is not supported by the sandbox"
            )
        if hit == negated:
            return False
    for word in words:
        haystacks = []
        if "title" in fields:
            haystacks.append(issue.title)
        if "body" in fields:
            haystacks.append(issue.body or "")
        if "comments" in fields:
            haystacks += [c.body for c in issue.comments]
        if not any(word.lower() in h.lower() for h in haystacks):
            return False
    return True


def _qualifier_hit(repo: Repo, issue: Issue, name: str, value: str) -> bool | None:
    value_l = value.lower()
    if name == "repo":
        return repo.full_name.lower() == value_l
    if name in ("user", "org", "owner"):
        return repo.owner.lower() == value_l
    if name == "is":
        return {
            "issue": issue.pull is None,
            "pr": issue.pull is not None,
            "open": issue.state == "open",
            "closed": issue.state == "closed",
            "merged": bool(issue.pull and issue.pull.merged),
            "public": not repo.private,
            "private": repo.private,
        }.get(value_l, False)
    if name == "type":
        return (issue.pull is not None) == (value_l in ("pr", "pull-request"))
    if name == "state":
        return issue.state == value_l
    if name == "author":
        return issue.author.lower() == value_l
    if name == "commenter":
        return any(c.author.lower() == value_l for c in issue.comments)
    if name == "assignee":
        return value_l in {a.lower() for a in issue.assignees}
    if name == "label":
        wanted = {v.strip('"').lower() for v in value.split(",")}
        return bool(wanted & {x.lower() for x in issue.labels})
    if name == "mentions":
        from tusk.sandbox.world import mentioned_logins

        texts = [issue.body or ""] + [c.body for c in issue.comments]
        return any(value_l in {m.lower() for m in mentioned_logins(t)} for t in texts)
    if name == "involves":
        return any(
            _qualifier_hit(repo, issue, q, value)
            for q in ("author", "commenter", "assignee", "mentions")
        )
    if name == "reason":
        return issue.state_reason == value_l.replace(" ", "_").replace('"', "")
    return None


@handles("search/issues-and-pull-requests")
def search_issues(call: Call) -> Reply:
    query = call.arg("q") or ""
    if len(query) > 256:
        raise validation_failed(
            "Search", "q", "invalid", "The search is longer than 256 characters."
        )
    qualifiers, words = parse_query(query)
    results = []
    for repo in call.world.repos.values():
        if not call.world.can_see(repo, call.login):
            continue
        for issue in repo.issues.values():
            if call.world.listed(issue) and _matches(call, repo, issue, qualifiers, words):
                results.append((repo, issue))
    sort = call.arg("sort")
    key = {
        "created": lambda p: p[1].created_at,
        "updated": lambda p: p[1].updated_at,
        "comments": lambda p: len(p[1].comments),
    }.get(sort or "", lambda p: p[1].updated_at)
    results.sort(key=key, reverse=call.arg("order", "desc") == "desc")
    chunk, headers = paginate(call, results)
    items = []
    for repo, issue in chunk:
        shape = call.shapes.issue(repo, issue)
        shape["score"] = 1.0
        items.append(shape)
    body = {
        "total_count": len(results),
        "incomplete_results": False,
        "items": items,
        "search_type": "lexical",
    }
    return Reply(200, body, headers)
