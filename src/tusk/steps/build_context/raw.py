"""Partial models of the raw context the poller fetched (``ContextDocument.raw``).

Only what build-context reads is modelled; everything else is ignored, so the
poller may add fields freely. REST payloads (``user.login``, ``created_at``)
and GraphQL payloads (``author.login``, ``createdAt``) are both accepted,
because discussions come from GraphQL and everything else from REST.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Annotated, Any, overload

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    field_validator,
    model_validator,
)


class Partial(BaseModel):
    model_config = ConfigDict(
        extra="ignore", frozen=True, populate_by_name=True, arbitrary_types_allowed=True
    )


class Actor(Partial):
    login: str = "ghost"  # deleted accounts come back as null; GitHub shows them as "ghost"


def _actor(value: Any) -> Any:
    return {"login": "ghost"} if value is None else value


class Node(Partial):
    """Anything with an author, a body and timestamps: comments, reviews, bodies."""

    id: int | str | None = None
    node_id: str | None = None
    user: Actor = Field(default_factory=Actor, validation_alias=AliasChoices("user", "author"))
    body: str | None = None
    created_at: datetime | None = Field(
        None, validation_alias=AliasChoices("created_at", "createdAt", "submitted_at")
    )
    updated_at: datetime | None = Field(
        None, validation_alias=AliasChoices("updated_at", "updatedAt", "lastEditedAt")
    )
    # When the text itself was last edited (GraphQL ``lastEditedAt``), if the poller says.
    last_edited_at: datetime | None = Field(
        None, validation_alias=AliasChoices("last_edited_at", "lastEditedAt")
    )
    html_url: str | None = Field(None, validation_alias=AliasChoices("html_url", "url"))
    author_association: str | None = Field(
        None, validation_alias=AliasChoices("author_association", "authorAssociation")
    )

    _null_actor = field_validator("user", mode="before")(_actor)

    @property
    def author(self) -> str:
        return self.user.login

    @property
    def text(self) -> str:
        return self.body or ""


class LazyNodes(Sequence[Node]):
    """Comments validated one at a time, on first use.

    A thread may hold thousands of comments and the context keeps a few, so
    only what is read is modelled; ``bodies``, ``first`` and ``index_of``
    read the raw payload cheaply for sizing and for finding the trigger.
    """

    def __init__(self, items: Sequence[Any] = ()) -> None:
        self._items = [item for item in items if isinstance(item, dict)]
        self._cache: dict[int, Node] = {}
        self._bodies: list[str] | None = None

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Node: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Node]: ...

    def __getitem__(self, index: int | slice) -> Node | Sequence[Node]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if index not in self._cache:
            self._cache[index] = Node.model_validate(self._items[index])
        return self._cache[index]

    def __iter__(self) -> Iterator[Node]:
        return (self[i] for i in range(len(self)))

    def body(self, index: int) -> str:
        value = self._items[index].get("body")
        return value if isinstance(value, str) else ""

    def bodies(self) -> list[str]:
        """Every comment's raw text ("" when missing), in order; read once."""
        if self._bodies is None:
            self._bodies = [
                body if isinstance(body := item.get("body"), str) else "" for item in self._items
            ]
        return self._bodies

    def index_of(self, wanted: str) -> int | None:
        """The first comment whose REST id or GraphQL node id is ``wanted``."""
        for index, item in enumerate(self._items):
            rest_id, node_id = item.get("id"), item.get("node_id")
            if (rest_id is not None and str(rest_id) == wanted) or (
                node_id is not None and str(node_id) == wanted
            ):
                return index
        return None

    def first(self, index: int, *aliases: str) -> Any:
        """The raw value under the first of ``aliases`` the payload has, as the models'
        ``AliasChoices`` pick it (a key present with null counts); None without any."""
        item = self._items[index]
        return next((item[key] for key in aliases if key in item), None)


def _lazy_nodes(value: Any) -> LazyNodes:
    if isinstance(value, LazyNodes):
        return value
    if value is None:
        return LazyNodes()
    if isinstance(value, dict):  # GraphQL connection
        value = value.get("nodes") or []
    if not isinstance(value, list | tuple):
        raise ValueError("expected a list of comments")
    return LazyNodes(value)


Comments = Annotated[LazyNodes, PlainValidator(_lazy_nodes)]


class Label(Partial):
    name: str


class Milestone(Partial):
    title: str


class Ref(Partial):
    ref: str
    label: str | None = None


class Thread(Node):
    """An issue, a pull request or a discussion: the thread the trigger is in."""

    number: int | None = None
    title: str = ""
    state: str | None = None
    labels: tuple[Label, ...] = ()
    assignees: tuple[Actor, ...] = ()
    milestone: Milestone | None = None
    # pull requests only
    head: Ref | None = None
    base: Ref | None = None
    merged: bool | None = None
    draft: bool | None = None

    @field_validator("labels", mode="before")
    @classmethod
    def _graphql_labels(cls, value: Any) -> Any:
        # GraphQL wraps connections as {"nodes": [...]}.
        return value.get("nodes", []) if isinstance(value, dict) else value

    @field_validator("assignees", mode="before")
    @classmethod
    def _graphql_assignees(cls, value: Any) -> Any:
        return value.get("nodes", []) if isinstance(value, dict) else value


class Review(Node):
    state: str | None = None


class ReviewComment(Node):
    pull_request_review_id: int | None = None
    path: str | None = None
    line: int | None = None
    original_line: int | None = None
    in_reply_to_id: int | None = None


class LinkedIssue(Partial):
    """A linked issue with its own conversation."""

    issue: Thread
    comments: Comments = Field(default_factory=LazyNodes)
    repo: str | None = None


class RawContext(Partial):
    """The parts of ``raw`` that build-context reads.

    ``thread`` is the issue, PR or discussion; the poller may also send it as
    ``issue``, ``pull_request`` or ``discussion``. ``collaborators``, when
    present, lists the logins with write access to the repository.
    """

    kind: str | None = None  # "issue" | "pull_request" | "discussion", when the poller says
    thread: Thread | None = None
    comments: Comments = Field(default_factory=LazyNodes)
    reviews: tuple[Review, ...] = ()
    review_comments: tuple[ReviewComment, ...] = ()
    diff: str | None = None
    linked_issues: tuple[LinkedIssue, ...] = ()
    collaborators: tuple[str, ...] | None = None

    @model_validator(mode="before")
    @classmethod
    def _merge_thread(cls, value: Any) -> Any:
        # A PR arrives as its issue and its pull request; the PR's fields win.
        if not isinstance(value, dict) or value.get("thread") is not None:
            return value
        merged: dict[str, Any] = {}
        for key in ("discussion", "issue", "pull_request"):
            part = value.get(key)
            if isinstance(part, dict):
                merged.update({k: v for k, v in part.items() if v is not None})
        return {**value, "thread": merged or None}

    @field_validator("reviews", "review_comments", "linked_issues", mode="before")
    @classmethod
    def _graphql_nodes(cls, value: Any) -> Any:
        if value is None:
            return ()
        return value.get("nodes", []) if isinstance(value, dict) else value

    @field_validator("collaborators", mode="before")
    @classmethod
    def _logins(cls, value: Any) -> Any:
        # Accept a list of logins or a list of user objects.
        if isinstance(value, list):
            return [item.get("login", "") if isinstance(item, dict) else item for item in value]
        return value


def parse_raw(raw: dict[str, Any]) -> RawContext:
    return RawContext.model_validate(raw)
