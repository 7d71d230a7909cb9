"""An RFC 6962 Merkle tree: the root of a list of leaves and a leaf's inclusion proof.

What a transparency log (Rekor, a CT log) publishes: leaves hashed with a 0x00
prefix, nodes with 0x01, a tree of any size split at the largest power of two
below it. Proofs list the sibling hashes from the leaf upwards, as RFC 6962's
``PATH`` gives them. Pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """The largest power of two smaller than ``size`` (size > 1)."""
    return 1 << ((size - 1).bit_length() - 1)


def root(leaves: Sequence[bytes]) -> bytes:
    """The tree head of ``leaves`` (already leaf-hashed)."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return _node(root(leaves[:k]), root(leaves[k:]))


def inclusion_proof(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """The audit path of leaf ``index`` in ``leaves`` (already leaf-hashed), lowest first."""
    if not 0 <= index < len(leaves):
        raise ValueError(f"no leaf {index} in a tree of {len(leaves)}")
    if len(leaves) == 1:
        return []
    k = _split(len(leaves))
    if index < k:
        return [*inclusion_proof(index, leaves[:k]), root(leaves[k:])]
    return [*inclusion_proof(index - k, leaves[k:]), root(leaves[:k])]
