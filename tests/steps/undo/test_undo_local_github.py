"""Undo one run against the local GitHub: exactly that run's writes go, nothing of another
run or person, only for its requester or a collaborator, once, recorded on its log issue
and in its audit chain; the bot stays allowed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tusk.audit.chain import AuditLog
from tusk.audit.on_issue import audit_comments, verify_comments
from tusk.contracts.config import Settings
from tusk.contracts.models import UndoRequest
from tusk.errors import UserError
from tusk.github.thread_status import Status, ThreadStatus
from tusk.issues.state import StateStore
from tusk.steps.undo.main import execute
from tusk.text.markers import backlink_footer, first_marker, render_marker

BOT = "tusk-bot"
REPO = "alice/widgets"
CONTROL = "ops/control"
SETTINGS = Settings(bot=BOT, control_repo=CONTROL, allowed_users=("alice", "bob"))
AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def world() -> dict[str, Any]:
    return {
        "users": [{"login": login} for login in (BOT, "alice", "bob", "carol", "mallory", "ops")],
        "tokens": {
            "agent": {"user": BOT, "scopes": ["repo", "delete_repo"]},
            **{
                name: {"user": name, "scopes": ["repo"]}
                for name in ("alice", "bob", "carol", "mallory")
            },
        },
        "repos": [
            {"name": CONTROL, "collaborators": {BOT: "write"}, "labels": ["workflow"]},
            {
                "name": REPO,
                "collaborators": {"bob": "write", BOT: "write"},
                "branches": [{"name": "main"}],
                "files": {"README.md": "# Widgest\n"},
                "issues": [{"number": 1, "author": "alice", "title": "Typo", "body": "Widgest"}],
            },
            {
                "name": f"{BOT}/widgets",
                "fork_of": REPO,
                "branches": [{"name": "main"}, {"name": "tusk/fix-a"}, {"name": "tusk/fix-b"}],
            },
        ],
    }


class Run:
    """One agent run as Tusk leaves it: a log issue naming its requester, its writes with
    the run's footer, and its audit chain posted on the log issue."""

    def __init__(self, gh: Any, tmp: Path, jobid: str, requester: str) -> None:
        self.gh, self.jobid, self.requester = gh, jobid, requester
        self.bot = gh.gateway("agent")
        marker = render_marker("job", {"jobid": jobid, "repo": REPO, "requester": requester})
        self.log = self.bot.post(
            f"/repos/{CONTROL}/issues",
            json={
                "title": f"[Agent Log] {REPO} #1",
                "body": f"{marker}\n# Task",
                "labels": ["workflow"],
            },
        ).body
        self.audit = AuditLog(tmp / f"{jobid}.jsonl", clock=lambda: AT)

    def footer(self) -> str:
        return backlink_footer(
            log_issue_url=self.log["html_url"], bot=BOT, go_away_phrase="go away", jobid=self.jobid
        )

    def _record(self, tool: str, url: str, created: str) -> None:
        self.audit.append(
            tool=tool,
            kind="write",
            target=REPO,
            args={},
            decision="allowed",
            url=url,
            created=created,
        )

    def comment(self, number: int, text: str) -> dict[str, Any]:
        made = self.bot.post(
            f"/repos/{REPO}/issues/{number}/comments", json={"body": text + self.footer()}
        ).body
        self._record("create_comment", made["html_url"], "comment")
        return dict(made)

    def issue(self, title: str) -> dict[str, Any]:
        made = self.bot.post(
            f"/repos/{REPO}/issues", json={"title": title, "body": "x" + self.footer()}
        ).body
        self._record("create_issue", made["html_url"], "issue")
        return dict(made)

    def pull(self, branch: str) -> dict[str, Any]:
        self._record("push_branch", f"{self.gh.url}/{BOT}/widgets/tree/{branch}", "branch")
        made = self.bot.post(
            f"/repos/{REPO}/pulls",
            json={
                "title": "Fix",
                "head": f"{BOT}:{branch}",
                "base": "main",
                "body": "Fixes #1" + self.footer(),
            },
        ).body
        self._record("create_pull_request", made["html_url"], "pull_request")
        return dict(made)

    def status(self) -> None:
        ThreadStatus(
            self.bot,
            repo=REPO,
            number=1,
            kind="issue",
            jobid=self.jobid,
            bot=BOT,
            go_away="go away",
            log_issue_url=self.log["html_url"],
        ).show(Status("done", headline="Completed", ok=True))

    def write_up(self) -> None:
        self.audit.close()
        text = (self.audit.path).read_text(encoding="utf-8")
        records = text.count("\n")
        head = self.audit.head
        for body in audit_comments(
            text,
            jobid=self.jobid,
            run="1",
            records=records,
            head=head,
            log_url=self.log["html_url"],
        ):
            self.bot.post(
                f"/repos/{CONTROL}/issues/{self.log['number']}/comments", json={"body": body}
            )


@pytest.fixture
def gh(local_github: Any) -> Any:
    local_github.load(world())
    return local_github


def ask_undo(gh: Any, who: str, *, jobid: str = "undo-1") -> UndoRequest:
    made = (
        gh.gateway(who).post(f"/repos/{REPO}/issues/1/comments", json={"body": f"@{BOT} undo"}).body
    )
    return UndoRequest(
        jobid=jobid,
        actor=who,
        repo=REPO,
        trust_level="external",
        comment_id=str(made["id"]),
        comment_url=made["html_url"],
        comment_type="issue_comment",
        timestamp=AT,
    )


