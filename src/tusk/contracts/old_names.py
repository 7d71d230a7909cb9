"""tusk.yml's renamed keys, still read under their old names for one release.

``staged`` is ``record_only``'s old name ("staged" now means approval's staged set
only). A value given under an old name is read under the new one, with a warning; both
given at odds are refused. The old name stays a field of the settings, marked
deprecated, so a wrong value is still named by the key the user wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tusk import actions_edge

RENAMED = {"staged": "record_only"}  # old name -> new name; each for one release


def read_old_names(data: Any) -> Any:
    """``data`` (tusk.yml's top level) with each well-typed old key's value under its new
    name too."""
    if not isinstance(data, Mapping):
        return data
    for old, new in RENAMED.items():
        if not isinstance(data.get(old), bool):
            continue  # absent, or wrong: the old field names the problem
        if new in data and data[new] != data[old]:
            raise ValueError(f"{old} is the old name of {new}: give {new} only")
        actions_edge.warning(
            f"tusk.yml: `{old}` is now called `{new}`",
            detail=f"Rename the key; `{old}` is read as `{new}` for this release only.",
        )
        data = {**data, new: data[old]}
    return data
