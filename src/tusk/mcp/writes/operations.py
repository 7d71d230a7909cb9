"""Write tools: the only ways the agent can change anything on GitHub (M2).

Each tool is two plain functions of the ``Runtime`` and its arguments (a
pydantic model whose fields are the tool's parameters): ``prepare_*`` turns
the arguments into the request that will be sent (title and body checked,
self-mentions and markers neutralised, the footer added; it may refuse), and
``send_*`` sends it. ``Runtime.write`` runs them after the policy gate, or
records the prepared request in record-only mode. ``push_branch``'s pair lives in
``tusk.mcp.push.tool``: its prepare takes the agent's commits. There is deliberately no review
tool and no tool that calls an arbitrary endpoint.

A create carries a nonce in its footer and is sent once (``tusk.github.once``): after
a lost answer the nonce is looked for before the create is sent again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from tusk.github.gateway import GitHubError
from tusk.github.once import (
    DEFAULT_PATIENCE,
    NotConfirmed,
    Patience,
    create_once,
    find_comment,
    find_issues,
    has_nonce,
)
from tusk.mcp.gate import policy
from tusk.mcp.server.runtime import Runtime
from tusk.mcp.writes.outcomes import OperationFailed, Prepared, WriteOutcome

# What a listing needs to catch up with a create (about two minutes, as for log issues).
LISTED = Patience(looks=8, first_pause=1.0, sends=2)

DISCUSSION_ID_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { discussion(number: $number) { id } }
}
"""
# After an uncertain answer to the mutation: the discussion's newest comments, to look for
# the nonce in the body's footer (GraphQL mutations are never repeated blindly).
DISCUSSION_COMMENTS_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    discussion(number: $number) { comments(last: 50) { nodes { id url body author { login } } } }
  }
}
"""
ADD_DISCUSSION_COMMENT = """
mutation($discussionId: ID!, $body: String!) {
  addDiscussionComment(input: {discussionId: $discussionId, body: $body}) { comment { id url } }
}
"""


class CreateIssue(BaseModel):
    repo: str
    title: str
    body: str


class CreateComment(BaseModel):
    repo: str
    number: int
    body: str


class CreatePullRequest(BaseModel):
    repo: str
    title: str
    body: str
    head: str
    base: str


class UpdateComment(BaseModel):
    repo: str
    comment_id: int
    body: str


class DeleteComment(BaseModel):
    repo: str
    comment_id: int


class StateLine(BaseModel):
    text: str


# --------------------------------------------------------------------------- shared steps


def posted_body(rt: Runtime, body: str, *, comment_id: int | None = None, nonce: str | None) -> str:
    """The body as it will be posted (``policy.prepare_body``); an edit counts the mentions
    of the comment's earlier versions."""
    return policy.prepare_body(
        body,
        rt.config,
        secrets=rt.secrets,
        mentioned_before=policy.mentioned_before(comment_id, rt.state),
        nonce=nonce,
    )


def rest(
    method: str, path: str, payload: dict[str, Any], summary: str, nonce: str | None = None
) -> Prepared:
    """A REST request, as record-only mode records it."""
    return Prepared(
        summary=summary, request={"method": method, "path": path, "json": payload}, nonce=nonce
    )


def nonce_of(p: Prepared) -> str:
    if p.nonce is None:
        raise ValueError("a create is prepared with its nonce")
    return p.nonce


def once(
    rt: Runtime,
    nonce: str,
    send: Callable[[], dict[str, Any]],
    find: Callable[[], dict[str, Any] | None],
    what: str,
    patience: Patience = DEFAULT_PATIENCE,
) -> dict[str, Any]:
    """Create once (``tusk.github.once``): after a lost answer, look for the nonce in the
    footer before sending again. A create still unconfirmed is remembered, so the
    agent repeating the identical call (same nonce) finds it rather than doubling it."""
    find = _unanswered_as_uncertain(find, what)
    if nonce in rt.uncertain:
        found = find()
        if found is not None:
            rt.uncertain.discard(nonce)
            return found
    try:
        created = create_once(
            send, find, sleep=rt.write_gateway.sleep, what=what, patience=patience
        )
    except NotConfirmed:
        rt.uncertain.add(nonce)
        raise
    rt.uncertain.discard(nonce)
    return created


