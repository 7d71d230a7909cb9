"""What a push would publish, checked before it is pushed. Pure.

Paths come from git's NUL-separated output (``-z``) as bytes: without ``-z``
git quotes a path holding a non-ASCII character, a tab or a quote
(``".github/workflows/\\303\\251vil.yml"``), and a prefix check on the quoted
form passes.

The secret scan covers everything the push makes public: every new commit
object whole (author and committer names and e-mails, message, any other
header), every new file's bytes, text or binary, every name in a new tree,
and the ref name. A secret already present in a parent's version of the same
file is not new and does not count (a commit that edits a file next to a
public test fixture is not refused for the fixture).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tusk.mcp.gate.policy import PolicyConfig, Refused
from tusk.mcp.gate.posted import MIN_LITERAL_SECRET, SECRET_PATTERNS, strip_invisible

WORKFLOWS = b".github/workflows"
ZERO_OID = "0" * 40
GITLINK_MODE = "160000"
TREE_MODE = "040000"

# The text patterns, on bytes: a binary file holds a token as plain ASCII bytes.
_BYTE_PATTERNS: tuple[tuple[str, tuple[bytes, ...], re.Pattern[bytes]], ...] = tuple(
    (label, tuple(a.encode() for a in anchors), re.compile(pattern.pattern.encode()))
    for label, anchors, pattern in SECRET_PATTERNS
)


@dataclass(frozen=True)
class Change:
    """One path a new commit changes, from ``git diff-tree -z --raw`` (combined for merges)."""

    path: bytes
    new_mode: str
    new: str  # object id of the path's new content
    old: tuple[str, ...]  # the same path in each parent ("000..." where absent)


def parse_raw_changes(data: bytes) -> list[Change]:
    """Parse ``git diff-tree -z -r --raw --no-renames [-c] --no-commit-id`` output.

    Each record is ``:modes... ids... status`` NUL path NUL; a combined record (a
    merge) starts with one colon per parent.
    """
    fields = data.split(b"\0")
    changes: list[Change] = []
    index = 0
    while index < len(fields):
        meta = fields[index]
        if not meta:
            index += 1
            continue
        if not meta.startswith(b":") or index + 1 >= len(fields):
            raise ValueError(f"unexpected diff-tree output near {meta[:80]!r}")
        parents = len(meta) - len(meta.lstrip(b":"))
        parts = meta.lstrip(b":").decode("ascii").split()
        # parents + 1 modes, parents + 1 ids, then the status
        modes, ids = parts[: parents + 1], parts[parents + 1 : 2 * parents + 2]
        changes.append(
            Change(path=fields[index + 1], new_mode=modes[-1], new=ids[-1], old=tuple(ids[:-1]))
        )
        index += 2
    return changes


def shown(path: bytes) -> str:
    """A path as a person should read it in a refusal."""
    return repr(path.decode("utf-8", "backslashreplace"))


def workflow_paths(paths: Iterable[bytes]) -> list[bytes]:
    """The paths that are, or are under, ``.github/workflows`` (any case: a look-alike
    spelling must not be a way around the check on a case-insensitive checkout)."""
    found = []
    for path in paths:
        folded = path.lower()
        if folded == WORKFLOWS or folded.startswith(WORKFLOWS + b"/"):
            found.append(path)
    return found


def check_push_paths(paths: Iterable[bytes], config: PolicyConfig) -> None:
    touched = sorted(set(workflow_paths(paths)))
    if touched and not config.allow_workflow_changes:
        raise Refused(
            "FORBIDDEN_OPERATION",
            f"the branch changes workflow files ({', '.join(shown(p) for p in touched[:5])}); "
            "this installation does not let the agent touch .github/workflows/. Drop those "
            "commits and push again.",
        )


def secrets_in(data: bytes, literals: Sequence[str] = ()) -> dict[bytes, str]:
    """Each secret-looking string in ``data`` and what it looks like."""
    found: dict[bytes, str] = {}
    for label, anchors, pattern in _BYTE_PATTERNS:
        if any(anchor in data for anchor in anchors):
            for match in pattern.finditer(data):
                found.setdefault(match.group(0), label)
    for literal in literals:
        raw = literal.encode()
        if len(literal) >= MIN_LITERAL_SECRET and raw in data:
            found.setdefault(raw, "one of this server's tokens")
    for text in _wide_texts(data):  # a UTF-16 or UTF-32 file holds a token as text too
        for secret, label in secrets_in(text.encode(), literals).items():
            found.setdefault(secret, label)
    if not data.isascii():  # a token split by invisible characters still shows whole
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return found
        visible = strip_invisible(text)
        if visible != text:
            for secret, label in secrets_in(visible.encode(), literals).items():
                found.setdefault(secret, label)
    return found


# UTF-32 before UTF-16: the UTF-32LE mark starts with the UTF-16LE one.
_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _wide_texts(data: bytes) -> list[str]:
    """``data`` read as UTF-16 or UTF-32 text: by its byte order mark, or, where it holds
    NUL bytes (text in those encodings does, UTF-8 text does not), in each of them."""
    for mark, codec in _MARKS:
        if data.startswith(mark):
            return [data[len(mark) :].decode(codec, errors="replace")]
    if b"\0" not in data:
        return []
    return [data.decode(codec, errors="replace") for _, codec in _MARKS]


def masked(data: bytes, secrets: Mapping[bytes, str]) -> bytes:
    """``data`` with each of ``secrets`` blanked, fit to quote back."""
    for secret in secrets:
        data = data.replace(secret, b"[secret]")
    return data


def _refuse(what: str, label: str) -> Refused:
    return Refused(
        "SECRET_IN_BODY",
        f"{what} contains what looks like {label}; nothing was pushed. Remove it from every "
        "commit of the branch (rewrite them: it is in the history too) and push again. Never "
        "publish credentials, even ones found in files or logs.",
    )


def check_pushed_secrets(
    *,
    branch: str,
    commits: Mapping[str, bytes],
    tree_names: Iterable[bytes],
    changes: Sequence[Change],
    blobs: Mapping[str, bytes],
    literals: Sequence[str] = (),
) -> None:
    """Refuse (``SECRET_IN_BODY``) a push that would publish a secret anywhere.

    ``commits``: each new commit's raw object; ``tree_names``: every entry name of the
    new trees; ``changes``: the new commits' changes; ``blobs``: the content of every
    object id those changes name that is a file (new and old versions).
    """
    for label in secrets_in(branch.encode(), literals).values():
        raise _refuse("the branch name", label)
    for oid, raw in commits.items():
        for label in secrets_in(raw, literals).values():
            raise _refuse(f"commit {oid[:12]} (its author, committer or message)", label)
    for name in tree_names:
        found = secrets_in(name, literals)
        for label in found.values():
            raise _refuse(f"a file or folder name ({shown(masked(name, found))})", label)
    for change in changes:
        if change.new_mode in (GITLINK_MODE, TREE_MODE) or change.new == ZERO_OID:
            continue
        new = secrets_in(blobs.get(change.new, b""), literals)
        if not new:
            continue
        before: set[bytes] = set()
        for old in change.old:
            if old != ZERO_OID and old in blobs:
                before.update(secrets_in(blobs[old], literals))
        for secret, label in new.items():
            if secret not in before:
                raise _refuse(f"the file {shown(change.path)}", label)


def tree_entry_names(tree: bytes) -> list[bytes]:
    """The entry names of a raw tree object (``<mode> <name>\\0<20-byte id>`` each)."""
    names = []
    at = 0
    while at < len(tree):
        space = tree.index(b" ", at)
        nul = tree.index(b"\0", space)
        names.append(tree[space + 1 : nul])
        at = nul + 21
    return names
