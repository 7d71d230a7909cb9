"""Log issues: one per job, in the control repository (MISSION A4, ENGINEERING §2).

Exactly once per job id, without locks: a run first looks for a claim of
the job (the bot's issue carrying the job's marker, whatever its label or
state); finding none, it creates one, then reads the issues just below its
own by their own URLs (``tusk.issues.claims``). Issue numbers only grow, so
among runs that raced past the first look the one whose issue has the lowest
number wins, and every other run closes its own issue as ``duplicate`` and
stops. Nothing is decided on a listing's order or freshness.

Each claim carries its run's nonce, so a create whose answer was lost (a
5xx, a timeout, a reset) is found again instead of being sent twice, and a
copy that shows up late is recognised as the run's own. A claim whose run
never reported progress within the lease can be taken over by a later
delivery (``tusk.issues.lease``), so an orphan claim cannot strand its job.

Failure records (``record_failure``) carry the job marker with
``"failure": true`` so that a later, successful delivery of the same job is
not mistaken for a duplicate of its own failure report.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from tusk.contracts.config import Settings
from tusk.errors import UserError
from tusk.github.gateway import Gateway, GitHubError
from tusk.github.once import Patience, create_once, new_nonce, post_marked_comment
from tusk.issues import claims
from tusk.issues.lease import HandshakeUndecided, Lease, claim_status, take_over
from tusk.text.markers import first_marker, is_trusted_author, render_marker

BODY_LIMIT = 65536
_TITLE_REPO = re.compile(r"^\[Agent Log\] (?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)\b")

IssueState = Literal["open", "closed", "all"]


@dataclass(frozen=True)
class LogIssue:
    number: int
    url: str
    title: str
    state: str
    state_reason: str | None
    jobid: str
    repo: str | None
    failure: bool
    created_at: datetime | None
    nonce: str | None = None


@dataclass(frozen=True)
class LogIssueClaim:
    number: int
    url: str
    won: bool
    nonce: str = ""
    # Why the run stops although no claim was found (number 0): the job ran already.
    why: str = ""


def log_marker(
    jobid: str, repo: str | None = None, *, failure: bool = False, nonce: str | None = None
) -> str:
    data: dict[str, Any] = {"jobid": jobid}
    if repo:
        data["repo"] = repo
    if failure:
        data["failure"] = True
    if nonce:
        data["nonce"] = nonce
    return render_marker("job", data)


def parse_log_issue(item: dict[str, Any], settings: Settings) -> LogIssue | None:
    """A ``LogIssue`` from a REST issue, or None when it carries no trusted job marker."""
    if item.get("pull_request") is not None:
        return None
    author = (item.get("user") or {}).get("login")
    if not is_trusted_author(
        author=author,
        bot=settings.bot,
        repo=settings.control_repo,
        control_repo=settings.control_repo,
    ):
        return None
    marker = first_marker(item.get("body"), "job")
    if not marker or not isinstance(marker.get("jobid"), str):
        return None
    repo = marker.get("repo")
    if not isinstance(repo, str):
        match = _TITLE_REPO.match(item.get("title") or "")
        repo = match.group("repo") if match else None
    created = item.get("created_at")
    return LogIssue(
        number=int(item["number"]),
        url=str(item.get("html_url") or ""),
        title=str(item.get("title") or ""),
        state=str(item.get("state") or "open"),
        state_reason=item.get("state_reason"),
        jobid=marker["jobid"],
        repo=repo,
        failure=marker.get("failure") is True,
        created_at=datetime.fromisoformat(created.replace("Z", "+00:00")) if created else None,
        nonce=marker["nonce"] if isinstance(marker.get("nonce"), str) else None,
    )


def _iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def find_log_issues(
    gateway: Gateway,
    settings: Settings,
    *,
    jobid: str | None = None,
    repo: str | None = None,
    owner: str | None = None,
    state: IssueState = "open",
    since: datetime | None = None,
) -> list[LogIssue]:
    """Log issues in the control repository, lowest number first.

    ``repo`` (owner/name) or ``owner`` narrow them to one target; ``since``
    limits the listing to issues updated since then (a job's log issues are
    all created after its trigger, so the trigger time is a safe bound).
    """
    params: dict[str, Any] = {
        "labels": settings.labels.workflow,
        "state": state,
        "sort": "created",
        "direction": "asc",
    }
    if since is not None:
        params["since"] = _iso(since)
    found = []
    for item in gateway.paginate(f"/repos/{settings.control_repo}/issues", params=params):
        issue = parse_log_issue(item, settings)
        if issue is None:
            continue
        if jobid is not None and issue.jobid != jobid:
            continue
        target = (issue.repo or "").lower()
        if repo is not None and target != repo.lower():
            continue
        if owner is not None and target.split("/", 1)[0] != owner.lower():
            continue
        found.append(issue)
    return sorted(found, key=lambda issue: issue.number)


def _claimants(issues: list[LogIssue]) -> list[LogIssue]:
    """Issues that hold a claim on their job: not failure records. (Released claims never
    get this far: ``job_claim`` leaves them out.)"""
    return [i for i in issues if not i.failure]


def with_job_marker(body: str, *, jobid: str, repo: str | None, nonce: str) -> str:
    """``body`` whose first job marker is the claim's, nonce included."""
    first = first_marker(body, "job")
    if first is None or first.get("jobid") != jobid:
        return f"{log_marker(jobid, repo, nonce=nonce)}\n{body}"[:BODY_LIMIT]
    if first.get("nonce") == nonce:
        return body
    known = first.get("repo") if isinstance(first.get("repo"), str) else None
    old = log_marker(jobid, known)
    new = log_marker(jobid, repo or known, nonce=nonce)
    if old in body:
        return body.replace(old, new, 1)
    return f"{new}\n{body}"[:BODY_LIMIT]


