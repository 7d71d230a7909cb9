"""REST handlers: pull requests, their files and diff, reviews and review comments."""

from __future__ import annotations

from tusk.sandbox.rest import Call, Reply, handles, listing, validation_failed
from tusk.sandbox.rest_issues import (
    add_reaction,
    delete_reaction,
    edit_text,
    next_number,
    reaction_list,
    since_arg,
)
from tusk.sandbox.world import SandboxError
from tusk.sandbox.world_records import Issue, PullInfo, Repo, Review, ReviewComment

DIFF_MEDIA_TYPES = ("application/vnd.github.diff", "application/vnd.github.v3.diff")


@handles("pulls/get")
def get_pull(call: Call) -> Reply:
    repo = call.repo()
    issue = call.pull(repo)
    accept = call.headers.get("accept", "")
    if (
        any(media in accept for media in DIFF_MEDIA_TYPES)
        or "application/vnd.github.patch" in accept
    ):
        text, _ = call.shapes.pull_diff(repo, issue)
        return Reply(200, text, content_type="text/plain; charset=utf-8")
    return Reply(200, call.shapes.pull(repo, issue, full=True, viewer=call.login))


@handles("pulls/list")
def list_pulls(call: Call) -> Reply:
    repo = call.repo()
    state = call.arg("state", "open")
    head = call.arg("head")
    base = call.arg("base")
    items = []
    for issue in repo.issues.values():
        pull = issue.pull
        if pull is None or (state != "all" and issue.state != state):
            continue
        if base and pull.base_ref != base:
            continue
        if head:
            owner, _, ref = head.rpartition(":")
            if ref != pull.head_ref or (
                owner and not pull.head_repo.lower().startswith(owner.lower() + "/")
            ):
                continue
        items.append(issue)
    items.sort(key=lambda i: i.created_at, reverse=call.arg("direction", "desc") == "desc")
    return listing(call, [call.shapes.pull(repo, i, full=False, viewer=call.login) for i in items])


@handles("pulls/create")
def create_pull(call: Call) -> Reply:
    repo = call.writable_repo()
    login = call.require_user()
    head = str(call.field("head") or "")
    base = str(call.field("base") or "")
    owner, _, ref = head.rpartition(":")
    head_repo = repo
    if owner:
        candidates = [r for r in call.world.repos.values() if r.owner.lower() == owner.lower()]
        named = call.field("head_repo")
        forks = [r for r in candidates if (r.fork_of or "").lower() == repo.full_name.lower()]
        chosen = (
            [r for r in candidates if named and r.name == named]
            or forks
            or [r for r in candidates if r.name == repo.name]
        )
        if not chosen:
            raise validation_failed("PullRequest", "head", "invalid")
        head_repo = chosen[0]
    git = call.world.git
    if git is None or git.branch(head_repo.full_name, ref) is None:
        raise validation_failed("PullRequest", "head", "invalid")
    if git.branch(repo.full_name, base) is None:
        raise validation_failed("PullRequest", "base", "invalid")
    for other in repo.issues.values():
        if (
            other.pull
            and other.state == "open"
            and other.pull.head_ref == ref
            and other.pull.head_repo.lower() == head_repo.full_name.lower()
            and other.pull.base_ref == base
        ):
            raise validation_failed(
                "PullRequest",
                "head",
                "custom",
                f"A pull request already exists for {head_repo.owner}:{ref}.",
            )
    body = call.field("body")
    call.world.check_title(call.field("title"), "PullRequest")
    call.world.check_body(body, "PullRequest")
    moment = call.world.clock.tick()
    issue = Issue(
        number=next_number(repo),
        id=call.world.new_id(),
        author=login,
        title=str(call.field("title") or ""),
        body=body,
        created_at=moment,
        updated_at=moment,
        pull=PullInfo(
            head_repo=head_repo.full_name,
            head_ref=ref,
            base_ref=base,
            draft=bool(call.field("draft", False)),
            maintainer_can_modify=bool(call.field("maintainer_can_modify", False)),
        ),
    )
    if not issue.title:
        raise validation_failed("PullRequest", "title", "missing_field")
    repo.issues[issue.number] = issue
    issue.subscribers.add(login)
    call.world.record_activity(repo, issue, login, body, moment)
    shape = call.shapes.pull(repo, issue, full=True, viewer=login)
    return Reply(201, shape, {"Location": shape["url"]})


@handles("pulls/update")
def update_pull(call: Call) -> Reply:
    repo = call.writable_repo()
    login = call.require_user()
    issue = call.pull(repo)
    moment = edit_text(call, repo, issue, login, kind="PullRequest")
    state = call.field("state")
    if state and state != issue.state:
        issue.state = state
        issue.closed_at = moment if state == "closed" else None
    issue.updated_at = moment
    return Reply(200, call.shapes.pull(repo, issue, full=True, viewer=login))