def _unanswered_as_uncertain(
    find: Callable[[], dict[str, Any] | None], what: str
) -> Callable[[], dict[str, Any] | None]:
    """``find``, where a look-up GitHub refuses (not an outage, which ``tusk.github.once``
    looks past) leaves the create uncertain: it may exist, so it counts (fails closed)."""

    def guarded() -> dict[str, Any] | None:
        try:
            return find()
        except GitHubError as error:
            if error.is_outage:
                raise
            raise NotConfirmed(
                f"{what} may exist: looking for it by its nonce failed ({error.title})",
                status=error.status,
                method=error.method,
                path=error.path,
                token=error.token,
                cause=error.cause,
                may_have_landed=True,
            ) from error

    return guarded


def mine(rt: Runtime, item: dict[str, Any], nonce: str) -> bool:
    return has_nonce(item, kind="backlink", nonce=nonce, bot=rt.config.bot)


def post_once(
    rt: Runtime, p: Prepared, find: Callable[[], dict[str, Any] | None], what: str, **kw: Any
) -> dict[str, Any]:
    """POST the prepared request once, looking for it by its nonce after a lost answer."""

    def send() -> dict[str, Any]:  # after a 5xx it may exist: never repeated blindly
        return dict(
            rt.write_gateway.post(p.request["path"], json=p.request["json"], may_repeat=False).body
        )

    return once(rt, nonce_of(p), send, find, what, **kw)


# --------------------------------------------------------------------------- the tools


def prepare_issue(rt: Runtime, a: CreateIssue) -> Prepared:
    nonce = rt.nonce_for("create_issue", a.model_dump())
    title = policy.check_title(a.title, secrets=rt.secrets)
    payload = {"title": title, "body": posted_body(rt, a.body, nonce=nonce)}
    summary = f"open an issue in {a.repo} titled {title!r}"
    return rest("POST", f"/repos/{a.repo}/issues", payload, summary, nonce)


def send_issue(rt: Runtime, a: CreateIssue, p: Prepared) -> WriteOutcome:
    def find() -> dict[str, Any] | None:
        gw, bot = rt.write_gateway, rt.config.bot
        return next(
            iter(find_issues(gw, a.repo, kind="backlink", nonce=nonce_of(p), bot=bot)), None
        )

    # issue listings can lag a create
    data = post_once(rt, p, find, f"the issue in {a.repo}", patience=LISTED)
    return WriteOutcome(
        f"created issue #{data['number']}: {data['html_url']}",
        data["html_url"],
        "issue",
        number=int(data["number"]),
    )


def prepare_comment(rt: Runtime, a: CreateComment) -> Prepared:
    nonce = rt.nonce_for("create_comment", a.model_dump())
    payload = {"body": posted_body(rt, a.body, nonce=nonce)}
    path = f"/repos/{a.repo}/issues/{a.number}/comments"
    return rest("POST", path, payload, f"comment on {a.repo}#{a.number}", nonce)


def send_comment(rt: Runtime, a: CreateComment, p: Prepared) -> WriteOutcome:
    def find() -> dict[str, Any] | None:
        gw, bot = rt.write_gateway, rt.config.bot
        return find_comment(gw, a.repo, a.number, kind="backlink", nonce=nonce_of(p), bot=bot)

    data = post_once(rt, p, find, f"the comment on {a.repo}#{a.number}")
    return WriteOutcome(
        f"commented on {a.repo}#{a.number}: {data['html_url']} (comment id {data['id']})",
        data["html_url"],
        "comment",
        comment_id=int(data["id"]),
    )


def prepare_pull_request(rt: Runtime, a: CreatePullRequest) -> Prepared:
    nonce = rt.nonce_for("create_pull_request", a.model_dump())
    title = policy.check_title(a.title, secrets=rt.secrets)
    payload = {
        "title": title,
        "body": posted_body(rt, a.body, nonce=nonce),
        "head": f"{rt.config.bot}:{policy.head_branch(a.head, rt.config)}",
        "base": a.base,
    }
    summary = f"open a pull request on {a.repo} from {a.head} into {a.base}"
    return rest("POST", f"/repos/{a.repo}/pulls", payload, summary, nonce)


