"""What the agent may write: one pure module, no I/O (MISSION M2-M5, M7, M9, M11-M13).

The server asks ``check_write`` before any write and ``prepare_body`` /
``prepare_line`` for the text it would post; both raise ``Refused`` with a
stable code and a reason written for the model. After a write was performed
(or staged) the server calls ``record_write`` so limits and duplicates see it.

Everything the decisions depend on is in ``PolicyConfig`` (fixed for the run),
``RunState`` (what this run has written so far) and each write tool's spec
(``tusk.mcp.gate.specs``, given in each catalog entry): no decision here names a tool.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, Literal

from tusk.contracts.models import Blocklist, PermissionConfig, is_valid_repo
from tusk.mcp.gate import posted
from tusk.mcp.gate.posted import check_secrets as check_secrets
from tusk.mcp.gate.posted import find_secret as find_secret
from tusk.mcp.gate.posted import mentioned_logins as mentioned_logins
from tusk.mcp.gate.refusal import RefusalCode as RefusalCode
from tusk.mcp.gate.refusal import Refused as Refused
from tusk.mcp.gate.specs import ArgCheck, WriteSpec, write_spec
from tusk.text.markers import backlink_footer, neutralise_markers

GITHUB_BODY_LIMIT = 65536
GITHUB_TITLE_LIMIT = 256
HISTORY_WRITES_PER_RUN = 2  # the history pass asks once; one retry with new text is fair


@dataclass(frozen=True)
class PolicyConfig:
    """Everything fixed for one run that the decisions read."""

    bot: str
    jobid: str
    control_repo: str
    trigger_repo: str
    trigger_number: int | None
    log_issue_url: str
    permissions: PermissionConfig
    blocklist: Blocklist = field(default_factory=Blocklist)
    go_away_phrase: str = "go away"
    record_only: bool = False  # writes recorded in the log issue, none performed
    approval: bool = False  # every write kept for a person's approval (tusk.approval)
    discussions_write: bool = False
    mentions_per_post: int = 5
    memory_entry_chars: int = 500
    history_entry_chars: int = 300
    branch_prefix: str = "tusk/"
    allow_workflow_changes: bool = False
    fork_wait_seconds: float = 300.0
    edits_per_comment: int = 3
    writes_per_run: int = 10
    # Where writes may go besides the trigger repository (lowercase; read_scope's
    # write_repositories: the bot's fork, repositories the task names, agent.write_repos).
    write_repos: frozenset[str] = frozenset()


@dataclass
class RunState:
    """What this run has written so far (performed or staged)."""

    write_keys: set[str] = field(default_factory=set)
    comments: Counter[tuple[str, int]] = field(default_factory=Counter)
    issues: Counter[str] = field(default_factory=Counter)
    pull_requests: Counter[str] = field(default_factory=Counter)
    memory_writes: int = 0
    history_writes: int = 0
    own_comments: dict[int, str] = field(default_factory=dict)  # comment id -> repo (lowercase)
    own_branches: set[str] = field(default_factory=set)
    own_threads: set[tuple[str, int]] = field(default_factory=set)  # (repo lowercase, number)
    edits: Counter[int] = field(default_factory=Counter)  # comment id -> update_comment calls
    # comment id -> every login it has mentioned, over all its versions: GitHub notifies
    # a login added by an edit, so the cap must hold for the comment's whole life.
    mentioned: dict[int, set[str]] = field(default_factory=dict)
    writes: int = 0  # writes that count against PolicyConfig.writes_per_run


# --------------------------------------------------------------------------- helpers


def write_key(tool: str, args: Mapping[str, Any]) -> str:
    """Identity of a call for M3 and the loop detector (M8): the tool plus its canonical
    arguments (repository case, spacing, and what a text shows rather than how)."""
    canonical = {
        k: (
            v.strip().lower()
            if k == "repo" and isinstance(v, str)
            else posted.canonical_text(v)
            if k in ("body", "title", "text") and isinstance(v, str)
            else " ".join(v.split())
            if isinstance(v, str)
            else v
        )
        for k, v in args.items()
    }
    return tool + ":" + json.dumps(canonical, sort_keys=True, separators=(",", ":"))


def target_repo(tool: str, args: Mapping[str, Any], config: PolicyConfig) -> str:
    """The repository a write lands in (or acts for: a push serves the trigger's repo)."""
    spec = write_spec(tool)
    lands_in = spec.lands_in if spec is not None else "repo_arg"
    if lands_in == "control_repo":
        return config.control_repo
    if lands_in == "trigger_repo":
        return config.trigger_repo
    return str(args.get("repo", ""))


def target_label(tool: str, args: Mapping[str, Any], config: PolicyConfig) -> str:
    """How the audit log names the target of a call."""
    repo = target_repo(tool, args, config)
    spec = write_spec(tool)
    if "number" in args:
        return f"{repo}#{args['number']}"
    if "comment_id" in args:
        return f"{repo} comment {args['comment_id']}"
    if spec is not None and spec.lands_in == "trigger_repo":
        return f"{repo} fork branch {args.get('branch', '')}"
    if spec is not None and spec.lands_in == "control_repo":
        return f"{repo} {tool} issue"
    return repo


def kept_for_approval(tool: str) -> bool:
    """Whether approval mode keeps this write for a person: every write but the state
    issues' entries, which have caps of their own and stay possible at a run's end."""
    spec = write_spec(tool)
    return spec is not None and spec.lands_in != "control_repo"


# What the refusal below promises: letters, digits, "-", "_", "." and "/" (ASCII only, so no
# bidi override or look-alike letter can hide in a name).
_BRANCH_CHARACTERS = re.compile(r"[A-Za-z0-9._/-]+")


def validate_branch(branch: str, config: PolicyConfig) -> None:
    """Branch names the agent may push: under the prefix, a plain ref name."""
    check_secrets(branch, "branch name", ())
    if not branch.startswith(config.branch_prefix):
        raise Refused(
            "PERMISSION_DENIED",
            f"branch {branch!r} is outside this run's namespace; name it "
            f"{config.branch_prefix}<something> and push again.",
        )
    bad = (
        _BRANCH_CHARACTERS.fullmatch(branch) is None
        or branch.startswith(("-", "/", "+"))
        or branch.endswith(("/", ".", ".lock"))
        or any(part in branch for part in ("..", "@{", "//", ":", "\\", "?", "*", "[", "~", "^"))
        or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in branch)
        or branch == config.branch_prefix
    )
    if bad:
        raise Refused(
            "FORBIDDEN_OPERATION",
            f"{branch!r} is not a plain branch name; use letters, digits, '-', '_', '.' "
            f"and '/' under {config.branch_prefix}.",
        )


