"""State issues: the history, memory and blocklist issues of the control repository.

Tusk has no database; these issues are its memory. Each is found by its label
(``settings.labels.*``) plus a hidden state marker in the body
(``<!-- tusk:state {"generation": n, "kind": ...} -->``), never by title, and
only when the bot wrote it: anyone may open an issue or comment in a public
control repository and type a marker, so content by other authors is ignored.

* **Entries** (history, memory) are comments by the bot, each with a small
  ``entry`` marker carrying the job id; the text sits in a code fence so an
  ``@user`` in it notifies nobody. They are read newest first, page by page
  from the last page backwards, and across earlier generations.
* **Rollover.** GitHub refuses comments past 2,500 per issue. When an issue
  reaches ``settings.limits.state_issue_rollover`` comments, the next write
  opens generation n+1 (its marker names the previous issue), then comments a
  link on the old issue and closes it. If two writers roll over (or create the
  first issue) at once, the lowest issue number wins and the other closes
  itself as a duplicate, so every reader settles on the same issue.
* **Blocklist.** See ``StateStore.update_blocklist``; the pure codecs are
  ``tusk.issues.state_codec`` (kinds, markers, entries) and
  ``tusk.issues.blocklist_codec`` (change comments, body, folding).
* **Fail closed.** A state issue whose body lost its marker (someone edited
  it) or whose label was removed is still the state issue: one the bot wrote
  with the label but no marker counts as *damaged*, and when the label finds
  none at all, a search by the bot's title finds one that lost its label. A
  damaged blocklist is rebuilt from its append-only change comments (the
  bot's only; a rollover leaves a snapshot comment on the new issue, so each
  issue can be rebuilt from its own comments), and writers repair the body
  and the label. When neither lookup can answer, reading the blocklist stops
  with a clear error: it is never empty by accident. History and memory are
  read from a damaged issue just the same, and written to it rather than to
  a second one.
* **Creates happen once.** Entries, change comments and new state issues
  carry a nonce in their marker; after an answer that was lost they are
  looked for before they are sent again (``tusk.github.once``), and a copy that
  shows up late is read once.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any, Literal

from tusk.contracts.config import Settings
from tusk.contracts.models import Blocklist
from tusk.github.gateway import Forbidden, Gateway, GitHubError
from tusk.github.once import (
    create_once,
    find_issues,
    new_nonce,
    newest_first,
    post_marked_comment,
)
from tusk.issues import claims
from tusk.issues.blocklist_codec import (
    BlocklistChange,
    BlocklistSnapshot,
    Through,
    change_comment_body,
    diff_blocklist,
    render_blocklist_body,
)
from tusk.issues.blocklist_snapshot import SnapshotReader
from tusk.issues.go_away_records import blocklist_from_go_aways
from tusk.issues.state_codec import (
    MAX_BODY_CHARS,
    TITLES,
    EntryKind,
    StateEntry,
    StateError,
    StateIssue,
    StateKind,
    current_issue,
    entries_issue_body,
    entry_comment_body,
    normalise_entry_text,
    parse_entry,
    parse_state_issue,
    state_issues_in,
    trusted_author,
    with_generations,
)

# A blocklist fold normally settles in one or two rounds; this bounds a storm.
MAX_FOLD_ROUNDS = 12


class StateStore:
    """The state issues of ``settings.control_repo``, read and written through ``gateway``.

    ``trusted_authors`` adds logins (besides ``settings.bot``) whose state
    issues and comments count, e.g. when a workflow writes them with another
    token. One store may be shared by threads; each write is a few requests.
    """

    def __init__(
        self,
        gateway: Gateway,
        settings: Settings,
        *,
        trusted_authors: Iterable[str] = (),
        per_page: int = 100,
    ) -> None:
        self._gateway = gateway
        self._settings = settings
        self._repo = settings.control_repo
        self._trusted = tuple(trusted_authors)
        self._per_page = per_page
        self._current: dict[StateKind, StateIssue] = {}
        self._lock = threading.RLock()
        # Whether this store ever found a blocklist issue, and whether it found that no
        # go-away is on record while there was none (asked once: search is rate-limited).
        self._blocklist_seen = False
        self._no_go_aways = False
        self._blocklists = SnapshotReader(
            gateway, self._repo, settings.bot, self._trusted, per_page, self._predecessor
        )

    # -- public API

    def state_issue(self, kind: StateKind, *, create: bool = True) -> StateIssue | None:
        """The current issue of ``kind``, created (with its label) when there is none."""
        with self._lock:
            if kind in self._current:
                return self._current[kind]
            found = current_issue(self._locate(kind))
            if found is None and create:
                carried = self._from_go_aways() if kind == "blocklist" else None
                found = self._create(kind, generation=1, previous=None, carried=carried)
            elif found is not None and create and (found.damaged or not found.labelled):
                found = self._repair(found)  # only writers repair; readers read around it
            if found is not None:
                self._current[kind] = found
                self._blocklist_seen = self._blocklist_seen or kind == "blocklist"
            return found

    def append_entry(self, kind: EntryKind, text: str, *, jobid: str) -> str:
        """Append one entry; return the URL of its comment."""
        nonce = new_nonce()
        body = entry_comment_body(kind, normalise_entry_text(text), jobid=jobid, nonce=nonce)
        if len(body) > MAX_BODY_CHARS:
            raise StateError(
                f"The {kind} entry is too long for one comment",
                f"Keep it under {MAX_BODY_CHARS - 200} characters.",
            )
        url: str = self._comment(kind, body, nonce=nonce)["html_url"]
        return url

    def read_entries(self, kind: EntryKind, limit: int | None = None) -> list[StateEntry]:
        """Entries newest first, across generations; at most ``limit`` of them."""
        if limit is not None and limit <= 0:
            return []
        entries: list[StateEntry] = []
        issues = sorted(self._locate(kind), key=lambda i: (-i.generation, i.number))
        seen_generations: set[int] = set()
        seen_nonces: set[str] = set()
        for issue in issues:
            if issue.duplicate or issue.generation in seen_generations:
                continue  # the loser of a creation race: closed, never written
            seen_generations.add(issue.generation)
            for comment in self._comments_newest_first(issue.number):
                entry = parse_entry(
                    comment, kind=kind, bot=self._settings.bot, trusted=self._trusted
                )
                if entry is None:
                    continue
                if entry.nonce is not None:
                    if entry.nonce in seen_nonces:
                        continue  # a copy of an entry whose first answer was lost
                    seen_nonces.add(entry.nonce)
                entries.append(entry)
                if limit is not None and len(entries) >= limit:
                    return entries
        return entries

    def read_blocklist(self) -> Blocklist:
        """The blocklist, including changes recorded but not yet folded into the body."""
        snapshot = self._current_snapshot()
        if snapshot is None:
            return self._from_go_aways() or Blocklist()
        if not snapshot.open:  # rolled over since this store found it (long-lived readers)
            with self._lock:
                self._current.pop("blocklist", None)
            issue = self.state_issue("blocklist", create=False)
            if issue is not None:
                snapshot = self._snapshot(issue)
        return snapshot.blocklist

    def _current_snapshot(self) -> BlocklistSnapshot | None:
        """The blocklist issue's snapshot, or None when there is no blocklist issue. The
        issue this store knew is looked up again once when it was deleted since."""
        for attempt in range(2):
            issue = self.state_issue("blocklist", create=False)
            if issue is None:
                return None
            try:
                return self._snapshot(issue)
            except GitHubError as error:
                if error.status not in (404, 410) or attempt:
                    raise  # a listing that still shows a deleted issue: stop, never empty
                with self._lock:
                    self._current.pop("blocklist", None)
        return None

    def update_blocklist(
        self, change: Callable[[Blocklist], Blocklist], *, note: str = ""
    ) -> Blocklist:
        """Apply ``change`` to the blocklist without losing a concurrent update.

        GitHub has no compare-and-swap on issue bodies, so the body is not the
        source of truth on its own. Each update:

        1. reads the body's list plus every change comment newer than the last
           one the body says it folded (``through``), and calls ``change`` on
           that;
        2. posts the difference as an append-only comment by the bot. Comments
           are never overwritten, so from here on the change cannot be lost;
        3. folds: re-reads body and comments and, while some change comment is
           newer than the body's ``through``, writes body = fold(body, newer
           comments) with the new ``through``, then re-reads to check.

        Two go-aways racing both post their comment; whichever body write lands
        last, its writer's re-read (or the other's) still sees a change comment
        past ``through`` and writes again, so the final body holds both. It
        cannot end early: a writer stops only after a re-read that follows its
        own write shows nothing pending, and any comment posted later belongs to
        a writer whose own write and re-read come later still. Applying a change
        is idempotent, so a stale body written over a newer one is repaired by
        re-applying the comments after its ``through``. If a rollover moved
        the blocklist to a new issue meanwhile, the change is applied there too.
        """
        for _ in range(3):
            issue = self._require_current("blocklist")
            if issue.comments >= self._settings.limits.state_issue_rollover:
                issue = self._roll_over(issue)
            snapshot = self._snapshot(issue)
            delta = diff_blocklist(snapshot.blocklist, change(snapshot.blocklist))
            if delta.is_empty():
                result = self._fold(issue) if snapshot.pending else snapshot.blocklist
            else:
                self._post_change(issue, delta, note=note)
                result = self._fold(issue)
            # Still the current issue? Asked of its own URL (a rollover closes it): a
            # listing may not show an issue created a moment ago at all.
            item = self._gateway.get(f"/repos/{self._repo}/issues/{issue.number}")
            if item.get("state") == "open":
                return result
            with self._lock:
                self._current.pop("blocklist", None)
            latest = self._require_current("blocklist")
            if latest.number == issue.number:
                return result
        raise StateError(
            "The blocklist kept moving to new issues while it was being updated",
            "Run the update again.",
        )

    # -- reading

    def _from_go_aways(self) -> Blocklist | None:
        """No blocklist issue: the list the go-aways on record made, or None when none is
        (``tusk.issues.go_away_records``; raises when one cannot be read). A store that
        found a blocklist issue before always asks again: its issue is gone."""
        if self._no_go_aways and not self._blocklist_seen:
            return None
        rebuilt = blocklist_from_go_aways(self._gateway, self._settings)
        self._no_go_aways = rebuilt is None
        return rebuilt

    def _locate(self, kind: StateKind) -> list[StateIssue]:
        """Every issue of ``kind`` the bot wrote: by its label (intact, or damaged when the
        body lost its marker), else by a search for its title (the label was removed).

        Raises ``StateError`` when the label finds none and the search cannot answer:
        nothing is assumed, least of all an empty blocklist."""
        label = getattr(self._settings.labels, kind)
        items = self._gateway.paginate(
            f"/repos/{self._repo}/issues",
            params={"labels": label, "state": "all"},
            per_page=self._per_page,
        )
        found = state_issues_in(items, kind=kind, labelled=True, **self._authors())
        if not found:
            found = state_issues_in(
                self._search(kind), kind=kind, labelled=False, **self._authors()
            )
        return with_generations(found)

    def _authors(self) -> dict[str, Any]:
        return {"bot": self._settings.bot, "trusted": self._trusted}

    def _search(self, kind: StateKind) -> list[dict[str, Any]]:
        """The bot's issues titled like a ``kind`` issue: one whose label was removed.
        (Search lags a new issue, but an issue that lost its label is not new.)"""
        query = f'repo:{self._repo} is:issue author:{self._settings.bot} in:title "{TITLES[kind]}"'
        try:
            return list(
                self._gateway.paginate(
                    "/search/issues", params={"q": query}, per_page=100, item_key="items"
                )
            )
        except GitHubError as error:
            label = getattr(self._settings.labels, kind)
            raise StateError(
                f"Cannot tell whether the {kind} issue exists",
                f"No issue of {self._repo} carries the label {label!r}, and the search for one "
                f"that lost it failed ({error.title}). Nothing was assumed; run again, or put "
                "the label back on the issue.",
            ) from None

    def _comments_newest_first(self, number: int) -> Iterator[dict[str, Any]]:
        """Comments of issue ``number``, newest first, fetching pages from the last back."""
        return newest_first(
            self._gateway, f"/repos/{self._repo}/issues/{number}/comments", per_page=self._per_page
        )

    def _snapshot(self, issue: StateIssue) -> BlocklistSnapshot:
        return self._blocklists.snapshot(issue)

    def _predecessor(self, issue: StateIssue) -> StateIssue | None:
        """The issue of the same kind this one continues: by its marker, else the last
        one before it (issues of a kind are created in generation order)."""
        others = [
            other
            for other in self._locate(issue.kind)
            if other.number < issue.number and not other.duplicate
        ]
        if issue.previous is not None:
            named = [other for other in others if other.number == issue.previous]
            if named:
                return named[0]
        return max(others, key=lambda other: other.number) if others else None

    # -- writing

    def _require_current(self, kind: StateKind) -> StateIssue:
        issue = self.state_issue(kind, create=True)
        assert issue is not None  # create=True always yields one
        return issue

    def _fold(self, issue: StateIssue) -> Blocklist:
        for _ in range(MAX_FOLD_ROUNDS):
            snapshot = self._snapshot(issue)
            if not snapshot.pending:
                return snapshot.blocklist
            last_id, last_at, _ = snapshot.pending[-1]
            body = render_blocklist_body(
                snapshot.blocklist,
                generation=issue.generation,
                through=Through(id=last_id, at=last_at),
                previous=issue.previous,
            )
            self._gateway.patch(f"/repos/{self._repo}/issues/{issue.number}", json={"body": body})
            issue = replace(issue, damaged=False)  # the body just written carries the marker
        raise StateError(
            "The blocklist body did not settle",
            "Too many concurrent changes; the changes are kept as comments. Run it again.",
        )

    def _comment(self, kind: StateKind, body: str, *, nonce: str) -> dict[str, Any]:
        issue = self._require_current(kind)
        if issue.comments >= self._settings.limits.state_issue_rollover:
            issue = self._roll_over(issue)
        try:
            return self._post_comment(issue, body, nonce=nonce, marker="entry")
        except Forbidden:
            # Past GitHub's cap (someone else filled the issue): roll over, once.
            fresh = self._gateway.get(f"/repos/{self._repo}/issues/{issue.number}")
            if int(fresh.get("comments") or 0) < self._settings.limits.state_issue_rollover:
                raise
            return self._post_comment(self._roll_over(issue), body, nonce=nonce, marker="entry")

    def _post_change(self, issue: StateIssue, change: BlocklistChange, *, note: str = "") -> None:
        change = change.model_copy(update={"nonce": new_nonce()})
        body = change_comment_body(change, note=note)
        self._post_comment(issue, body, nonce=change.nonce, marker="blocklist-change")

    def _post_comment(
        self,
        issue: StateIssue,
        body: str,
        *,
        nonce: str | None,
        marker: Literal["entry", "blocklist-change"],
    ) -> dict[str, Any]:
        """Post once: never repeated blindly, looked for by its nonce after a lost answer."""
        path = f"/repos/{self._repo}/issues/{issue.number}/comments"
        if nonce is None:
            created = self._gateway.post(path, json={"body": body}, may_repeat=False).body
        else:
            created = post_marked_comment(
                self._gateway,
                self._repo,
                issue.number,
                body,
                kind=marker,
                nonce=nonce,
                bot=self._settings.bot,
                what=f"the {issue.kind} comment",
            )
        self._check_author(created, what="comment")
        with self._lock:
            current = self._current.get(issue.kind)
            if current is not None and current.number == issue.number:
                self._current[issue.kind] = replace(current, comments=current.comments + 1)
        return dict(created)

    def _repair(self, issue: StateIssue) -> StateIssue:
        """Put back what someone removed from a state issue: its label, and a body with
        its marker (for the blocklist, the list rebuilt from its change comments)."""
        path = f"/repos/{self._repo}/issues/{issue.number}"
        if not issue.labelled:
            label = getattr(self._settings.labels, issue.kind)
            self._ensure_label(label)
            self._gateway.post(f"{path}/labels", json={"labels": [label]})
        if issue.damaged:
            previous = self._predecessor(issue)
            before = previous.number if previous is not None else None
            if issue.kind == "blocklist":
                snapshot = self._snapshot(issue)
                last = snapshot.pending[-1] if snapshot.pending else None
                body = render_blocklist_body(
                    snapshot.blocklist,
                    generation=issue.generation,
                    through=Through(id=last[0], at=last[1]) if last else None,
                    previous=before,
                )
            else:
                body = self._fresh_body(issue.kind, generation=issue.generation, previous=before)
            self._gateway.patch(path, json={"body": body})
            issue = replace(issue, body=body, previous=before)
        return replace(issue, damaged=False, labelled=True)

    def _roll_over(self, old: StateIssue) -> StateIssue:
        """Open generation n+1, link it from the old issue, close the old one."""
        kind, generation = old.kind, old.generation + 1
        carried = None
        if kind == "blocklist":  # carry the whole list over; its comments stay behind
            carried = self._fold(old)
        new = self._create(kind, generation=generation, previous=old.number, carried=carried)
        with self._lock:
            self._current[kind] = new
        if carried is not None:
            # The new issue can be rebuilt from its own comments, should its body be lost.
            self._post_change(new, BlocklistChange.whole(carried), note=f"From #{old.number}.")
            # A writer that checked for a newer issue before ours existed may have put
            # its change on the old one after we copied it: carry that over too.
            late = diff_blocklist(carried, self._fold(old))
            if not late.is_empty():
                self._post_change(new, late, note=f"Carried over from #{old.number}.")
            self._fold(new)
        if old.open:
            with contextlib.suppress(GitHubError):  # a courtesy link; the close is what counts
                self._gateway.post(
                    f"/repos/{self._repo}/issues/{old.number}/comments",
                    json={"body": f"Continued in #{new.number} ({new.url})."},
                    may_repeat=False,
                )
            self._gateway.patch(
                f"/repos/{self._repo}/issues/{old.number}",
                json={"state": "closed", "state_reason": "completed"},
            )
        return new

    def _fresh_body(
        self,
        kind: StateKind,
        *,
        generation: int,
        previous: int | None,
        nonce: str | None = None,
        carried: Blocklist | None = None,
    ) -> str:
        if kind == "blocklist":
            return render_blocklist_body(
                carried or Blocklist(),
                generation=generation,
                through=None,
                previous=previous,
                nonce=nonce,
            )
        return entries_issue_body(kind, generation=generation, previous=previous, nonce=nonce)

    def _create(
        self,
        kind: StateKind,
        *,
        generation: int,
        previous: int | None,
        carried: Blocklist | None = None,
    ) -> StateIssue:
        """Create the issue, then settle a race: the lowest number of a generation wins.

        The create carries a nonce (found again after a lost answer), and the race is
        decided on the issues just below the new one, read by their own URLs
        (``_twins``), so a listing that lags, or catches up out of order, cannot hide
        a twin from both writers."""
        label = getattr(self._settings.labels, kind)
        self._ensure_label(label)
        nonce = new_nonce()
        body = self._fresh_body(
            kind, generation=generation, previous=previous, nonce=nonce, carried=carried
        )
        title = TITLES[kind] + (f" (part {generation})" if generation > 1 else "")
        path = f"/repos/{self._repo}/issues"
        created = create_once(
            lambda: dict(
                self._gateway.post(
                    path, json={"title": title, "body": body, "labels": [label]}, may_repeat=False
                ).body
            ),
            lambda: next(
                iter(
                    find_issues(
                        self._gateway, self._repo, kind="state", nonce=nonce, bot=self._settings.bot
                    )
                ),
                None,
            ),
            sleep=self._gateway.sleep,
            what=f"the {kind} issue",
        )
        self._check_author(created, what="issue")
        if label not in {entry.get("name") for entry in created.get("labels") or []}:
            raise StateError(
                f"GitHub dropped the label {label!r} from the new {kind} issue",
                f"Give the bot push (write) access to {self._repo}: labels from callers "
                "without it are silently dropped.",
            )
        number = int(created["number"])
        winner = current_issue(self._twins(kind, created, generation=generation))
        if winner is None or winner.number == number:
            mine = parse_state_issue(
                created, kind=kind, bot=self._settings.bot, trusted=self._trusted
            )
            assert mine is not None
            return mine
        self._gateway.patch(
            f"{path}/{number}", json={"state": "closed", "state_reason": "duplicate"}
        )
        return winner

    def _twins(
        self, kind: StateKind, created: dict[str, Any], *, generation: int
    ) -> list[StateIssue]:
        """The issues of ``kind`` and ``generation`` that raced ``created``, itself included:
        the ones just below it read by their own URLs (``tusk.issues.claims``; listings
        are neither current nor ordered), and older ones from the listing."""
        found = {i.number: i for i in self._locate(kind) if i.generation == generation}
        since = claims.window_start(created, self._settings.limits.claim_lease_minutes)
        number = int(created["number"])
        below = claims.issues_below(
            self._gateway, self._repo, number, since=since, sleep=self._gateway.sleep
        )
        for item in [created, *(slot.item for slot in below if slot.fate == "here")]:
            if item is None:
                continue
            issue = parse_state_issue(
                item, kind=kind, bot=self._settings.bot, trusted=self._trusted
            )
            if issue is not None and issue.generation == generation:
                duplicate = item.get("state_reason") == "duplicate"
                found[issue.number] = replace(issue, duplicate=duplicate)
        return list(found.values())

    def _ensure_label(self, label: str) -> None:
        # Pre-create it: GitHub usually auto-creates labels on use, but not always.
        try:
            self._gateway.request(
                "POST",
                f"/repos/{self._repo}/labels",
                json={"name": label, "color": "ededed", "description": "Tusk state"},
                allow_statuses=(422,),  # already exists
            )
        except Forbidden as error:
            raise StateError(
                f"Cannot create the label {label!r} in {self._repo}: {error.github_message}",
                f"Give the bot push (write) access to {self._repo}; state issues need labels.",
            ) from None

    def _check_author(self, created: dict[str, Any], *, what: str) -> None:
        if not trusted_author(created, bot=self._settings.bot, trusted=self._trusted):
            author = (created.get("user") or {}).get("login")
            raise StateError(
                f"The state {what} was written as {author!r}, not as the bot",
                f"Use the bot's token ({self._settings.bot}); state by other authors is ignored.",
            )