def send_pull_request(rt: Runtime, a: CreatePullRequest, p: Prepared) -> WriteOutcome:
    def find() -> dict[str, Any] | None:
        head = p.request["json"]["head"]
        for pull in rt.write_gateway.paginate(
            f"/repos/{a.repo}/pulls", params={"state": "all", "head": head}
        ):
            if mine(rt, pull, nonce_of(p)):
                return dict(pull)
        return None

    data = post_once(rt, p, find, f"the pull request on {a.repo}", patience=LISTED)
    return WriteOutcome(
        f"opened pull request #{data['number']}: {data['html_url']}",
        data["html_url"],
        "pull_request",
        number=int(data["number"]),
    )


def prepare_update(rt: Runtime, a: UpdateComment) -> Prepared:
    payload = {"body": posted_body(rt, a.body, comment_id=a.comment_id, nonce=None)}
    path = f"/repos/{a.repo}/issues/comments/{a.comment_id}"
    return rest("PATCH", path, payload, f"edit comment {a.comment_id} in {a.repo}")


def send_update(rt: Runtime, a: UpdateComment, p: Prepared) -> WriteOutcome:
    data = rt.write_gateway.patch(p.request["path"], json=p.request["json"]).body
    return WriteOutcome(f"updated comment {a.comment_id}: {data['html_url']}", data["html_url"])


def prepare_delete(rt: Runtime, a: DeleteComment) -> Prepared:
    path = f"/repos/{a.repo}/issues/comments/{a.comment_id}"
    return rest("DELETE", path, {}, f"delete comment {a.comment_id} in {a.repo}")


def send_delete(rt: Runtime, a: DeleteComment, p: Prepared) -> WriteOutcome:
    rt.write_gateway.delete(p.request["path"])
    return WriteOutcome(f"deleted comment {a.comment_id} in {a.repo}")


def _state_line(rt: Runtime, a: StateLine, kind: Literal["history", "memory"]) -> Prepared:
    text = policy.prepare_line(a.text, kind, rt.config, secrets=rt.secrets)
    summary = f"append to the {kind} issue: {text!r}"
    return Prepared(summary=summary, request={"state": kind, "text": text})


def prepare_history(rt: Runtime, a: StateLine) -> Prepared:
    return _state_line(rt, a, "history")


def prepare_memory(rt: Runtime, a: StateLine) -> Prepared:
    return _state_line(rt, a, "memory")


def send_line(rt: Runtime, a: StateLine, p: Prepared) -> WriteOutcome:
    kind, text = p.request["state"], p.request["text"]
    if rt.append_entry is None:
        raise OperationFailed(f"the {kind} issue is not available to this server")
    url = rt.append_entry(kind, text)
    return WriteOutcome(f"{kind} entry saved: {url}", url, kind)


def prepare_discussion_comment(rt: Runtime, a: CreateComment) -> Prepared:
    nonce = rt.nonce_for("create_discussion_comment", a.model_dump())
    body = posted_body(rt, a.body, nonce=nonce)
    request = {"graphql": "addDiscussionComment", "body": body}
    return Prepared(f"comment on discussion {a.repo}#{a.number}", request, nonce)


def send_discussion_comment(rt: Runtime, a: CreateComment, p: Prepared) -> WriteOutcome:
    gw = rt.write_gateway
    owner, _, name = a.repo.partition("/")
    where = {"owner": owner, "name": name, "number": a.number}

    def find() -> dict[str, Any] | None:
        found = gw.graphql(DISCUSSION_COMMENTS_QUERY, where)
        discussion = (found.get("repository") or {}).get("discussion") or {}
        for node in (discussion.get("comments") or {}).get("nodes") or []:
            item = {"user": node.get("author") or {}, "body": node.get("body")}
            if mine(rt, item, nonce_of(p)):
                return {"comment": node}
        return None

    def send() -> dict[str, Any]:
        variables = {"discussionId": discussion_id, "body": p.request["body"]}
        added = gw.graphql(ADD_DISCUSSION_COMMENT, variables)["addDiscussionComment"]
        return {"comment": added["comment"]}

    found = gw.graphql(DISCUSSION_ID_QUERY, where)
    discussion = (found.get("repository") or {}).get("discussion")
    if not discussion:
        raise OperationFailed(f"no discussion #{a.number} in {a.repo}")
    discussion_id = discussion["id"]
    where_said = f"the comment on discussion {a.repo}#{a.number}"
    comment = once(rt, nonce_of(p), send, find, where_said)["comment"]
    return WriteOutcome(
        f"commented on discussion {a.repo}#{a.number}: {comment['url']}", comment["url"], "comment"
    )
