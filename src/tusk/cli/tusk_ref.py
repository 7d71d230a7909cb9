"""Which Tusk a control repository's callers run (``OWNER/REPO@REF``, this release by
default) and the name of its settings file: what ``tusk init``, ``tusk init --apply``
and ``tusk doctor`` share, kept apart so none of them imports another for it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tusk import REPOSITORY, __version__
from tusk.errors import InputError

CONFIG_FILE = "tusk.yml"
TUSK_REF = re.compile(r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)@([^\s@]+)$")


@dataclass(frozen=True)
class TuskRef:
    """Where Tusk's reusable workflows are called from: ``OWNER/REPO@REF``."""

    repository: str
    ref: str

    @classmethod
    def parse(cls, text: str) -> TuskRef:
        match = TUSK_REF.match(text.strip())
        if match is None:
            raise InputError(
                f"--tusk-ref {text!r} is not OWNER/REPO@REF",
                "Name the Tusk repository and the tag, branch or commit to run, "
                f"e.g. --tusk-ref {RELEASE}.",
            )
        return cls(match.group(1), match.group(2))

    def __str__(self) -> str:
        return f"{self.repository}@{self.ref}"

    def workflow(self, name: str) -> str:
        """The ``uses:`` of one reusable workflow."""
        return f"{self.repository}/.github/workflows/{name}@{self.ref}"


RELEASE = TuskRef(REPOSITORY, f"v{__version__}")
"""The release this Tusk is: what ``tusk init`` calls unless told otherwise."""
