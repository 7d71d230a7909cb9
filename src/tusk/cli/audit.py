"""``tusk audit verify FILE | LOG-ISSUE-URL``: check an audit log's hash chain.

A file is an ``audit.jsonl`` (a run directory's, or the run artifact's). A URL
is a log issue: its audit comments are read back, joined and verified from the
issue alone (``tusk.audit.on_issue``).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import SecretStr

from tusk.audit.chain import head_hash, read_records, verify_chain
from tusk.audit.on_issue import verify_comments
from tusk.errors import InputError

ISSUE_URL = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/issues/(?P<number>[0-9]+)/?$")
TOKEN_ENVS = ("TUSK_READ_TOKEN", "GITHUB_TOKEN")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    verify = sub.add_parser("verify", help="exit non-zero at the first broken link of the chain")
    verify.add_argument(
        "source",
        help="an audit.jsonl written by the MCP server, or a log issue's URL "
        "(https://github.com/OWNER/REPO/issues/N)",
    )


def run(args: argparse.Namespace) -> int:
    source: str = args.source
    if source.startswith(("http://", "https://")):
        return verify_issue(source)
    return verify_file(Path(source))


def verify_file(path: Path) -> int:
    if not path.is_file():
        raise InputError(
            f"{path}: no such audit log",
            "Pass the audit.jsonl of a run directory or artifact, or a log issue's URL.",
        )
    broken = verify_chain(path)
    if (  # a file whose first line is no record at all is no chain: nothing "broke"
        broken is not None
        and broken.line == 1
        and broken.reason.startswith(("not JSON", "not an audit record"))
    ):
        raise InputError(
            f"{path}: not an audit log (its first line is {broken.reason})",
            "Pass the audit.jsonl of a run directory or of its tusk-audit-* artifact, "
            "or a log issue's URL.",
        )
    if broken is not None:
        print(f"{path}: chain broken at line {broken.line}: {broken.reason}", file=sys.stderr)
        return 1
    records = read_records(path)
    print(f"{path}: {len(records)} record(s), chain intact, head {head_hash(records)}")
    return 0


def api_url_for(issue_url: str, environ: dict[str, str] | None = None) -> str:
    """TUSK_GITHUB_API_URL, else the API beside the issue's host (github.com or GHES)."""
    env = os.environ if environ is None else environ
    if env.get("TUSK_GITHUB_API_URL"):
        return env["TUSK_GITHUB_API_URL"].rstrip("/")
    parts = urlsplit(issue_url)
    if parts.hostname in ("github.com", "www.github.com"):
        return "https://api.github.com"
    return f"{parts.scheme}://{parts.netloc}/api/v3"


def verify_issue(url: str) -> int:
    from tusk.github.gateway import Gateway, NotFound

    match = ISSUE_URL.match(urlsplit(url).path)
    if match is None:
        raise InputError(
            f"{url} is not an issue's URL", "Pass https://github.com/OWNER/REPO/issues/N."
        )
    token = next((os.environ[name] for name in TOKEN_ENVS if os.environ.get(name)), None)
    gateway = Gateway(
        api_url=api_url_for(url),
        token=SecretStr(token) if token else None,
        token_name="read",
    )
    try:
        comments = list(
            gateway.paginate(f"/repos/{match['repo']}/issues/{match['number']}/comments")
        )
    except NotFound:
        if token is not None:
            raise
        raise InputError(
            f"{url}: not found, and no token was sent (TUSK_READ_TOKEN is not set)",
            "A private control repository's issue reads as not found without a token: "
            "export TUSK_READ_TOKEN (the bot's read token) and run again.",
        ) from None
    finally:
        gateway.close()
    found, verdict = verify_comments(comments)
    where = f"{url}: audit of job {found.jobid} (run {found.run})" if found else url
    if found is not None and found.edited:
        edited = ", ".join(map(str, found.edited))
        print(f"{where}: audit part(s) {edited} were edited after posting", file=sys.stderr)
    if not verdict.ok:
        print(f"{where}: {verdict.message}", file=sys.stderr)
        return 1
    parts = found.parts if found else 0
    print(
        f"{where}: {verdict.records} record(s) in {parts} comment(s), chain intact, "
        f"head {verdict.head}"
    )
    return 0
