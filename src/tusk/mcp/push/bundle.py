"""What ``push_branch`` accepts from the agent's side: a git bundle, checked before git reads it.

The agent's commits reach the server as a bundle that a process running as
the agent's own user made (``workspace_git``). The server never opens the
agent's workspace: a workspace is a directory of files the agent controls
(symlinked refs, ``objects/info/alternates``, config), and git running as
the server would follow them into repositories the agent itself cannot read.
A bundle is only a header and a pack: plain objects and refs.

Pure: ``parse_bundle`` reads the header and ``check_bundle`` decides whether
it is what was asked for. Anything else (another version or capability, more
refs than the one branch, a prerequisite the server did not offer, no pack)
is refused with ``INVALID_PUSH``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tusk.mcp.gate.policy import Refused

SIGNATURES = {b"# v2 git bundle\n": 2, b"# v3 git bundle\n": 3}
# v3 capabilities a plain bundle may carry: its hash. A filter (a partial bundle,
# objects left out) or anything newer is not plain objects and refs.
ALLOWED_CAPABILITIES = frozenset({"object-format=sha1"})
MAX_HEADER_BYTES = 64 * 1024
_OID = re.compile(rb"^[0-9a-f]{40}$")
PACK_SIGNATURE = b"PACK"


@dataclass(frozen=True)
class Bundle:
    version: int
    capabilities: tuple[str, ...]
    prerequisites: tuple[str, ...]  # object ids the pack assumes present
    refs: tuple[tuple[str, str], ...]  # (object id, ref name)
    pack_offset: int


def invalid(reason: str) -> Refused:
    return Refused(
        "INVALID_PUSH",
        f"the commits taken from your workspace are not plain git objects and one branch: "
        f"{reason}. Commit normally on the branch (no grafts, replace refs, alternates, "
        "partial clones or symlinked refs) and push again.",
    )


def parse_bundle(data: bytes) -> Bundle:
    """The header of a v2/v3 git bundle; raises ``Refused`` when it is not one."""
    signature = next((s for s in SIGNATURES if data.startswith(s)), None)
    if signature is None:
        raise invalid("it does not start like a git bundle")
    end = data.find(b"\n\n", 0, MAX_HEADER_BYTES)
    if end == -1:
        raise invalid("its header never ends")
    lines = data[len(signature) : end].split(b"\n") if end > len(signature) - 1 else []
    capabilities: list[str] = []
    prerequisites: list[str] = []
    refs: list[tuple[str, str]] = []
    for line in lines:
        if not line:
            continue
        if line.startswith(b"@"):
            if SIGNATURES[signature] < 3 or prerequisites or refs:
                raise invalid("a capability line out of place")
            capabilities.append(line[1:].decode("ascii", "replace"))
        elif line.startswith(b"-"):
            oid = line[1:41]
            if not _OID.match(oid) or line[41:42] not in (b"", b" "):
                raise invalid("a malformed prerequisite line")
            prerequisites.append(oid.decode())
        else:
            oid, sep, name = line.partition(b" ")
            if not _OID.match(oid) or not sep or not name:
                raise invalid("a malformed ref line")
            try:
                refs.append((oid.decode(), name.decode("utf-8")))
            except UnicodeDecodeError:
                raise invalid("a ref name that is not UTF-8") from None
    offset = end + 2
    if data[offset : offset + 4] != PACK_SIGNATURE:
        raise invalid("no pack follows the header")
    return Bundle(
        version=SIGNATURES[signature],
        capabilities=tuple(capabilities),
        prerequisites=tuple(prerequisites),
        refs=tuple(refs),
        pack_offset=offset,
    )


def check_bundle(bundle: Bundle, *, branch: str, offered: Iterable[str]) -> str:
    """The branch's commit id, when the bundle holds exactly what was asked for."""
    unknown = [c for c in bundle.capabilities if c not in ALLOWED_CAPABILITIES]
    if unknown:
        raise invalid(f"it needs {', '.join(sorted(unknown))[:200]}")
    wanted = f"refs/heads/{branch}"
    names = [name for _, name in bundle.refs]
    if names != [wanted]:
        shown = ", ".join(repr(n) for n in names[:5]) or "none"
        raise invalid(f"it should carry the one ref {wanted}, and carries {shown}")
    allowed = set(offered)
    extra = [p for p in bundle.prerequisites if p not in allowed]
    if extra:
        raise invalid(f"it assumes {len(extra)} commit(s) the server does not have")
    return bundle.refs[0][0]
