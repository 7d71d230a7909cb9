"""Write tools: the only ways the agent can change anything on GitHub (M2).

Each tool names its arguments exactly as MISSION and the agent prompt do,
leaves every decision to ``policy`` (through ``Runtime.write``), and says
what it would do in staged mode. There is deliberately no review tool and no
tool that calls an arbitrary endpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from tusk.mcp_server import policy
from tusk.mcp_server.git_push import Pusher, PushFailed
from tusk.mcp_server.policy import Refused
from tusk.mcp_server.runtime import OperationFailed, Runtime, StagedWrite, WriteOutcome, tool

from tusk.github import Gateway
from tusk.once import (
    DEFAULT_PATIENCE,
    NotConfirmed,
    Patience,
    create_once,
    find_comment,
    find_issues,
    has_nonce,
)

# What a listing needs to catch up with a create (about two minutes, as for log issues).
LISTED = Patience(looks=8, first_pause=1.0, sends=2)

CREATE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)
PUSH = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
EDIT = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
)

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


def staged_request(
    method: str, path: str, payload: Mapping[str, Any] | None, summary: str
) -> StagedWrite:
    return StagedWrite(
        summary=summary, request={"method": method, "path": path, "json": dict(payload or {})}
    )


def register(server: MCPServer, runtime: Runtime, *, pusher: Pusher | None = None) -> None:
    """Add the write tools to ``server``."""
    gw: Gateway = runtime.write_gateway
    config = runtime.config
    secrets = runtime.secrets

    def body_of(
        args: Mapping[str, Any], nonce: str | None = None
    ) -> Callable[[], Mapping[str, Any]]:
        def prepare() -> Mapping[str, Any]:
            out = dict(args)
            if "title" in out:
                out["title"] = policy.check_title(out["title"], secrets=secrets)
            out["body"] = policy.prepare_body(
                out["body"],
                config,
                secrets=secrets,
                mentioned_before=policy.mentioned_before(out.get("comment_id"), runtime.state),
                nonce=nonce,
            )
            return out

        return prepare

    def once(
        nonce: str,
        send: Callable[[], dict[str, Any]],
        find: Callable[[], dict[str, Any] | None],
        what: str,
        patience: Patience = DEFAULT_PATIENCE,
    ) -> dict[str, Any]:
        """Create once (``tusk.once``): after a lost answer, look for the nonce in the
        footer before sending again. A create still unconfirmed is remembered, so the
        agent repeating the identical call (same nonce) finds it rather than doubling it."""
        if nonce in runtime.uncertain:
            found = find()
            if found is not None:
                runtime.uncertain.discard(nonce)
                return found
        try:
            created = create_once(send, find, sleep=gw.sleep, what=what, patience=patience)
        except NotConfirmed:
            runtime.uncertain.add(nonce)
            raise
        runtime.uncertain.discard(nonce)
        return created

    def mine(item: dict[str, Any], nonce: str) -> bool:
        return has_nonce(item, kind="backlink", nonce=nonce, bot=config.bot)

    @tool(server, name="create_issue", annotations=CREATE)
    async def create_issue(repo: str, title: str, body: str) -> str:
        """Open a new issue in repo ("owner/name").

        Limited to one issue per repository per run unless configured otherwise;
        an identical call is refused the second time. A footer linking to this
        run's log is added to the body. Never put secrets in the body.
        """
        args = {"repo": repo, "title": title, "body": body}
        nonce = runtime.nonce_for("create_issue", args)

        def perform(p: Mapping[str, Any]) -> WriteOutcome:
            data = once(
                nonce,
                lambda: (
                    gw.post(
                        f"/repos/{repo}/issues",
                        json={"title": p["title"], "body": p["body"]},
                        may_repeat=False,  # after a 5xx the issue may exist: look first
                    ).body
                ),
                lambda: next(
                    iter(find_issues(gw, repo, kind="backlink", nonce=nonce, bot=config.bot)),
                    None,
                ),
                f"the issue in {repo}",
                LISTED,  # issue listings can lag a create
            )
            return WriteOutcome(
                f"created issue #{data['number']}: {data['html_url']}", data["html_url"], "issue"
            )

        def stage(p: Mapping[str, Any]) -> StagedWrite:
            return staged_request(
                "POST",
                f"/repos/{repo}/issues",
                {"title": p["title"], "body": p["body"]},
                f"open an issue in {repo} titled {p['title']!r}",
            )

        return await runtime.write(
            "create_issue", args, prepare=body_of(args, nonce), perform=perform, stage=stage
        )

    @tool(server, name="create_comment", annotations=CREATE)
    async def create_comment(repo: str, number: int, body: str) -> str:
        """Comment on an issue or on a pull request's conversation (number is the issue/PR number).

        At most a few comments per thread per run (2 by default): prefer one
        complete comment, and fix a mistake with update_comment rather than a
        new comment. An identical comment is refused. Mentioning the bot itself
        is neutralised and too many @mentions are refused. A footer linking to
        this run's log is added.
        """
        args = {"repo": repo, "number": number, "body": body}
        path = f"/repos/{repo}/issues/{number}/comments"
        nonce = runtime.nonce_for("create_comment", args)

        def perform(p: Mapping[str, Any]) -> WriteOutcome:
            data = once(
                nonce,
                lambda: gw.post(path, json={"body": p["body"]}, may_repeat=False).body,
                lambda: find_comment(
                    gw, repo, number, kind="backlink", nonce=nonce, bot=config.bot
                ),
                f"the comment on {repo}#{number}",
            )
            return WriteOutcome(
                f"commented on {repo}#{number}: {data['html_url']} (comment id {data['id']})",
                data["html_url"],
                "comment",
                comment_id=int(data["id"]),
            )

        def stage(p: Mapping[str, Any]) -> StagedWrite:
            return staged_request("POST", path, {"body": p["body"]}, f"comment on {repo}#{number}")

        return await runtime.write(
            "create_comment", args, prepare=body_of(args, nonce), perform=perform, stage=stage
        )

    @tool(server, name="create_pull_request", annotations=CREATE)
    async def create_pull_request(repo: str, title: str, body: str, head: str, base: str) -> str:
        """Open a pull request on repo from a branch of the bot's fork.

        Push the branch first with push_branch. head is "<bot>:<branch>" (or
        just the branch name); base is the target branch in repo, usually its
        default branch. One pull request per repository per run by default; to
        change it later, push more commits to the same branch.
        """
        args = {"repo": repo, "title": title, "body": body, "head": head, "base": base}
        path = f"/repos/{repo}/pulls"

        def payload(p: Mapping[str, Any]) -> dict[str, Any]:
            branch = policy.head_branch(head, config)
            return {
                "title": p["title"],
                "body": p["body"],
                "head": f"{config.bot}:{branch}",
                "base": base,
            }

        nonce = runtime.nonce_for("create_pull_request", args)

        def find_pull() -> dict[str, Any] | None:
            head_ref = f"{config.bot}:{policy.head_branch(head, config)}"
            for pull in gw.paginate(path, params={"state": "all", "head": head_ref}):
                if mine(pull, nonce):
                    return dict(pull)
            return None

        def perform(p: Mapping[str, Any]) -> WriteOutcome:
            data = once(
                nonce,
                lambda: gw.post(path, json=payload(p), may_repeat=False).body,
                find_pull,
                f"the pull request on {repo}",
                LISTED,
            )
            return WriteOutcome(
                f"opened pull request #{data['number']}: {data['html_url']}",
                data["html_url"],
                "pull_request",
            )

        def stage(p: Mapping[str, Any]) -> StagedWrite:
            return staged_request(
                "POST", path, payload(p), f"open a pull request on {repo} from {head} into {base}"
            )

        return await runtime.write(
            "create_pull_request", args, prepare=body_of(args, nonce), perform=perform, stage=stage
        )

    @tool(
        server,
        name="push_branch",
        annotations=PUSH,
        description=(
            "Push a branch of your local workspace to the bot's fork of the repository you work "
            f'on. The branch name must start with "{config.branch_prefix}"; commit first. The '
            "fork is created if it does not exist. Changes under .github/workflows/ are refused "
            "unless the installation allows them. A branch this run did not create is only "
            "fast-forwarded, never overwritten; nothing is ever deleted. Then open a pull "
            "request with create_pull_request."
        ),
    )
    async def push_branch(branch: str) -> str:
        started = runtime.clock()
        asked = {"branch": branch}
        if pusher is None:
            return runtime.fail_now(
                "push_branch",
                asked,
                PushFailed("this server has no workspace to push from"),
                started,
            )
        try:
            # Nothing is taken from the agent for a push policy would refuse anyway.
            runtime.check("push_branch", {**asked, "sha": ""}, await runtime.fresh_blocklist())
            taken = await anyio.to_thread.run_sync(lambda: pusher.take(branch))
        except Refused as refused:
            return runtime.refuse_now("push_branch", asked, refused, started)
        except Exception as error:
            return runtime.fail_now("push_branch", asked, error, started)
        args = {"branch": branch, "sha": taken.sha}

        def stage(_: Mapping[str, Any]) -> StagedWrite:
            return StagedWrite(
                summary=(
                    f"push {branch} at {taken.sha[:12]} to {config.bot}'s fork of "
                    f"{config.trigger_repo}"
                ),
                request={"git": "push", "branch": branch, "sha": taken.sha},
            )

        return await runtime.write(
            "push_branch", args, perform=lambda _: pusher.push(taken), stage=stage
        )

    @tool(server, name="update_comment", annotations=EDIT)
    async def update_comment(repo: str, comment_id: int, body: str) -> str:
        """Replace the body of a comment this run created (comment_id from create_comment).

        Comments written by anyone else, or by earlier runs, cannot be edited. A
        comment may be edited a few times per run (3 by default), and the mention
        limit counts everyone any of its versions mentioned.
        """
        args = {"repo": repo, "comment_id": comment_id, "body": body}
        path = f"/repos/{repo}/issues/comments/{comment_id}"

        def perform(p: Mapping[str, Any]) -> WriteOutcome:
            data = gw.patch(path, json={"body": p["body"]}).body
            return WriteOutcome(
                f"updated comment {comment_id}: {data['html_url']}", data["html_url"]
            )

        def stage(p: Mapping[str, Any]) -> StagedWrite:
            return staged_request(
                "PATCH", path, {"body": p["body"]}, f"edit comment {comment_id} in {repo}"
            )

        return await runtime.write(
            "update_comment", args, prepare=body_of(args), perform=perform, stage=stage
        )

    @tool(server, name="delete_comment", annotations=EDIT)
    async def delete_comment(repo: str, comment_id: int) -> str:
        """Delete a comment this run created.

        Comments by anyone else, or from earlier runs, cannot be deleted.
        Deleting does not give back a comment slot on that thread.
        """
        args = {"repo": repo, "comment_id": comment_id}
        path = f"/repos/{repo}/issues/comments/{comment_id}"

        def perform(_: Mapping[str, Any]) -> WriteOutcome:
            gw.delete(path)
            return WriteOutcome(f"deleted comment {comment_id} in {repo}")

        def stage(_: Mapping[str, Any]) -> StagedWrite:
            return staged_request("DELETE", path, None, f"delete comment {comment_id} in {repo}")

        return await runtime.write("delete_comment", args, perform=perform, stage=stage)

    def state_tool(kind: str) -> Callable[[str], Any]:
        async def tool(text: str) -> str:
            args = {"text": text}

            def prepare() -> Mapping[str, Any]:
                return {"text": policy.prepare_line(text, kind, config, secrets=secrets)}  # type: ignore[arg-type]

            def perform(p: Mapping[str, Any]) -> WriteOutcome:
                if runtime.append_entry is None:
                    raise OperationFailed(f"the {kind} issue is not available to this server")
                url = runtime.append_entry(kind, p["text"])
                return WriteOutcome(f"{kind} entry saved: {url}", url, kind)

            def stage(p: Mapping[str, Any]) -> StagedWrite:
                return StagedWrite(
                    summary=f"append to the {kind} issue: {p['text']!r}",
                    request={"state": kind, "text": p["text"]},
                )

            return await runtime.write(kind, args, prepare=prepare, perform=perform, stage=stage)

        return tool

    tool(
        server,
        name="history",
        annotations=CREATE,
        description=(
            "Append one line of plain text to the bot's run history: what this run did and its "
            "outcome, for future runs to read. Call it when asked for the run summary. One line, "
            f"at most {config.history_entry_chars} characters, no @mentions."
        ),
    )(state_tool("history"))

    tool(
        server,
        name="memory",
        annotations=CREATE,
        description=(
            "Save one line to the bot's long-term memory, shown to every future run: a durable "
            "fact or lesson (a maintainer's preference, a repository convention), not a log of "
            f"this run. At most {config.permissions.memory_writes} per run, "
            f"{config.memory_entry_chars} characters each; entries are never edited or deleted."
        ),
    )(state_tool("memory"))

    if config.discussions_write:

        @tool(server, name="create_discussion_comment", annotations=CREATE)
        async def create_discussion_comment(repo: str, number: int, body: str) -> str:
            """Comment on a GitHub discussion (number is the discussion number).

            The same per-thread limits and body checks as create_comment apply.
            """
            args = {"repo": repo, "number": number, "body": body}
            owner, _, name = repo.partition("/")
            nonce = runtime.nonce_for("create_discussion_comment", args)
            where = {"owner": owner, "name": name, "number": number}

            def find_discussion_comment() -> dict[str, Any] | None:
                found = gw.graphql(DISCUSSION_COMMENTS_QUERY, where)
                discussion = (found.get("repository") or {}).get("discussion") or {}
                for node in (discussion.get("comments") or {}).get("nodes") or []:
                    item = {"user": node.get("author") or {}, "body": node.get("body")}
                    if mine(item, nonce):
                        return {"comment": node}
                return None

            def perform(p: Mapping[str, Any]) -> WriteOutcome:
                found = gw.graphql(DISCUSSION_ID_QUERY, where)
                discussion = (found.get("repository") or {}).get("discussion")
                if not discussion:
                    raise OperationFailed(f"no discussion #{number} in {repo}")
                variables = {"discussionId": discussion["id"], "body": p["body"]}
                data = once(
                    nonce,
                    lambda: {
                        "comment": gw.graphql(ADD_DISCUSSION_COMMENT, variables)[
                            "addDiscussionComment"
                        ]["comment"]
                    },
                    find_discussion_comment,
                    f"the comment on discussion {repo}#{number}",
                )
                comment = data["comment"]
                return WriteOutcome(
                    f"commented on discussion {repo}#{number}: {comment['url']}",
                    comment["url"],
                    "comment",
                )

            def stage(p: Mapping[str, Any]) -> StagedWrite:
                return StagedWrite(
                    summary=f"comment on discussion {repo}#{number}",
                    request={"graphql": "addDiscussionComment", "body": p["body"]},
                )

            return await runtime.write(
                "create_discussion_comment",
                args,
                prepare=body_of(args, nonce),
                perform=perform,
                stage=stage,
            )