@handles("pulls/list-files")
def list_files(call: Call) -> Reply:
    repo = call.repo()
    issue = call.pull(repo)
    assert issue.pull is not None
    head_repo = call.world.repos.get(issue.pull.head_repo.lower()) if issue.pull.head_repo else None
    head_sha = call.shapes.sha(head_repo, issue.pull.head_ref) if head_repo else "0" * 40
    files = call.shapes.pull_files(repo, issue)
    return listing(call, [call.shapes.diff_entry(repo, f, head_sha) for f in files])


@handles("pulls/list-reviews")
def list_reviews(call: Call) -> Reply:
    repo = call.repo()
    issue = call.pull(repo)
    assert issue.pull is not None
    return listing(call, [call.shapes.review(repo, issue, r) for r in issue.pull.reviews])


@handles("pulls/get-review")
def get_review(call: Call) -> Reply:
    repo = call.repo()
    issue = call.pull(repo)
    assert issue.pull is not None
    for review in issue.pull.reviews:
        if review.id == call.int_param("review_id"):
            return Reply(200, call.shapes.review(repo, issue, review))
    raise SandboxError(404, "Not Found")


@handles("pulls/list-comments-for-review")
def list_review_comments_of_review(call: Call) -> Reply:
    repo = call.repo()
    issue = call.pull(repo)
    assert issue.pull is not None
    review_id = call.int_param("review_id")
    items = [c for c in issue.pull.review_comments if c.review_id == review_id]
    return listing(call, [call.shapes.review_comment(repo, issue, c) for c in items])


@handles("pulls/list-review-comments")
def list_review_comments(call: Call) -> Reply:
    repo = call.repo()
    issue = call.pull(repo)
    assert issue.pull is not None
    since = since_arg(call)
    items = [c for c in issue.pull.review_comments if since is None or c.updated_at >= since]
    if call.arg("direction") == "desc":
        items = list(reversed(items))
    return listing(call, [call.shapes.review_comment(repo, issue, c) for c in items])


@handles("pulls/list-review-comments-for-repo")
def list_repo_review_comments(call: Call) -> Reply:
    repo = call.repo()
    since = since_arg(call)
    pairs = [
        (issue, comment)
        for issue in repo.issues.values()
        if issue.pull
        for comment in issue.pull.review_comments
        if since is None or comment.updated_at >= since
    ]
    sort = call.arg("sort")
    if sort == "updated":
        pairs.sort(key=lambda p: p[1].updated_at)
    elif sort == "created":
        pairs.sort(key=lambda p: p[1].created_at)
    else:
        pairs.sort(key=lambda p: p[1].id)
    if call.arg("direction", "asc" if not sort else "desc") == "desc":
        pairs.reverse()
    return listing(call, [call.shapes.review_comment(repo, i, c) for i, c in pairs])


@handles("pulls/get-review-comment")
def get_review_comment(call: Call) -> Reply:
    repo = call.repo()
    found = call.world.find_review_comment(repo, call.int_param("comment_id"))
    if found is None:
        raise SandboxError(404, "Not Found")
    return Reply(200, call.shapes.review_comment(repo, *found))


def _review_comment(call: Call, repo: Repo) -> ReviewComment:
    found = call.world.find_review_comment(repo, call.int_param("comment_id"))
    if found is None:
        raise SandboxError(404, "Not Found")
    return found[1]


@handles("reactions/list-for-pull-request-review-comment")
def list_review_comment_reactions(call: Call) -> Reply:
    repo = call.repo()
    return reaction_list(call, _review_comment(call, repo).reactions)


@handles("reactions/create-for-pull-request-review-comment")
def create_review_comment_reaction(call: Call) -> Reply:
    repo = call.writable_repo()
    return add_reaction(call, _review_comment(call, repo).reactions)


@handles("reactions/delete-for-pull-request-comment")
def delete_review_comment_reaction(call: Call) -> Reply:
    repo = call.writable_repo()
    return delete_reaction(call, _review_comment(call, repo).reactions)


@handles("pulls/delete-review-comment")
def delete_review_comment(call: Call) -> Reply:
    repo = call.writable_repo()
    login = call.require_user()
    found = call.world.find_review_comment(repo, call.int_param("comment_id"))
    if found is None:
        raise SandboxError(404, "Not Found")
    issue, comment = found
    if comment.author.lower() != login.lower() and not call.world.can_push(repo, login):
        raise SandboxError(403, "Resource not accessible by personal access token")
    assert issue.pull is not None
    issue.pull.review_comments.remove(comment)
    return Reply(204)


