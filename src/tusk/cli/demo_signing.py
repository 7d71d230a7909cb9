"""The demo's keyless-signing stand-ins: one OIDC endpoint per workflow, one Fulcio
(with its CT log) and one Rekor behind them all, and the trust root they share
(Sigstore's ``trusted_root.json``), which the demo's last step verifies with
sigstore-python's Verifier."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

Signing = Mapping[str, Mapping[str, str]]  # a workflow's file name → its jobs' signing env


def start_signing(
    stack: contextlib.ExitStack[Any], base: Path, control: str
) -> tuple[Signing, Path]:
    """The OIDC endpoint, Fulcio (with its CT log) and Rekor stand-ins for the agent and
    go-away workflows' jobs (one of each, one trust root: Sigstore's ``trusted_root.json``
    written to ``base``, which ``tusk audit verify`` checks with sigstore-python's
    Verifier), closed with ``stack``."""
    from tusk.sandbox.ctlog import LocalCTLog
    from tusk.sandbox.fulcio import LocalFulcio, LocalIssuer
    from tusk.sandbox.fulcio_server import keyless_stand_in
    from tusk.sandbox.rekor import LocalRekor

    fulcio = LocalFulcio(LocalIssuer(), ct_log=LocalCTLog())
    rekor = LocalRekor()
    stand_ins = {
        workflow: stack.enter_context(
            keyless_stand_in(demo_identity(control, workflow), fulcio, rekor)
        )
        for workflow in ("agent.yml", "go-away.yml")
    }
    root = base / "trusted_root.json"
    root.write_text(json.dumps(stand_ins["agent.yml"].trusted_root()), encoding="utf-8")
    return {workflow: s.environment for workflow, s in stand_ins.items()}, root


def demo_identity(control: str, workflow: str) -> Any:
    """The identity a demo job signs with: the ``control`` repository's caller
    ``workflow`` of this Tusk's reusable workflow."""
    from tusk.attest.identity import WorkflowIdentity
    from tusk.cli.tusk_ref import TuskRef
    from tusk.sandbox.act_runner import PUBLISHED_AS

    tusk = TuskRef.parse(PUBLISHED_AS)
    return WorkflowIdentity(
        server="https://github.com",
        repository=control,
        workflow=f".github/workflows/{workflow}",
        ref="refs/heads/main",
        signer=f"{tusk.repository}/.github/workflows/tusk-{workflow}@{tusk.ref}",
        event="repository_dispatch",
    )
