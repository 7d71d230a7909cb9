"""Every tool the server offers, in one list: its name, parameters, hints and description.

A read names the plain function that fetches (``reads.reader``); a write names
the two that prepare and send (``writes.operations``, ``writes.labels``, and
``push.tool`` for ``push_branch``). ``mcp_server`` serves this list and calls the functions. The
descriptions are what the model reads about each tool. Each write's entry holds its
spec (``tusk.mcp.gate.specs.WriteSpec``): what the gate, the audit and approval know of
it; the entries hand their specs to the gate as the list is built. A new write tool is
its model, its prepare and send, and one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.types import ToolAnnotations
from pydantic import BaseModel

from tusk.mcp.gate.policy import PolicyConfig
from tusk.mcp.gate.specs import WriteSpec, register
from tusk.mcp.push.tool import PushBranch, prepare_push, send_push
from tusk.mcp.reads import reader as r
from tusk.mcp.server.runtime import Runtime
from tusk.mcp.writes import operations as w
from tusk.mcp.writes.labels import AddLabel, prepare_label, send_label
from tusk.mcp.writes.outcomes import Prepared, WriteOutcome

READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
CREATE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)
PUSH = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
EDIT = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
)

Fetch = Callable[[r.Reader, Any], Any]
Prepare = Callable[[Runtime, Any], Prepared]
Send = Callable[[Runtime, Any, Prepared], WriteOutcome]


@dataclass(frozen=True)
class Tool:
    name: str
    args: type[BaseModel]
    annotations: ToolAnnotations
    description: str | Callable[[PolicyConfig], str]
    fetch: Fetch | None = None  # a read
    prepare: Prepare | None = None  # a write, with send
    send: Send | None = None
    spec: WriteSpec | None = None  # a write: what the gate, audit and self-checks know of it

    def describe(self, config: PolicyConfig) -> str:
        return self.description if isinstance(self.description, str) else self.description(config)


def _read(name: str, args: type[BaseModel], fetch: Fetch, description: Any) -> Tool:
    return Tool(name, args, READ, description, fetch=fetch)


READS = (
    _read(
        "get_issue",
        r.GetIssue,
        r.get_issue,
        "Read an issue (or a pull request's conversation) with its comments.\n\nrepo is \"owner/"
        'name". Comments come 100 per page, oldest first; when more_comments is true, call '
        "again with comments_page + 1.",
    ),
    _read(
        "get_pull_request",
        r.GetPullRequest,
        r.get_pull_request,
        "Read a pull request: head/base branches, state, body, its reviews and review comments."
        "\n\nReviews and review comments come 100 per page. For the conversation comments use "
        "get_issue with the same number; for the changes use get_pull_request_files or "
        "get_pull_request_diff.",
    ),
    _read(
        "get_pull_request_files",
        r.GetPullRequest,
        r.get_pull_request_files,
        "List the files a pull request changes, with their patches, 100 per page.",
    ),
    _read(
        "get_pull_request_diff",
        r.GetPullRequestDiff,
        r.get_pull_request_diff,
        "Read a pull request's unified diff, 60,000 characters at a time.\n\nWhen next_offset "
        "is not null, call again with offset=next_offset for the rest.",
    ),
    _read(
        "get_discussion",
        r.GetDiscussion,
        r.get_discussion,
        "Read a discussion with its comments and their replies (50 comments per call).\n\n"
        "When comments.pageInfo.hasNextPage is true, call again with after=endCursor.",
    ),
    _read(
        "get_file_contents",
        r.GetFileContents,
        r.get_file_contents,
        "Read a file (or list a directory) of a repository on GitHub, at ref or default branch."
        "\n\nText comes 100,000 characters at a time; use offset=next_offset for more. Your "
        "local checkout is usually faster for the repository you work on.",
    ),
    _read(
        "list_branches",
        r.ListBranches,
        r.list_branches,
        "List a repository's branches with their latest commit, 100 per page.",
    ),
    _read(
        "get_repository",
        r.RepoOnly,
        r.get_repository,
        "Read a repository's metadata: description, default branch, fork parent, visibility.",
    ),
    _read(
        "get_my_fork",
        r.RepoOnly,
        r.get_my_fork,
        lambda c: (
            f"Show your account's ({c.bot}) fork of repo, with its branches, or say there is "
            "none yet. Pull requests you open come from this fork; push_branch creates it when "
            "needed."
        ),
    ),
    _read(
        "search_issues",
        r.SearchIssues,
        r.search_issues,
        "Search issues and pull requests with GitHub's search syntax, 30 per page.\n\nName the "
        'repositories with repo: qualifiers, e.g. "repo:owner/name is:open label:bug crash"; '
        "only this run's repositories can be searched.",
    ),
    _read(
        "get_check_status",
        r.GetCheckStatus,
        r.get_check_status,
        "Show the CI state of a commit, branch or tag: check runs and commit statuses.",
    ),
)

WRITES = (
    Tool(
        "create_issue",
        w.CreateIssue,
        CREATE,
        'Open a new issue in repo ("owner/name").\n\nLimited to one issue per repository per '
        "run unless configured otherwise; an identical call is refused the second time. A "
        "footer linking to this run's log is added to the body. Never put secrets in the body.",
        prepare=w.prepare_issue,
        send=w.send_issue,
        spec=WriteSpec(
            "issue",
            "repo_arg",
            "issues",
            own_only=None,
            releases_own=False,
            counts_toward_run=True,
            creates="issue",
            opens_thread=True,
            discussion=False,
        ),
    ),
    Tool(
        "create_comment",
        w.CreateComment,
        CREATE,
        "Comment on an issue or on a pull request's conversation (number is the issue/PR "
        "number).\n\nAt most a few comments per thread per run (2 by default): prefer one "
        "complete comment, and fix a mistake with update_comment rather than a new comment. An "
        "identical comment is refused. Mentioning the bot itself is neutralised and too many "
        "@mentions are refused. A footer linking to this run's log is added.",
        prepare=w.prepare_comment,
        send=w.send_comment,
        spec=WriteSpec(
            "comment",
            "repo_arg",
            "comments",
            own_only=None,
            releases_own=False,
            counts_toward_run=True,
            creates="comment",
            opens_thread=False,
            discussion=False,
        ),
    ),
    Tool(
        "create_pull_request",
        w.CreatePullRequest,
        CREATE,
        "Open a pull request on repo from a branch of the bot's fork.\n\nPush the branch first "
        'with push_branch. head is "<bot>:<branch>" (or just the branch name); base is the '
        "target branch in repo, usually its default branch. One pull request per repository "
        "per run by default; to change it later, push more commits to the same branch.",
        prepare=w.prepare_pull_request,
        send=w.send_pull_request,
        spec=WriteSpec(
            "pull_request",
            "repo_arg",
            "pull_requests",
            own_only=None,
            releases_own=False,
            counts_toward_run=True,
            creates="pull_request",
            opens_thread=True,
            discussion=False,
            checked_args=(("head", "head"), ("base", "base")),
        ),
    ),
    Tool(
        "push_branch",
        PushBranch,
        PUSH,
        lambda c: (
            "Push a branch of your local workspace to the bot's fork of the repository you work "
            f'on. The branch name must start with "{c.branch_prefix}"; commit first. The fork '
            "is created if it does not exist. Changes under .github/workflows/ are refused "
            "unless the installation allows them. A branch this run did not create is only "
            "fast-forwarded, never overwritten; nothing is ever deleted. Then open a pull "
            "request with create_pull_request."
        ),
        prepare=prepare_push,
        send=send_push,
        spec=WriteSpec(
            "push",
            "trigger_repo",
            None,
            own_only=None,
            releases_own=False,
            counts_toward_run=True,
            creates="branch",
            opens_thread=False,
            discussion=False,
            checked_args=(("branch", "branch"),),
        ),
    ),
    Tool(
        "update_comment",
        w.UpdateComment,
        EDIT,
        "Replace the body of a comment this run created (comment_id from create_comment).\n\n"
        "Comments written by anyone else, or by earlier runs, cannot be edited. A comment may "
        "be edited a few times per run (3 by default), and the mention limit counts everyone "
        "any of its versions mentioned.",
        prepare=w.prepare_update,
        send=w.send_update,
        spec=WriteSpec(
            "comment",
            "repo_arg",
            "edits",
            own_only="comment",
            releases_own=False,
            counts_toward_run=True,
            creates=None,
            opens_thread=False,
            discussion=False,
        ),
    ),
    Tool(
        "delete_comment",
        w.DeleteComment,
        EDIT,
        "Delete a comment this run created.\n\nComments by anyone else, or from earlier runs, "
        "cannot be deleted. Deleting does not give back a comment slot on that thread.",
        prepare=w.prepare_delete,
        send=w.send_delete,
        spec=WriteSpec(
            "comment",
            "repo_arg",
            None,
            own_only="comment",
            releases_own=True,
            counts_toward_run=True,
            creates=None,
            opens_thread=False,
            discussion=False,
        ),
    ),
    Tool(
        "history",
        w.StateLine,
        CREATE,
        lambda c: (
            "Append one line of plain text to the bot's run history: what this run did and its "
            "outcome, for future runs to read. Call it when asked for the run summary. One "
            f"line, at most {c.history_entry_chars} characters, no @mentions."
        ),
        prepare=w.prepare_history,
        send=w.send_line,
        spec=WriteSpec(
            None,
            "control_repo",
            "history",
            own_only=None,
            releases_own=False,
            counts_toward_run=False,
            creates="history",
            opens_thread=False,
            discussion=False,
            survives_go_away=True,
        ),
    ),
    Tool(
        "memory",
        w.StateLine,
        CREATE,
        lambda c: (
            "Save one line to the bot's long-term memory, shown to every future run: a durable "
            "fact or lesson (a maintainer's preference, a repository convention), not a log of "
            f"this run. At most {c.permissions.memory_writes} per run, "
            f"{c.memory_entry_chars} characters each; entries are never edited or deleted."
        ),
        prepare=w.prepare_memory,
        send=w.send_line,
        spec=WriteSpec(
            "memory",
            "control_repo",
            "memory",
            own_only=None,
            releases_own=False,
            counts_toward_run=False,
            creates="memory",
            opens_thread=False,
            discussion=False,
        ),
    ),
    Tool(
        "add_label",
        AddLabel,
        PUSH,  # not destructive, and adding it again changes nothing
        "Add one label to an issue or pull request this run opened (number is its number)."
        "\n\nOnly the run's own issues and pull requests can be labelled; a label that does not "
        "exist yet in the repository is created by GitHub.",
        prepare=prepare_label,
        send=send_label,
        spec=WriteSpec(
            "issue",
            "repo_arg",
            None,
            own_only="thread",
            releases_own=False,
            counts_toward_run=True,
            creates="label",
            opens_thread=False,
            discussion=False,
        ),
    ),
)

DISCUSSION_WRITE = Tool(
    "create_discussion_comment",
    w.CreateComment,
    CREATE,
    "Comment on a GitHub discussion (number is the discussion number).\n\nThe same "
    "per-thread limits and body checks as create_comment apply.",
    prepare=w.prepare_discussion_comment,
    send=w.send_discussion_comment,
    spec=WriteSpec(
        "comment",
        "repo_arg",
        "comments",
        own_only=None,
        releases_own=False,
        counts_toward_run=True,
        creates="comment",
        opens_thread=False,
        discussion=True,
    ),
)


register({tool.name: tool.spec for tool in (*WRITES, DISCUSSION_WRITE) if tool.spec is not None})


def offered(config: PolicyConfig) -> dict[str, Tool]:
    """The tools this run's server offers, by name (discussion writes only when enabled)."""
    tools = (*READS, *WRITES, *((DISCUSSION_WRITE,) if config.discussions_write else ()))
    return {tool.name: tool for tool in tools}