def head_branch(head: str, config: PolicyConfig) -> str:
    """The branch of a PR head, which must live on the bot's fork."""
    owner, sep, branch = head.partition(":")
    if not sep:
        owner, branch = config.bot, head
    if owner.lower() != config.bot.lower():
        raise Refused(
            "FORBIDDEN_OPERATION",
            f"pull requests come only from {config.bot}'s fork; use head "
            f"'{config.bot}:<branch>' after push_branch.",
        )
    validate_branch(branch, config)
    return branch


def check_read_args(args: Mapping[str, Any]) -> None:
    """Arguments a read tool puts into a URL path must not step out of it.

    The HTTP client resolves '.' and '..' segments, so an unchecked repo or file
    path would turn a read tool into a GET of any endpoint the read token reaches.
    """
    repo = args.get("repo")
    if repo is not None and not (isinstance(repo, str) and is_valid_repo(repo)):
        raise Refused("FORBIDDEN_OPERATION", f"repo must be 'owner/name', got {repo!r}.")
    for key in ("path", "ref"):
        value = args.get(key)
        if isinstance(value, str) and any(
            part in (".", "..") for part in value.replace("\\", "/").split("/")
        ):
            raise Refused(
                "FORBIDDEN_OPERATION",
                f"{key} {value!r} has '.' or '..' segments; give the path from the "
                "repository root, e.g. 'src/app.py' ('' for the root).",
            )


