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
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import SecretStr

from tusk.attest.identity import Expected
from tusk.attest.store import bundles_for
from tusk.attest.verify_issue import COMMAND_WORKFLOW, Wanted, signed_verdict
from tusk.audit.chain import head_hash, read_records, verify_chain
from tusk.audit.on_issue import AuditSet, verify_comments
from tusk.errors import InputError

if TYPE_CHECKING:
    from tusk.github.gateway import Gateway

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
    signed = verify.add_argument_group(
        "attestation (a log issue's run signed with the agent workflow's identity)"
    )
    signed.add_argument(
        "--trust-root",
        type=Path,
        default=os.environ.get("TUSK_ATTEST_TRUST_ROOT") or None,
        help="Sigstore's trusted_root.json, or a trusted_root.jsonl of several (as "
        "`gh attestation trusted-root` prints): a bundle with a transparency-log entry "
        "is verified by sigstore-python's Verifier, one without by its signed timestamp "
        "(GitHub's route for a private repository); or PEM certificate(s) the signing "
        "certificate must chain to (Tusk's own verifier, no log or timestamp checked) "
        "(default: $TUSK_ATTEST_TRUST_ROOT)",
    )
    signed.add_argument(
        "--workflow",
        default=Expected.workflow,
        help="the control repository's agent workflow that must have signed "
        f"(default: {Expected.workflow})",
    )
    signed.add_argument(
        "--command-workflow",
        default=COMMAND_WORKFLOW,
        help="the workflow that must have signed an apply's or undo's continuation "
        f"(default: {COMMAND_WORKFLOW})",
    )
    signed.add_argument(
        "--tusk-ref",
        default=None,
        help="the ref of Tusk's workflow the signer must have run, e.g. v1 (default: any)",
    )
    signed.add_argument(
        "--require-attestation",
        action="store_true",
        help="fail when the run is not signed (signing off, or no attestation named)",
    )


def run(args: argparse.Namespace) -> int:
    source: str = args.source
    if source.startswith(("http://", "https://")):
        return verify_issue(source, args)
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


def verify_issue(url: str, args: argparse.Namespace | None = None) -> int:
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
        found, verdict = verify_comments(comments)
        signed = None
        if verdict.ok and found is not None:
            signed = check_signed(
                comments,
                found,
                verdict.head,
                match["repo"],
                gateway,
                args,
                transcript=found.transcript,
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
    if signed is not None:
        ok, message = signed
        print(f"{where}: {message}", file=sys.stdout if ok else sys.stderr)
        if not ok:
            return 1
    return 0


def check_signed(
    comments: list[dict[str, Any]],
    found: AuditSet,
    head: str,
    repository: str,
    gateway: Gateway,
    args: argparse.Namespace | None,
    *,
    transcript: str | None,
) -> tuple[bool, str]:
    """Whether the record's attestation holds (or may be missing), and what to say."""
    wanted = Wanted()
    if args is not None:
        wanted = Wanted(
            trust_root=Path(args.trust_root) if args.trust_root else None,
            workflow=args.workflow,
            command_workflow=args.command_workflow,
            tusk_ref=args.tusk_ref,
            require=args.require_attestation,
        )
    return signed_verdict(
        comments,
        found,
        head,
        repository,
        lambda digest: bundles_for(gateway, repository, digest),
        wanted,
    )
