"""Every requirement id the code and the published schemas cite (``MISSION P7``, or
``(P2: ...)``) is defined in ``docs/requirements.md``: an id nobody can look up tells
the next reader nothing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CITED = re.compile(r"\b([TPAGML][0-9]{1,2}|C[1-9])(?:\.[0-9])?\b")
DEFINED = re.compile(r"^- \*\*([A-Z][0-9]{1,2})\*\* ", re.M)


def cited_ids(paths: list[Path]) -> dict[str, str]:
    """Each id cited in ``paths`` -> the first place, as ``path:line``."""
    found: dict[str, str] = {}
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in CITED.finditer(line):
                found.setdefault(match.group(1), f"{path.relative_to(ROOT)}:{number}")
    return found


def defined_ids(text: str) -> set[str]:
    return set(DEFINED.findall(text))


def test_the_check_reads_cited_and_defined_ids(tmp_path: Path) -> None:
    assert defined_ids("- **P7** One document.\n- **M10** Every call.\n") == {"P7", "M10"}
    assert [m.group(1) for m in CITED.finditer("(MISSION P7, A7.1) and M10; TP1 x2")] == [
        "P7",
        "A7",
        "M10",
    ]


def test_every_cited_requirement_is_defined() -> None:
    defined = defined_ids((ROOT / "docs" / "requirements.md").read_text(encoding="utf-8"))
    sources = sorted((ROOT / "src" / "tusk").rglob("*.py"))
    sources += sorted((ROOT / "docs" / "schemas").glob("*.json"))
    undefined = {i: where for i, where in cited_ids(sources).items() if i not in defined}
    assert undefined == {}
    assert len(defined) > 40
