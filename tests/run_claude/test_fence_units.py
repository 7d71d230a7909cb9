"""The network fence's decisions, rules and egress filter, pure."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence

import pytest

from tusk.contracts.config import (
    DEFAULT_ALLOWED_HOSTS,
    Agent,
    Settings,
    network_summary,
    parse_settings,
)
from tusk.errors import ConfigError
from tusk.steps.run_claude.box import egress, fence
from tusk.steps.run_claude.box.network import NetworkFenceError, plan_network

PLAN = fence.FencePlan(uid=4321, ports=(5000, 6000, 5000))


def test_the_agent_may_reach_exactly_the_runs_loopback_ports_and_nothing_else() -> None:
    rules = fence.ipv4_rules(PLAN)
    assert rules[0] == ["-N", "TUSK-AGENT-4321"]
    accepts = [r for r in rules if r[-1] == "ACCEPT"]
    assert [r[r.index("--dport") + 1] for r in accepts] == ["5000", "6000"]
    assert all(r[2:8] == ["-o", "lo", "-d", "127.0.0.1/32", "-p", "tcp"] for r in accepts)
    assert rules[-3][-4:] == ["-j", "REJECT", "--reject-with", "tcp-reset"]
    assert rules[-2] == [
        "-A",
        "TUSK-AGENT-4321",
        "-j",
        "REJECT",
        "--reject-with",
        "icmp-port-unreachable",
    ]
    # Only this run's uid jumps to the chain, first in OUTPUT (before Docker's or others').
    assert rules[-1] == [
        "-I", "OUTPUT", "1", "-m", "owner", "--uid-owner", "4321", "-j", "TUSK-AGENT-4321",
    ]  # fmt: skip


def test_ipv6_is_refused_whole_and_removal_names_only_this_uid() -> None:
    assert not any(r[-1] == "ACCEPT" for r in fence.ipv6_rules(PLAN))
    assert fence.removal(4321) == [
        ["-D", "OUTPUT", "-m", "owner", "--uid-owner", "4321", "-j", "TUSK-AGENT-4321"],
        ["-F", "TUSK-AGENT-4321"],
        ["-X", "TUSK-AGENT-4321"],
    ]


def test_a_rule_that_fails_takes_the_rules_before_it_away() -> None:
    calls: list[list[str]] = []

    def run(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        calls.append(list(argv))
        failing = "--dport" in argv and "6000" in argv
        deleting = "-D" in argv and calls.count(list(argv)) > 1  # the second -D finds none
        code = 1 if failing or deleting else 0
        return subprocess.CompletedProcess(argv, code, "", "iptables: No chain/target/match")

    with pytest.raises(fence.FenceError, match="could not be put up"):
        fence.Fence({"iptables": "/usr/sbin/iptables"}, run=run).apply(PLAN)
    assert calls[-2:] == [
        ["/usr/sbin/iptables", "-w", "-F", "TUSK-AGENT-4321"],
        ["/usr/sbin/iptables", "-w", "-X", "TUSK-AGENT-4321"],
    ]


@pytest.mark.parametrize(
    ("euid", "isolated", "found", "reason"),
    [
        (0, True, {"iptables": "/x", "ip6tables": "/y"}, None),
        (1000, True, {"iptables": "/x"}, "not root"),
        (0, False, {"iptables": "/x"}, "user isolation is off"),
        (0, True, {"iptables": None, "tinyproxy": None}, "iptables, tinyproxy is not installed"),
    ],
)
def test_why_the_fence_cannot_be_put_up(
    euid: int, isolated: bool, found: dict[str, str | None], reason: str | None
) -> None:
    said = fence.unavailable_reason(euid=euid, isolated=isolated, found=found)
    assert said == reason or (reason is not None and said is not None and reason in said)


def test_the_network_is_fenced_by_default_and_says_how_many_hosts() -> None:
    plan = plan_network(Agent(), unavailable=None)
    assert plan.fenced and plan.status == f"fenced ({len(DEFAULT_ALLOWED_HOSTS)} hosts allowed)"


def test_open_on_purpose_says_why() -> None:
    plan = plan_network(Agent(network="open"), unavailable="not root")
    assert not plan.fenced and plan.status == "open (agent.network: open in tusk.yml)"


def test_a_required_fence_that_cannot_be_put_up_stops_the_run() -> None:
    with pytest.raises(NetworkFenceError, match="cannot be put up: not root"):
        plan_network(Agent(), unavailable="not root")


def test_never_silently_open_the_setting_says_so_in_the_status() -> None:
    plan = plan_network(Agent(network_required=False), unavailable="iptables is missing")
    assert not plan.fenced and plan.warning == plan.status
    assert plan.status == (
        "open (the fence cannot be put up: iptables is missing; agent.network_required: false)"
    )


def base_config(**agent: object) -> dict[str, object]:
    return {"bot": "b", "control_repo": "a/c", "allowed_users": ["a"], "agent": agent}


def test_web_tools_are_refused_behind_the_fence_unless_their_host_is_allowed() -> None:
    with pytest.raises(ConfigError, match="WebFetch, but the agent's network is fenced"):
        parse_settings(base_config(builtin_tools=["Bash", "WebFetch"]), source="tusk.yml")
    allowed = base_config(builtin_tools=["WebSearch"], network={"allow": ["api.anthropic.com"]})
    assert isinstance(parse_settings(allowed, source="t"), Settings)
    opened = base_config(builtin_tools=["WebFetch"], network="open")
    assert parse_settings(opened, source="t").agent.network == "open"


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "10.0.0.1", "pypi.org:443", "*"])
def test_only_hostnames_may_be_allowed(host: str) -> None:
    with pytest.raises(ConfigError, match="not a hostname"):
        parse_settings(base_config(network={"allow": [host]}), source="tusk.yml")


@pytest.mark.parametrize(
    ("allowed", "host", "passes"),
    [
        ("pypi.org", "pypi.org", True),
        ("pypi.org", "PyPI.org", True),
        ("pypi.org", "evilpypi.org", False),
        ("pypi.org", "pypi.org.evil.com", False),
        ("pypi.org", "pypiXorg", False),
        ("*.example.com", "a.b.example.com", True),
        ("*.example.com", "example.com", False),
        ("*.example.com", "badexample.com", False),
        ("registry.npmjs.org", "registry.npmjs.org", True),
    ],
)
def test_the_egress_filter_lets_through_allowed_hosts_alone(
    allowed: str, host: str, passes: bool
) -> None:
    pattern = egress.filter_text([allowed]).strip()
    assert bool(re.search(pattern, host, re.IGNORECASE)) is passes


def test_the_egress_proxy_config_denies_by_default_and_drops_root() -> None:
    text = egress.config_text(
        port=3128, filter_path=egress.Path("/r/f"), drop_to=("nobody", "nogroup")
    )
    for line in ("Listen 127.0.0.1", "FilterDefaultDeny Yes", "FilterURLs Off", "ConnectPort 443"):
        assert line in text.splitlines()
    assert "User nobody" in text and "Port 3128" in text


@pytest.mark.parametrize(
    ("agent", "said"),
    [
        ({}, f"fenced ({len(DEFAULT_ALLOWED_HOSTS)} hosts allowed)"),
        ({"network": "open"}, "open (agent.network: open in tusk.yml)"),
        (
            {"network": {"allow": ["pypi.org"]}, "network_required": False},
            "fenced (1 hosts allowed), or open where no fence can be put up "
            "(agent.network_required: false)",
        ),
    ],
)
def test_the_log_issue_says_how_the_network_is_to_be_held(
    agent: dict[str, object], said: str
) -> None:
    settings = parse_settings(base_config(**agent), source="tusk.yml")
    assert network_summary(settings) == said
    if agent.get("network_required", True):
        # The same words as the run's own status, when the fence goes up as configured.
        assert plan_network(settings.agent, unavailable=None).status == said
