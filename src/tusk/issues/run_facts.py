"""The facts of one run that people see on its log issue and in its summary.

Who asked, with what trust level and from which source, the effective
permissions, the permission marker and its error, the budgets, the network and
record-only mode. Pure: built from the context document and the settings, shown by
build-context (log issue body) and run-claude (summary).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tusk.contracts.config import Settings, network_summary
from tusk.contracts.models import ContextDocument, PermissionConfig
from tusk.contracts.run_limits import RunLimits, run_limits
from tusk.github.trust import shown

TRUST_SOURCES = {
    "repository_owner": "owns the repository",
    "permission_endpoint": "from GitHub's permission endpoint",
    "author_association": "from the mention's author association: the permission endpoint "
    "was not readable, and COLLABORATOR there is any invited role (read and triage too), "
    "MEMBER any member of the owning organisation",
    "none": "nothing could be read",
}


class RunFacts(BaseModel):
    """Who asked, with what trust and rights, under which limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requester: str
    trust_level: str
    trust_source: str  # in words: where the trust level came from
    permissions: tuple[str, ...]
    marker: str | None = None  # the permission marker as written, if any
    marker_error: str | None = None
    budget: str
    budget_usd: float | None = None  # the run's budget (reserved against the requester's cap)
    network: str
    record_only: bool = False  # writes recorded, not performed (not approval's staged set)
    resume: str = ""  # resumed from the earlier runs on the thread, or a fresh start and why
    resume_on_thread: str = ""  # the same for the thread's status: no log issue numbers


def describe_permissions(config: PermissionConfig) -> tuple[str, ...]:
    """The effective permissions in a few lines."""
    lines = [f"allowed writes: {', '.join(config.operations) or 'none'}"]
    if config.only_this_thread:
        lines.append("only on the thread of the mention")
    if config.repos is not None:
        lines.append(f"only in: {', '.join(config.repos) or 'no repository'}")
    lines.append(
        f"at most {config.comments_per_thread} comment(s) per thread, "
        f"{config.issues_per_repo} issue(s) and {config.prs_per_repo} pull request(s) "
        f"per repository, {config.memory_writes} memory entr"
        f"{'y' if config.memory_writes == 1 else 'ies'}"
    )
    return tuple(lines)


def run_facts(
    doc: ContextDocument, settings: Settings, limits: RunLimits | None = None
) -> RunFacts:
    """``limits``: the run's own, once run-claude has settled them (else from ``doc``)."""
    config = doc.permission_config
    limits = limits if limits is not None else run_limits(settings, config)
    return RunFacts(
        requester=doc.actor,
        trust_level=shown(doc.trust_level, doc.trust_source),
        trust_source=TRUST_SOURCES.get(doc.trust_source, doc.trust_source),
        permissions=describe_permissions(config),
        marker=config.marker,
        marker_error=config.error,
        budget=limits.summary(),
        budget_usd=limits.budget_usd,
        network=network_summary(settings),
        record_only=settings.record_only,
    )