# --------------------------------------------------------------------------- the write check


def sent_away(config: PolicyConfig, blocklist: Blocklist) -> bool:
    """Whether the trigger's repository (or its owner) sent the bot away during the run."""
    return blocklist.blocks(config.trigger_repo) and not config.blocklist.blocks(
        config.trigger_repo
    )


def check_write(
    tool: str,
    args: Mapping[str, Any],
    config: PolicyConfig,
    state: RunState,
    *,
    blocklist: Blocklist | None = None,
) -> None:
    """Raise ``Refused`` unless this write may go ahead now. Does not change ``state``.

    ``blocklist`` is the freshest one the server has (M7, G4); by default the one
    read when the run started. Once the trigger's own repository is blocked, the
    run's work there is over: every further write is refused, wherever it goes,
    except the run's history line.
    """
    blocklist = blocklist if blocklist is not None else config.blocklist
    spec = write_spec(tool)
    if spec is None:
        raise Refused(
            "FORBIDDEN_OPERATION",
            f"{tool} is not a write this server performs (no reviews, no deletions of "
            "repositories or branches, no generic API calls).",
        )
    if spec.discussion and not config.discussions_write:
        raise Refused(
            "FORBIDDEN_OPERATION",
            "writing to discussions is switched off for this installation; answer on an "
            "issue or pull request instead, or just report in your final message.",
        )
    repo = target_repo(tool, args, config)
    if not is_valid_repo(repo):
        raise Refused("FORBIDDEN_OPERATION", f"repo must be 'owner/name', got {repo!r}.")
    if not spec.survives_go_away and sent_away(config, blocklist):
        raise Refused(
            "BLOCKED_TARGET",
            f"{config.trigger_repo} (or its owner) asked the bot to go away while this run was "
            "working. No further write of this run will be made, here or elsewhere: stop now.",
        )
    if blocklist.blocks(repo):
        raise Refused(
            "BLOCKED_TARGET",
            f"{repo} (or its owner) asked the bot to go away; do not write there, by any tool. "
            "Tell the requester in your final message instead.",
        )
    _check_scope(spec, args, repo, config)
    _check_permissions(spec, args, repo, config)
    if spec.own_only == "comment":
        _check_own_comment(spec, args, repo, state)
    elif spec.own_only == "thread":
        _check_own_thread(tool, args, repo, state)
    for name, check in spec.checked_args:
        ARG_CHECKS[check](str(args.get(name, "")), config)
    if write_key(tool, args) in state.write_keys:
        raise Refused(
            "DUPLICATE_WRITE",
            f"this exact {tool} call was already made in this run; do not repeat it. "
            "If something is missing, say so in a different way or move on.",
        )
    _check_limits(spec, args, repo, config, state)


def _check_base(base: str, config: PolicyConfig) -> None:
    check_secrets(base, "base branch", ())


ARG_CHECKS: Mapping[ArgCheck, Callable[[str, PolicyConfig], object]] = {
    "branch": validate_branch,
    "head": head_branch,
    "base": _check_base,
}