def two_runs(gh: Any, tmp: Path) -> tuple[Run, Run, dict[str, Any]]:
    """bob's earlier run and alice's later one on issue 1, and carol's own comment."""
    earlier = Run(gh, tmp, "job-bob", "bob")
    earlier.comment(1, "Looked at it.")
    earlier.pull("tusk/fix-b")
    earlier.write_up()
    carol = dict(
        gh.gateway("carol")
        .post(f"/repos/{REPO}/issues/1/comments", json={"body": "Same here"})
        .body
    )
    later = Run(gh, tmp, "job-alice", "alice")
    later.comment(1, "Opened a PR.")
    later.issue("Follow-up")
    later.pull("tusk/fix-a")
    later.status()
    later.write_up()
    return earlier, later, carol


def thread_logins(gh: Any) -> list[tuple[str, str]]:
    comments = gh.gateway("alice").paginate(f"/repos/{REPO}/issues/1/comments")
    return [
        (
            c["user"]["login"],
            (first_marker(c["body"], "backlink") or first_marker(c["body"], "status") or {}).get(
                "jobid", ""
            ),
        )
        for c in comments
    ]


def test_undo_takes_back_exactly_the_latest_run_and_records_it(gh: Any, tmp_path: Path) -> None:
    _, later, carol = two_runs(gh, tmp_path)
    assert (
        execute(ask_undo(gh, "alice"), gateway=gh.gateway("agent"), settings=SETTINGS, now=AT) == 0
    )

    logins = thread_logins(gh)
    assert (BOT, "job-alice") not in logins  # its comment and its status comment are gone
    assert (BOT, "job-bob") in logins and ("carol", "") in logins and ("alice", "") in logins
    state = gh.state()["repos"]
    pulls = {
        p["number"]: p
        for p in gh.gateway("alice").paginate(f"/repos/{REPO}/pulls", params={"state": "all"})
    }
    assert [p["state"] for p in pulls.values() if p["head"]["ref"] == "tusk/fix-a"] == ["closed"]
    assert [p["state"] for p in pulls.values() if p["head"]["ref"] == "tusk/fix-b"] == ["open"]
    follow_up = next(
        i
        for i in gh.gateway("alice").paginate(f"/repos/{REPO}/issues", params={"state": "all"})
        if i["title"] == "Follow-up"
    )
    assert (follow_up["state"], follow_up["state_reason"]) == ("closed", "not_planned")
    branches = state[f"{BOT}/widgets"]["branches"]
    assert "tusk/fix-a" not in branches and "tusk/fix-b" in branches
    assert (
        gh.gateway("carol").get(f"/repos/{REPO}/issues/comments/{carol['id']}")["body"]
        == "Same here"
    )

    log_comments = list(
        gh.gateway("agent").paginate(f"/repos/{CONTROL}/issues/{later.log['number']}/comments")
    )
    [undone] = [c for c in log_comments if first_marker(c["body"], "undo")]
    assert "Undone by `alice`" in undone["body"] and "close the pull request" in undone["body"]
    found, verdict = verify_comments(log_comments)
    assert verdict.ok, verdict.message
    assert found is not None and found.run == "undo-undo-1"
    # The run's four writes, then five taken back (its status comment is not in its audit).
    assert verdict.records == 4 + 5
    # The bot stays allowed: undo blocks nothing.
    assert StateStore(gh.gateway("agent"), SETTINGS).read_blocklist().repos == ()


def test_undo_happens_once(gh: Any, tmp_path: Path) -> None:
    two_runs(gh, tmp_path)
    request = ask_undo(gh, "alice")
    execute(request, gateway=gh.gateway("agent"), settings=SETTINGS, now=AT)
    before = thread_logins(gh)
    assert (
        execute(request, gateway=gh.gateway("agent"), settings=SETTINGS, now=AT) == 0
    )  # a re-delivery
    assert thread_logins(gh) == before
    assert (BOT, "job-bob") in before  # the earlier run was not undone in its place


def test_undo_by_someone_else_is_refused_and_changes_nothing(gh: Any, tmp_path: Path) -> None:
    two_runs(gh, tmp_path)
    before = thread_logins(gh)
    assert (
        execute(ask_undo(gh, "mallory"), gateway=gh.gateway("agent"), settings=SETTINGS, now=AT)
        == 0
    )
    after = [entry for entry in thread_logins(gh) if entry[0] != "mallory"]
    assert after == before
    undo_logs = [
        i
        for i in gh.gateway("agent").paginate(f"/repos/{CONTROL}/issues", params={"state": "all"})
        if i["title"].startswith("[Undo]")
    ]
    [log] = undo_logs
    assert (log["state"], log["state_reason"]) == ("closed", "not_planned")
    assert "**Refused**: mallory neither asked for this run" in log["body"]


def test_a_collaborator_may_undo_someone_elses_run(gh: Any, tmp_path: Path) -> None:
    two_runs(gh, tmp_path)
    assert execute(ask_undo(gh, "bob"), gateway=gh.gateway("agent"), settings=SETTINGS, now=AT) == 0
    assert (BOT, "job-alice") not in thread_logins(gh)


def test_a_forged_request_is_refused(gh: Any, tmp_path: Path) -> None:
    two_runs(gh, tmp_path)
    request = ask_undo(gh, "mallory").model_copy(update={"actor": "alice"})
    with pytest.raises(UserError, match="written by `mallory`, not `alice`"):
        execute(request, gateway=gh.gateway("agent"), settings=SETTINGS, now=AT)
    assert (BOT, "job-alice") in thread_logins(gh)