@handles("pulls/delete-pending-review")
def delete_pending_review(call: Call) -> Reply:
    repo = call.writable_repo()
    issue = call.pull(repo)
    assert issue.pull is not None
    for review in issue.pull.reviews:
        if review.id == call.int_param("review_id"):
            if review.state != "PENDING":
                raise validation_failed(
                    "PullRequestReview", "state", "invalid", "Can not delete a non-pending review"
                )
            issue.pull.reviews.remove(review)
            return Reply(200, call.shapes.review(repo, issue, review))
    raise SandboxError(404, "Not Found")


# --------------------------------------------------------------------------- writing reviews
# Humans' reviews, so tests can drive a review that mentions the bot through the
# API. (Tusk's agent never reviews; its MCP server refuses to.)


def _new_review_comment(
    call: Call,
    issue: Issue,
    body: str,
    path: str,
    line: int | None,
    review_id: int | None,
    reply_to: int | None,
) -> ReviewComment:
    assert issue.pull is not None
    login = call.require_user()
    call.world.check_body(body, "PullRequestReviewComment")
    moment = call.world.clock.tick()
    comment = ReviewComment(
        id=call.world.new_id(),
        review_id=review_id,
        author=login,
        body=body,
        path=path,
        line=line,
        side=str(call.field("side", "RIGHT")),
        created_at=moment,
        updated_at=moment,
        in_reply_to=reply_to,
    )
    issue.pull.review_comments.append(comment)
    issue.updated_at = moment
    return comment


@handles("pulls/create-review-comment")
def create_review_comment(call: Call) -> Reply:
    repo = call.writable_repo()
    issue = call.pull(repo)
    reply_to = call.field("in_reply_to")
    path, line = call.field("path"), call.field("line")
    if reply_to is not None:
        found = call.world.find_review_comment(repo, int(reply_to))
        if found is None:
            raise validation_failed("PullRequestReviewComment", "in_reply_to", "invalid")
        path, line = found[1].path, found[1].line
    if not path:
        raise validation_failed("PullRequestReviewComment", "path", "missing_field")
    comment = _new_review_comment(call, issue, str(call.field("body")), path, line, None, reply_to)
    call.world.record_activity(
        repo, issue, comment.author, comment.body, comment.created_at, ("pulls", comment.id)
    )
    return Reply(201, call.shapes.review_comment(repo, issue, comment))


@handles("pulls/create-reply-for-review-comment")
def reply_to_review_comment(call: Call) -> Reply:
    repo = call.writable_repo()
    issue = call.pull(repo)
    found = call.world.find_review_comment(repo, call.int_param("comment_id"))
    if found is None or found[0] is not issue:
        raise SandboxError(404, "Not Found")
    parent = found[1]
    comment = _new_review_comment(
        call, issue, str(call.field("body")), parent.path, parent.line, None, parent.id
    )
    call.world.record_activity(
        repo, issue, comment.author, comment.body, comment.created_at, ("pulls", comment.id)
    )
    return Reply(201, call.shapes.review_comment(repo, issue, comment))


@handles("pulls/update-review-comment")
def update_review_comment(call: Call) -> Reply:
    repo = call.writable_repo()
    login = call.require_user()
    found = call.world.find_review_comment(repo, call.int_param("comment_id"))
    if found is None:
        raise SandboxError(404, "Not Found")
    issue, comment = found
    if comment.author.lower() != login.lower():
        raise SandboxError(403, "Resource not accessible by personal access token")
    call.world.check_body(call.field("body"), "PullRequestReviewComment")
    comment.body = str(call.field("body"))
    comment.updated_at = call.world.clock.tick()
    return Reply(200, call.shapes.review_comment(repo, issue, comment))


@handles("pulls/create-review")
def create_review(call: Call) -> Reply:
    repo = call.writable_repo()
    login = call.require_user()
    issue = call.pull(repo)
    assert issue.pull is not None
    if issue.author.lower() == login.lower() and call.field("event") in (
        "APPROVE",
        "REQUEST_CHANGES",
    ):
        raise validation_failed(
            "PullRequestReview", "event", "invalid", "Can not approve your own pull request"
        )
    event = call.field("event")
    state = {
        "APPROVE": "APPROVED",
        "REQUEST_CHANGES": "CHANGES_REQUESTED",
        "COMMENT": "COMMENTED",
    }.get(event or "", "PENDING")
    body = str(call.field("body") or "")
    call.world.check_body(body, "PullRequestReview")
    moment = call.world.clock.tick()
    review = Review(
        id=call.world.new_id(), author=login, body=body, state=state, submitted_at=moment
    )
    issue.pull.reviews.append(review)
    for spec in call.field("comments") or []:
        _new_review_comment(
            call,
            issue,
            str(spec.get("body", "")),
            spec.get("path", ""),
            spec.get("line"),
            review.id,
            None,
        )
    if state != "PENDING":
        texts = "\n".join([body, *(str(c.get("body", "")) for c in call.field("comments") or [])])
        call.world.record_activity(repo, issue, login, texts, moment)
    return Reply(200, call.shapes.review(repo, issue, review))