def _check_scope(spec: WriteSpec, args: Mapping[str, Any], repo: str, config: PolicyConfig) -> None:
    """Writes go only to the run's repositories (``OUT_OF_SCOPE`` elsewhere). The control
    repository takes the history and memory tools' entries, and, when the bot was mentioned
    there, replies on that one thread."""
    key, trigger = repo.lower(), config.trigger_repo.lower()
    if spec.lands_in == "control_repo":
        return
    if key == config.control_repo.lower():
        on_trigger = key == trigger and (
            args.get("number") == config.trigger_number or "comment_id" in args
        )
        if on_trigger and not spec.opens_thread:
            return
        raise Refused(
            "OUT_OF_SCOPE",
            f"{repo} is the bot's control repository: it takes writes only through the history "
            "and memory tools. Report in your final message instead.",
        )
    fork = f"{config.bot}/{trigger.split('/', 1)[-1]}".lower()
    if key in (trigger, fork) or key in config.write_repos:
        return
    where = sorted({trigger, fork, *config.write_repos} - {config.control_repo.lower()})
    raise Refused(
        "OUT_OF_SCOPE",
        f"{repo} is not one of this run's repositories; write only to {', '.join(where)}. An "
        "operator can add repositories with agent.write_repos; otherwise say in your final "
        "message what should be done there.",
    )


def _check_permissions(
    spec: WriteSpec, args: Mapping[str, Any], repo: str, config: PolicyConfig
) -> None:
    perms = config.permissions
    operation = spec.operation
    marker = f" (permission marker: {perms.marker})" if perms.marker else ""
    if operation is not None and not perms.allows(operation):
        raise Refused(
            "PERMISSION_DENIED",
            f"this run may not perform '{operation}' writes{marker}. Allowed: "
            f"{', '.join(perms.operations) or 'none'}.",
        )
    if spec.lands_in != "repo_arg":  # the state issues, or the trigger's own fork
        return
    if perms.repos is not None and repo.lower() not in {r.lower() for r in perms.repos}:
        raise Refused(
            "PERMISSION_DENIED",
            f"this run may write only to {', '.join(perms.repos)}{marker}, not {repo}.",
        )
    if perms.only_this_thread:
        here = f"{config.trigger_repo}#{config.trigger_number}"
        same_repo = repo.lower() == config.trigger_repo.lower()
        if spec.opens_thread:
            raise Refused(
                "PERMISSION_DENIED",
                f"this run may only reply on {here}{marker}; it may not open new issues or PRs.",
            )
        if "number" in args and not (same_repo and args["number"] == config.trigger_number):
            raise Refused("PERMISSION_DENIED", f"this run may only reply on {here}{marker}.")


def _check_own_comment(
    spec: WriteSpec, args: Mapping[str, Any], repo: str, state: RunState
) -> None:
    comment_id = args.get("comment_id")
    owner = state.own_comments.get(comment_id) if isinstance(comment_id, int) else None
    if owner is None or owner != repo.lower():
        verb = "delete" if spec.releases_own else "edit"
        raise Refused(
            "FORBIDDEN_OPERATION",
            f"you may {verb} only comments this run created in that repository; comment "
            f"{comment_id} in {repo} is not one of them. Post a new comment instead.",
        )


def _check_own_thread(tool: str, args: Mapping[str, Any], repo: str, state: RunState) -> None:
    number = args.get("number")
    if not isinstance(number, int) or (repo.lower(), number) not in state.own_threads:
        raise Refused(
            "FORBIDDEN_OPERATION",
            f"{tool} may touch only issues and pull requests this run opened; "
            f"{repo}#{number} is not one of them.",
        )


def _check_limits(
    spec: WriteSpec, args: Mapping[str, Any], repo: str, config: PolicyConfig, state: RunState
) -> None:
    if spec.counts_toward_run and state.writes >= config.writes_per_run:
        raise Refused(
            "LIMIT_EXCEEDED",
            f"this run has made {state.writes} writes, the most one run may make across all "
            f"repositories ({config.writes_per_run}). Finish with what you have and report in "
            "your final message.",
        )
    if spec.counter is not None:
        reason = _over_limit(spec.counter, args, repo, config, state)
        if reason is not None:
            raise Refused("LIMIT_EXCEEDED", reason)


