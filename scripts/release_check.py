"""Check that a tag is a release: the tag, the version and the CHANGELOG agree.

Run by the release workflow on every `v*` tag before anything is built, and by
the tests on the tree as it is:

    python scripts/release_check.py v0.1.0 [--notes FILE]   # exit 0, or each problem, exit 1

A release is `vX.Y.Z` where X.Y.Z is `tusk.__version__` (pyproject reads it
from there, and `tusk init` calls `v<that>` by default), with a
`## [X.Y.Z] - YYYY-MM-DD` section in CHANGELOG.md that says something. On
success it writes the section's text, the release notes, to FILE (or prints it).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})\s*$", re.MULTILINE)


def version_in_tree(root: Path) -> str:
    text = (root / "src" / "tusk" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    return found.group(1) if found else ""


def changelog_section(root: Path, version: str) -> str | None:
    """The text of ``## [version]``'s section, or None when there is none."""
    text = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    heads = list(SECTION.finditer(text))
    for number, head in enumerate(heads):
        if head.group(1) == version:
            end = heads[number + 1].start() if number + 1 < len(heads) else len(text)
            return text[head.end() : end].strip()
    return None


def problems(tag: str, root: Path = ROOT) -> list[str]:
    found = []
    version = version_in_tree(root)
    if not re.fullmatch(r"v\d+\.\d+\.\d+", tag):
        found.append(f"the tag {tag!r} is not vX.Y.Z")
    elif tag != f"v{version}":
        found.append(f"the tag {tag} is not the version in src/tusk/__init__.py (v{version})")
    section = changelog_section(root, version)
    if section is None:
        found.append(f"CHANGELOG.md has no '## [{version}] - YYYY-MM-DD' section")
    elif not section:
        found.append(f"CHANGELOG.md's section for {version} is empty")
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Check that a tag is a release.")
    parser.add_argument("tag", help="the tag, vX.Y.Z")
    parser.add_argument("--notes", type=Path, help="write the CHANGELOG section here")
    args = parser.parse_args(argv)
    found = problems(args.tag)
    for problem in found:
        print(f"::error title=Not a release::{problem}")
    if found:
        return 1
    notes = changelog_section(ROOT, version_in_tree(ROOT)) or ""
    if args.notes:
        args.notes.write_text(notes + "\n", encoding="utf-8")
        print(f"{args.tag} is a release; its notes are in {args.notes}")
    else:
        print(notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