def claim_log_issue(
    gateway: Gateway,
    settings: Settings,
    *,
    jobid: str,
    title: str,
    body: str,
    labels: list[str] | tuple[str, ...],
    repo: str | None = None,
    since: datetime | None = None,
    nonce: str | None = None,
    now: datetime | None = None,
    sleep: Callable[[float], None] | None = None,
    already_ran: Callable[[], str | None] | None = None,
) -> LogIssueClaim:
    """Create the job's log issue unless one exists; exactly one caller wins.

    The claim API every job kind calls (agent runs, go-away, and any later kind):
    ``won`` is False when another run owns the job (an earlier run's issue, or a
    racing run's issue with a lower number, ``tusk.issues.claims``); the caller
    must then stop. A losing run's own issue is closed as ``duplicate``.
    ``already_ran`` is asked when no claim can be found at all (a person deleted
    or transferred it): a reason (the bot's own record that the job ran) stops
    the run without a new claim, told in ``why``. ``nonce`` (new when not given)
    marks this run's claim, so a create whose answer was lost is found instead
    of repeated; ``now`` measures the lease of claims whose run never reported
    progress. ``sleep`` defaults to the gateway's.
    """
    nonce = nonce or new_nonce()
    sleep = sleep or gateway.sleep
    body = with_job_marker(body, jobid=jobid, repo=repo, nonce=nonce)
    if len(body) > BODY_LIMIT:
        raise ValueError(f"log issue body is {len(body)} characters; GitHub allows {BODY_LIMIT}")
    existing = listed_job_claims(gateway, settings, jobid=jobid, since=since, title=title)
    # The lease is measured on GitHub's clock (its Date header), not the runner's.
    moment = now or gateway.server_time or datetime.now(UTC)
    lease = Lease(settings.limits.claim_lease_minutes, moment)
    live, _ = _live_claims(gateway, settings, existing, lease=lease, nonce=nonce)
    if live and live[0].nonce != nonce:
        owner = live[0]
        return LogIssueClaim(owner.number, owner.url, won=False, nonce=nonce)
    why = None if live or already_ran is None else already_ran()
    if why:
        return LogIssueClaim(0, "", won=False, nonce=nonce, why=why)
    issue = {"title": title, "body": body, "labels": list(labels)}
    created = _create_claim(
        gateway, settings, issue, existing, jobid=jobid, nonce=nonce, since=since, sleep=sleep
    )
    _require_labels(created, labels, settings)
    rivals = scanned_job_claims(
        gateway, settings, created, jobid=jobid, title=title, lease=lease, sleep=sleep
    )
    issues = {issue.number: issue for issue in existing} | {i.number: i for i in rivals}
    return _decide_claim(
        gateway,
        settings,
        sorted(issues.values(), key=lambda i: i.number),
        created,
        lease=lease,
        nonce=nonce,
    )


