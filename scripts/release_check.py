"""Check that a tag is a release: the tag, the version and the CHANGELOG agree.

Run by the release workflow on every `v*` tag before anything is built, and by
the tests on the tree as it is:

    python scripts/release_check.py v0.2.0 [--notes FILE]   # exit 0, or each problem, exit 1

A release is `vX.Y.Z` where X.Y.Z is `tusk.__version__` (pyproject reads it
from there, and `tusk init` calls `v<that>` by default), with a
`## [X.Y.Z] - YYYY-MM-DD` section in CHANGELOG.md that says something. On
success it writes the section's text, the release notes, to FILE (or prints it).

README's set-up ("Putting Tusk on your own bot") installs one release, and a
reader runs its steps with that release: its install ref must be the tag, and
every `tusk` command and option its steps use must be in the CHANGELOG at that
release or before it, not only in a later section or under "Unreleased"
(`readme_problems`, which the tests also run on the tree as it is).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})\s*$", re.MULTILINE)
ANY_SECTION = re.compile(r"^## (?:\[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}|Unreleased)\s*$", re.M)
SETUP = "## Putting Tusk on your own bot"
SETUP_END = "\nThe secrets the control repository holds"
INSTALL_REF = re.compile(r"pip install git\+https://github\.com/[\w.-]+/[\w.-]+@(v[\w.]+)")
COMMAND = re.compile(r"\btusk ([a-z][a-z-]*)((?:[ \t]+[^\s`]+)*)")
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")


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


def setup_steps(readme: str) -> str:
    """The numbered steps of README's set-up: what a reader runs."""
    if SETUP not in readme:
        return ""
    return readme.split(SETUP, 1)[1].split("\n## ", 1)[0].split(SETUP_END, 1)[0]


def setup_words(steps: str) -> set[str]:
    """Each ``tusk COMMAND`` and each of its ``--options`` the steps use."""
    words = set()
    for command, rest in COMMAND.findall(steps):
        words.add(f"tusk {command}")
        words.update(OPTION.findall(rest))
    words.update(OPTION.findall(" ".join(re.findall(r"`([^`\n]*)`", steps))))
    return words


def first_mentions(changelog: str) -> dict[str, str]:
    """Each word of the CHANGELOG -> the oldest section naming it ("Unreleased" or X.Y.Z)."""
    heads = list(ANY_SECTION.finditer(changelog))
    first: dict[str, str] = {}
    for number, head in enumerate(heads):  # newest first: older sections overwrite
        end = heads[number + 1].start() if number + 1 < len(heads) else len(changelog)
        text = changelog[head.end() : end]
        words = {f"tusk {c}" for c, _ in COMMAND.findall(text)} | set(OPTION.findall(text))
        for word in words:
            first[word] = head.group(1) or "Unreleased"
    return first


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def readme_problems(root: Path = ROOT, tag: str | None = None) -> list[str]:
    """README's set-up installs a release (``tag`` when given) and uses only what the
    CHANGELOG places at that release or before it."""
    readme = (root / "README.md").read_text(encoding="utf-8")
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    steps = setup_steps(readme)
    found = INSTALL_REF.search(steps)
    if found is None:
        return [f"README's set-up ({SETUP}) has no `pip install git+https://...@vX.Y.Z`"]
    ref = found.group(1)
    problems = []
    if tag is not None and ref != tag:
        problems.append(f"README's set-up installs {ref}, not the tag {tag}")
    if not re.fullmatch(r"v\d+\.\d+\.\d+", ref):
        return [*problems, f"README's set-up installs {ref}, which is not a release vX.Y.Z"]
    first = first_mentions(changelog)
    for word in sorted(setup_words(steps)):
        since = first.get(word)
        if since is None:
            problems.append(f"README's set-up uses `{word}`, which CHANGELOG.md never names")
        elif since == "Unreleased" or _key(since) > _key(ref[1:]):
            problems.append(
                f"README's set-up installs {ref} but uses `{word}`, which CHANGELOG.md places "
                f"in {since if since == 'Unreleased' else 'v' + since}"
            )
    return problems


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
    return found + readme_problems(root, tag)


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