def _over_limit(
    counter: str, args: Mapping[str, Any], repo: str, config: PolicyConfig, state: RunState
) -> str | None:
    """Why the write would pass the limit of the counter it feeds, or None."""
    perms, key = config.permissions, repo.lower()
    if counter == "edits":
        comment_id = int(args.get("comment_id", 0))
        if state.edits[comment_id] >= config.edits_per_comment:
            return (
                f"comment {comment_id} was already edited {state.edits[comment_id]} time(s) in "
                f"this run, the limit is {config.edits_per_comment}. Leave it as it is."
            )
    elif counter == "comments":
        thread = (key, int(args.get("number", 0)))
        if state.comments[thread] >= perms.comments_per_thread:
            return (
                f"this run already posted {state.comments[thread]} comment(s) on "
                f"{repo}#{thread[1]}, the limit is {perms.comments_per_thread}. Edit your own "
                "comment with update_comment instead of posting another."
            )
    elif counter == "issues" and state.issues[key] >= perms.issues_per_repo:
        return f"this run may open {perms.issues_per_repo} issue(s) in {repo} and has done so."
    elif counter == "pull_requests" and state.pull_requests[key] >= perms.prs_per_repo:
        return (
            f"this run may open {perms.prs_per_repo} pull request(s) in {repo} and has done "
            "so; push more commits to the same branch to update it."
        )
    elif counter == "memory" and state.memory_writes >= perms.memory_writes:
        return f"this run may add {perms.memory_writes} memory entr(y/ies) and has used them all."
    elif counter == "history" and state.history_writes >= HISTORY_WRITES_PER_RUN:
        return "this run's history line was already written; nothing more to do."
    return None


# --------------------------------------------------------------------------- outgoing text


def prepare_body(
    body: str,
    config: PolicyConfig,
    *,
    secrets: Sequence[str] = (),
    mentioned_before: Set[str] = frozenset(),
    nonce: str | None = None,
) -> str:
    """The body as it will be posted: checked on its rendering (``posted``), self-mentions
    neutralised, what would hide the footer closed, the footer added (M9).

    ``mentioned_before``: whom earlier versions of the same comment mentioned; the
    mention cap counts them too, so edits cannot notify more people than one post.
    ``nonce`` goes into the footer's marker of a create (``tusk.github.once``).
    """
    check_secrets(body, "body", secrets)
    body = neutralise_markers(posted.neutralise_self_mentions(body, config.bot))
    mentions = mentioned_logins(body) - {config.bot.lower()}
    over_life = mentions | set(mentioned_before)
    if len(over_life) > config.mentions_per_post:
        earlier = len(over_life) - len(mentions)
        also = f" (with {earlier} more its earlier versions mentioned)" if earlier else ""
        raise Refused(
            "LIMIT_EXCEEDED",
            f"the body mentions {len(mentions)} people{also} as GitHub renders it, at most "
            f"{config.mentions_per_post} are allowed per post over all its edits; mention only "
            "the people who must be notified (write names without '@' otherwise).",
        )
    footer = backlink_footer(
        log_issue_url=config.log_issue_url,
        bot=config.bot,
        go_away_phrase=config.go_away_phrase,
        jobid=config.jobid,
        nonce=nonce,
    )
    text = posted.close_for_footer(
        body, footer, link=("run log", config.log_issue_url), line=footer_line(config)
    )
    if len(text) > GITHUB_BODY_LIMIT:
        room = GITHUB_BODY_LIMIT - (len(text) - len(body))
        raise Refused(
            "LIMIT_EXCEEDED",
            f"the body is {len(body)} characters; with the run's footer it must stay within "
            f"{room}. Shorten it (link to files or the PR diff instead of pasting them).",
        )
    return text


def footer_line(config: PolicyConfig) -> str:
    """The footer as a reader sees it (``tusk.text.markers.backlink_footer``)."""
    return (
        f"🤖 Posted by {config.bot}'s agent · run log · comment @{config.bot} "
        f"{config.go_away_phrase} to remove the bot from your repositories"
    )