def job_claim(
    item: dict[str, Any] | None, settings: Settings, *, jobid: str, title: str | None = None
) -> LogIssue | None:
    """The claim (or failure record) of ``jobid`` that ``item`` is: the bot's issue with the
    job's marker, not released by the bot (``claims.released``). Label and state do not
    matter: people's edits never unmake a claim. A bot's issue whose job marker a person
    edited away still counts when it carries the job's own ``title`` (erring towards
    stopping a run, never towards a second one)."""
    if item is None or not claims.by_bot(item, settings.bot) or claims.released(item, settings.bot):
        return None
    issue = parse_log_issue(item, settings)
    if issue is None and title:
        return _marker_edited_away(item, jobid=jobid, title=title)
    return issue if issue is not None and issue.jobid == jobid else None


def _marker_edited_away(item: dict[str, Any], *, jobid: str, title: str) -> LogIssue | None:
    """The bot's issue titled as this job's claim, with no job marker left in its body."""
    lost = item.get("pull_request") is None and first_marker(item.get("body"), "job") is None
    if not lost or item.get("title") != title:
        return None
    return LogIssue(
        number=int(item["number"]),
        url=str(item.get("html_url") or ""),
        title=title,
        state=str(item.get("state") or "open"),
        state_reason=item.get("state_reason"),
        jobid=jobid,
        repo=None,
        failure=False,
        created_at=claims.created_at(item),
    )


def listed_job_claims(
    gateway: Gateway,
    settings: Settings,
    *,
    jobid: str,
    since: datetime | None,
    title: str | None = None,
) -> list[LogIssue]:
    """The job's claims and failure records the listing of the bot's issues shows."""
    found = []
    for item in claims.listed_claims(gateway, settings, since=since):
        if job_claim(item, settings, jobid=jobid, title=title) is None:
            continue
        item = claims.confirmed(gateway, settings, item)
        issue = job_claim(item, settings, jobid=jobid, title=title)
        if issue is not None:
            found.append(issue)
    return sorted(found, key=lambda issue: issue.number)


def scanned_job_claims(
    gateway: Gateway,
    settings: Settings,
    created: dict[str, Any],
    *,
    jobid: str,
    title: str | None,
    lease: Lease,
    sleep: Callable[[float], None],
) -> list[LogIssue]:
    """The job's claims numbered below this run's ``created``, read by their own URLs
    back to the first issue older than the lease (``claims.issues_below``)."""
    start = claims.window_start(created, lease.minutes)
    found = []
    control = settings.control_repo
    recent = claims.recent_issues(gateway, control)
    for slot in claims.issues_below(
        gateway, control, int(created["number"]), since=start, sleep=sleep, listed=recent
    ):
        if slot.item is None:
            continue
        item = claims.renumbered(slot.item, slot.number)
        issue = job_claim(item, settings, jobid=jobid, title=title)
        if issue is not None:
            found.append(issue)
    return found


def _create_claim(
    gateway: Gateway,
    settings: Settings,
    issue: dict[str, Any],
    existing: list[LogIssue],
    *,
    jobid: str,
    nonce: str,
    since: datetime | None,
    sleep: Callable[[float], None],
) -> dict[str, Any]:
    """This run's claim: found by its nonce when it exists already (the step ran again,
    or a create's answer was lost), else created once."""
    path = f"/repos/{settings.control_repo}/issues"

    def find_mine(issues: list[LogIssue] | None = None) -> dict[str, Any] | None:
        if issues is None:
            issues = listed_job_claims(gateway, settings, jobid=jobid, since=since)
        mine = [issue for issue in issues if issue.nonce == nonce]
        if not mine:
            return None
        found: dict[str, Any] = gateway.get(f"{path}/{mine[0].number}")  # read-after-write
        return found

    return find_mine(existing) or create_once(
        lambda: dict(gateway.post(path, json=issue, may_repeat=False).body),
        find_mine,
        sleep=sleep,
        patience=CLAIM_PATIENCE,
        what=f"the log issue of job {jobid}",
    )


