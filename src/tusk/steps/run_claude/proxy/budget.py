"""The run's model proxy as run-claude sets it up: the credentials it alone holds,
its guard, its meter and the budget that stops the session."""

from __future__ import annotations

from pathlib import Path

from tusk import actions_edge
from tusk.contracts.config import Secrets, Settings
from tusk.contracts.pricing import Spend
from tusk.steps.run_claude.proxy.exchanges import Record
from tusk.steps.run_claude.proxy.guard import RequestGuard
from tusk.steps.run_claude.proxy.metering import Meter
from tusk.steps.run_claude.proxy.prior import PriorTurns
from tusk.steps.run_claude.proxy.proxy import Credentials, ModelProxy
from tusk.steps.run_claude.session.watch import StopReason

SPEND_FILE = "spend.json"


def model_credentials(secrets: Secrets) -> Credentials:
    """The model API's credentials, held by the model proxy alone."""
    if secrets.anthropic_api_key is None and secrets.anthropic_auth_token is None:
        secrets.require("anthropic_api_key")  # raises, naming the variable
    return Credentials(api_key=secrets.anthropic_api_key, auth_token=secrets.anthropic_auth_token)


def run_meter(settings: Settings) -> Meter:
    return Meter(
        budget_usd=settings.agent.max_budget_usd,
        prices=settings.agent.prices,
        on_exceeded=announce_budget,
    )


def model_proxy(
    settings: Settings,
    upstream: str | None,
    credentials: Credentials,
    meter: Meter,
    record: Record | None = None,
    prior: PriorTurns | None = None,
) -> ModelProxy:
    """The real key stays in this process: Claude Code talks to the proxy with this run's
    own proxy key. Until the fence is known to be up, the proxy lets the API reach
    nothing for the agent (fenced) either."""
    guard = RequestGuard(fenced=True, web_search="WebSearch" in settings.agent.builtin_tools)
    return ModelProxy(
        upstream=upstream,
        credentials=credentials,
        meter=meter,
        guard=guard,
        record=record,
        prior=prior,
    )


def budget_stop(meter: Meter) -> StopReason | None:
    if not meter.exceeded:
        return None
    spend = meter.spend()
    room = "" if spend.exceeded else "; no room left for another request's worst case"
    # The run's own budget: agent.max_budget_usd, or lower (the marker, the requester's cap).
    return StopReason("budget", f"budget exceeded: {spend.line()}{room} (the run's budget)")


def announce_budget(spend: Spend) -> None:
    actions_edge.error("Model budget exceeded", detail=f"budget exceeded: {spend.line()}")


def save_spend(run_dir: Path, spend: Spend) -> None:
    (run_dir / SPEND_FILE).write_text(spend.model_dump_json(indent=2) + "\n", encoding="utf-8")