def check_title(title: str, *, secrets: Sequence[str] = ()) -> str:
    check_secrets(title, "title", secrets)
    title = " ".join(title.split())
    if not title:
        raise Refused("FORBIDDEN_OPERATION", "the title is empty; give it a short summary.")
    if len(title) > GITHUB_TITLE_LIMIT:
        raise Refused(
            "LIMIT_EXCEEDED",
            f"the title has {len(title)} characters; keep it under {GITHUB_TITLE_LIMIT}.",
        )
    return title


def prepare_line(
    text: str,
    kind: Literal["history", "memory"],
    config: PolicyConfig,
    *,
    secrets: Sequence[str] = (),
) -> str:
    """A history or memory entry: one line of plain text, capped, mentioning nobody."""
    check_secrets(text, f"{kind} entry", secrets)
    line = " ".join(text.split())
    if not line:
        raise Refused("FORBIDDEN_OPERATION", f"the {kind} entry is empty; write one line.")
    cap = config.memory_entry_chars if kind == "memory" else config.history_entry_chars
    if len(line) > cap:
        raise Refused(
            "LIMIT_EXCEEDED",
            f"the {kind} entry has {len(line)} characters, at most {cap} are allowed; shorten it.",
        )
    return neutralise_markers(posted.neutralise_all_mentions(line))


# --------------------------------------------------------------------------- bookkeeping


def record_write(
    tool: str,
    args: Mapping[str, Any],
    config: PolicyConfig,
    state: RunState,
    *,
    comment_id: int | None = None,
    created_branch: bool = False,
    number: int | None = None,
    uncertain: bool = False,
    counted: bool = False,
) -> None:
    """Count a write that was performed or staged, so later checks see it.

    ``uncertain``: its answer was lost and it may exist; it counts against every limit
    (failing closed) but is no duplicate yet, so repeating it looks for it by its nonce.
    ``counted``: an uncertain attempt already counted it; now it is known.
    """
    spec = write_spec(tool)
    if spec is None:
        return
    repo = target_repo(tool, args, config).lower()
    if not uncertain:
        state.write_keys.add(write_key(tool, args))
    one = 0 if counted else 1
    if spec.counts_toward_run:
        state.writes += one
    if spec.counter == "comments":
        state.comments[(repo, int(args.get("number", 0)))] += one
        if comment_id is not None:
            state.own_comments[comment_id] = repo
            state.mentioned[comment_id] = _mentioned_in(args, config)
    elif spec.counter == "edits":
        edited = int(args["comment_id"])
        state.edits[edited] += one
        state.mentioned.setdefault(edited, set()).update(_mentioned_in(args, config))
    elif spec.counter == "issues":
        state.issues[repo] += one
    elif spec.counter == "pull_requests":
        state.pull_requests[repo] += one
    elif spec.counter == "memory":
        state.memory_writes += one
    elif spec.counter == "history":
        state.history_writes += one
    if created_branch:
        state.own_branches.add(str(args.get("branch", "")))
    if number is not None:  # an issue or pull request it opened
        state.own_threads.add((repo, number))
    if spec.releases_own:
        # The comment still counts against its thread's limit: no create/delete cycling.
        state.own_comments.pop(int(args["comment_id"]), None)


def _mentioned_in(args: Mapping[str, Any], config: PolicyConfig) -> set[str]:
    body = args.get("body")
    return mentioned_logins(body) - {config.bot.lower()} if isinstance(body, str) else set()


def mentioned_before(comment_id: Any, state: RunState) -> frozenset[str]:
    """Whom the earlier versions of this run's comment ``comment_id`` mentioned."""
    return (
        frozenset(state.mentioned.get(comment_id, ()))
        if isinstance(comment_id, int)
        else frozenset()
    )


def may_force_push(branch: str, state: RunState) -> bool:
    """Only a branch this run created may be rewritten."""
    return branch in state.own_branches