def _decide_claim(
    gateway: Gateway,
    settings: Settings,
    issues: list[LogIssue],
    created: dict[str, Any],
    *,
    lease: Lease,
    nonce: str,
) -> LogIssueClaim:
    """The lowest-numbered live claim wins; the loser closes its own copies as duplicates,
    the winner its late copies, the claims it took over and settled failure records."""
    number = int(created["number"])
    try:
        live, dead = _live_claims(gateway, settings, issues, lease=lease, nonce=nonce)
    except HandshakeUndecided:
        _close_as_duplicate(gateway, settings, number)  # released, as for a lagging listing
        raise
    numbers = {issue.number: issue for issue in live}
    if number not in numbers:  # our own issue counts even if a listing lags behind
        mine = parse_log_issue(created, settings)
        assert mine is not None  # we just wrote its marker
        numbers[number] = mine
    winner = numbers[min(numbers)]
    ours = sorted({n for n, issue in numbers.items() if issue.nonce == nonce} | {number})
    if winner.nonce == nonce:
        # A copy of our own claim that showed up late (the listing lagged) is ours too.
        for extra in ours:
            if extra != winner.number:
                _close_as_duplicate(gateway, settings, extra)
        for orphan in dead:
            _close_taken_over(gateway, settings, orphan, by=winner)
        settle_failure_records(gateway, settings, issues, run_url=winner.url)
        return LogIssueClaim(winner.number, winner.url, won=True, nonce=nonce)
    for own in ours:
        _close_as_duplicate(gateway, settings, own)
    return LogIssueClaim(winner.number, winner.url, won=False, nonce=nonce)


def _live_claims(
    gateway: Gateway, settings: Settings, issues: list[LogIssue], *, lease: Lease, nonce: str
) -> tuple[list[LogIssue], list[LogIssue]]:
    """The claims that hold their job, and the open ones taken over (dead).

    A claim older than the lease is looked at more closely: one whose run never
    reported progress is taken over (``tusk.issues.lease``), unless its run shows it is
    alive after all."""
    live: list[LogIssue] = []
    dead: list[LogIssue] = []
    for issue in _claimants(issues):
        if issue.nonce == nonce or issue.state != "open" or not lease.expired(issue.created_at):
            live.append(issue)
            continue
        repo, bot = settings.control_repo, settings.bot
        status = claim_status(gateway, repo, issue.number, bot=bot, jobid=issue.jobid)
        if status == "silent":
            status = take_over(
                gateway,
                repo,
                issue.number,
                bot=bot,
                jobid=issue.jobid,
                nonce=nonce,
                lease_minutes=lease.minutes,
            )
        (dead if status == "dead" else live).append(issue)
    return live, dead


def _close_as_duplicate(gateway: Gateway, settings: Settings, number: int) -> None:
    gateway.patch(
        f"/repos/{settings.control_repo}/issues/{number}",
        json={"state": "closed", "state_reason": "duplicate"},
    )


def _close_taken_over(
    gateway: Gateway, settings: Settings, orphan: LogIssue, *, by: LogIssue
) -> None:
    """Close a claim whose run never showed up, pointing to the run that took it over."""
    path = f"/repos/{settings.control_repo}/issues/{orphan.number}"
    _note(gateway, path, f"Taken over by {by.url}: this claim's run never reported progress.")
    gateway.patch(path, json={"state": "closed", "state_reason": "duplicate"})


def _note(gateway: Gateway, issue_path: str, text: str) -> None:
    """A courtesy comment: sent once (never repeated blindly); its loss is no failure,
    since the state change that follows it is what counts."""
    with contextlib.suppress(GitHubError):
        gateway.post(f"{issue_path}/comments", json={"body": text}, may_repeat=False)


# A claim whose answer was lost is looked for about as long as GitHub takes to list it.
CLAIM_PATIENCE = Patience(looks=8, first_pause=1.0, sends=2)


def _require_labels(
    created: dict[str, Any], labels: list[str] | tuple[str, ...], settings: Settings
) -> None:
    """Fail loudly when GitHub dropped a label: unlabelled log issues are never found again,
    so every later delivery of the job would open another one."""
    kept = {str(entry.get("name", "")).lower() for entry in created.get("labels") or []}
    missing = [label for label in labels if label.lower() not in kept]
    if missing:
        raise UserError(
            f"GitHub dropped the label(s) {', '.join(missing)} from log issue "
            f"{created.get('html_url')}",
            f"Give the bot push (write) access to {settings.control_repo}: GitHub silently "
            "drops labels set by callers without it, and Tusk finds log issues by label.",
        )


def settle_failure_records(
    gateway: Gateway, settings: Settings, issues: list[LogIssue], *, run_url: str
) -> None:
    """Close the job's open failure records once a later delivery runs it after all.

    A shard watchdog may record a job as lost when its last shard arrived first
    and the others were slow; when they do arrive, the record is no longer true.
    """
    for issue in issues:
        if not issue.failure or issue.state != "open":
            continue
        path = f"/repos/{settings.control_repo}/issues/{issue.number}"
        _note(gateway, path, f"The job ran after all: {run_url}. Closing this failure record.")
        gateway.patch(path, json={"state": "closed", "state_reason": "completed"})


def record_failure(
    gateway: Gateway,
    settings: Settings,
    *,
    jobid: str,
    repo: str,
    title: str,
    body: str,
) -> str:
    """Open a log issue labelled workflow + bug that records a failed job; its URL.

    A job already holding an open failure record (two watchdogs may both give
    up on it) gets the new report as a comment there instead of a second issue.
    """
    nonce = new_nonce()
    marker = log_marker(jobid, repo, failure=True, nonce=nonce)
    control = settings.control_repo
    open_records = [
        issue
        for issue in find_log_issues(gateway, settings, jobid=jobid, state="open")
        if issue.failure
    ]
    if open_records:
        record = open_records[0]
        comment = f"{marker}\n{body}"[: BODY_LIMIT - 100]
        post_marked_comment(
            gateway,
            control,
            record.number,
            comment,
            kind="job",
            nonce=nonce,
            bot=settings.bot,
            what=f"the failure report of job {jobid}",
        )
        return record.url
    text = f"{marker}\n{body}"
    if len(text) > BODY_LIMIT:
        note = "\n\n(cut to fit GitHub's limit on issue bodies)"
        text = text[: BODY_LIMIT - len(note)] + note
    path = f"/repos/{control}/issues"
    payload = {
        "title": title,
        "body": text,
        "labels": [settings.labels.workflow, settings.labels.bug],
    }

    def find_record() -> dict[str, Any] | None:
        for issue in find_log_issues(gateway, settings, jobid=jobid, state="open"):
            if issue.nonce == nonce:
                return {"html_url": issue.url}
        return None

    created = create_once(
        lambda: dict(gateway.post(path, json=payload, may_repeat=False).body),
        find_record,
        sleep=gateway.sleep,
        what=f"the failure record of job {jobid}",
    )
    return str(created["html_url"])


def claim_command_issue(
    gateway: Gateway,
    settings: Settings,
    *,
    jobid: str,
    repo: str,
    thread: int,
    actor: str,
    verb: str,
    asked: str,
) -> LogIssueClaim | None:
    """A bot command's own log issue (``[<Verb>] owner/name #n by actor``), claimed once;
    None, said in the step log, when another delivery of the job already holds it."""
    claim = claim_log_issue(
        gateway,
        settings,
        jobid=jobid,
        title=f"[{verb}] {repo} #{thread} by {actor}",
        body=f"{log_marker(jobid, repo)}\n{asked}\n",
        labels=[settings.labels.workflow],
        repo=repo,
    )
    if not claim.won:
        print(f"job {jobid}: already handled in {claim.url}; nothing to do", flush=True)
        return None
    return claim
