"""The box's command line, the network's decisions and the egress filter, pure."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from tusk.contracts.config import (
    DEFAULT_ALLOWED_HOSTS,
    Agent,
    Settings,
    network_summary,
    parse_settings,
)
from tusk.errors import ConfigError
from tusk.steps.run_claude.box import bwrap, egress, tools_shell, users
from tusk.steps.run_claude.box import place as box_place
from tusk.steps.run_claude.box.network import NetworkFenceError, plan_network
from tusk.steps.run_claude.box.principal import Principal

USER = Principal("tusk-agent-1-1-abcdef", 4321, 4322, Path("/home/tusk-agent-1-1-abcdef/home"))
BASE = Path("/home/tusk-agent-1-1-abcdef")
TOOLS = bwrap.Tools(bwrap="/usr/bin/bwrap", setpriv="/usr/bin/setpriv", socat="/usr/bin/socat")


def pairs(argv: Sequence[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, item in enumerate(argv[:-1]) if item == flag]


def test_the_box_has_namespaces_of_its_own_and_a_read_only_host() -> None:
    plan = bwrap.BoxPlan(
        user=USER,
        base=BASE,
        cwd=BASE / "workspace",
        socket_dir=Path("/r/sock"),
        bridges=("model", "mcp"),
        claude=Path("/opt/claude"),
    )
    argv = bwrap.box_argv(plan, ["claude", "-p"], tools=TOOLS)
    box, _, rest = " ".join(argv).partition(" -- ")
    for flag in ("--unshare-net", "--unshare-ipc", "--unshare-pid", "--unshare-uts"):
        assert flag in box.split()
    assert "--ro-bind / /" in box and "--die-with-parent" in box
    assert pairs(argv, "--tmpfs") == ["/tmp", "/var/tmp", "/run", "/home"]
    assert pairs(argv, "--bind") == [str(BASE), "/r/sock"]
    assert f"--ro-bind /opt/claude {bwrap.CLAUDE_PATH}" in box
    # Inside, the agent: its uid and group, no capabilities, nothing to gain.
    assert rest.startswith(
        "/usr/bin/setpriv --reuid=4321 --regid=4322 --clear-groups --inh-caps=-all "
        "--bounding-set=-all --no-new-privs -- /bin/sh -p -c "
    )
    assert argv[-6:] == ["/usr/bin/socat", "4101=model", "4102=mcp", "--", "claude", "-p"]


def test_claude_codes_box_starts_it_with_an_effective_group_other_than_its_real_one() -> None:
    """execve(2) makes a program run with egid != rgid non-dumpable; the run's group
    stays its real and supplementary group, and ``sh -p`` keeps the split up to the
    exec of Claude Code."""
    box = bwrap.Box(TOOLS, USER, BASE, BASE / "sock", shield_gid=65534)
    argv = box.claude([bwrap.CLAUDE_PATH, "-p"], claude=Path("/opt/claude"), cwd=BASE, bridges=())
    drop = " ".join(argv).partition(" -- ")[2]
    assert drop.startswith(
        "/usr/bin/setpriv --reuid=4321 --rgid=4322 --egid=65534 --groups=4322 --inh-caps=-all "
    )
    assert "--clear-groups" not in argv and "/bin/sh -p -c" in drop
    # git's box (``plain``) keeps one group: nothing there to shield.
    plain = " ".join(box.plain(["git", "status"], cwd=BASE))
    assert "--regid=4322 --clear-groups" in plain


def test_the_shield_group_grants_nothing() -> None:
    gid = bwrap.shield_group()
    assert gid not in (0, USER.gid)
    assert bwrap.shield_group() == gid  # the same every time: no group is made for it


def test_an_open_network_is_the_hosts_but_the_rest_of_the_box_stays() -> None:
    plan = bwrap.BoxPlan(user=USER, base=BASE, cwd=BASE, share_net=True)
    box = bwrap.box_argv(plan, ["true"], tools=TOOLS)
    assert "--unshare-net" not in box
    assert {"--unshare-ipc", "--unshare-pid", "--unshare-uts"} <= set(box)


def test_a_box_the_kernel_refuses_is_found_before_the_agent_starts() -> None:
    seen: list[list[str]] = []

    def refusing(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        seen.append(argv)
        return subprocess.CompletedProcess(
            argv, 1, "", "bwrap: No permissions to create new namespace"
        )

    assert "No permissions" in (bwrap.problem(USER, BASE, tools=TOOLS, run=refusing) or "")
    assert seen[0][-1] == "true" and "--unshare-net" in seen[0]

    def working(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 0, "", "")

    assert bwrap.problem(USER, BASE, tools=TOOLS, run=working) is None


def test_without_the_boxs_tools_the_run_says_which_package_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(
        bwrap.shutil,
        "which",
        lambda name, path=None: None if name == "bwrap" else f"/usr/bin/{name}",
    )
    tools, reason = box_place.box_decision(isolated=True, run_dir=tmp_path)
    assert tools is None and reason == "bubblewrap is not installed (apt-get install bubblewrap)"
    assert box_place.box_decision(isolated=False, run_dir=tmp_path) == (
        None,
        "user isolation is off, so there is no agent user to box",
    )


def test_a_box_that_cannot_be_made_is_said_whole_in_the_isolation_note() -> None:
    decision = users.Decision(True, "Claude Code runs as a separate unprivileged user")
    note = box_place.isolation_note(decision, "the kernel refused the box's namespaces (x)")
    assert "box is OFF (the kernel refused" in note and "abstract ones too" in note
    assert "network, IPC, PID, UTS and mount" in box_place.isolation_note(decision, None)


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
    ("allowed", "target", "passes"),
    [
        ("pypi.org", "pypi.org:443", True),
        ("pypi.org", "PyPI.org:443", True),
        ("pypi.org", "pypi.org:22", False),  # CONNECT to another port
        ("pypi.org", "pypi.org:4430", False),
        ("pypi.org", "http://pypi.org/simple/", False),  # plain HTTP, even to an allowed host
        ("pypi.org", "http://pypi.org:8080/", False),
        ("pypi.org", "evilpypi.org:443", False),
        ("pypi.org", "pypi.org.evil.com:443", False),
        ("pypi.org", "pypiXorg:443", False),
        ("*.example.com", "a.b.example.com:443", True),
        ("*.example.com", "example.com:443", False),
        ("*.example.com", "badexample.com:443", False),
        ("*.example.com", "evil.com/x.example.com:443", False),
        ("registry.npmjs.org", "registry.npmjs.org:443", True),
    ],
)
def test_the_egress_filter_lets_through_connect_to_443_of_allowed_hosts_alone(
    allowed: str, target: str, passes: bool
) -> None:
    """Matched against the whole request target (FilterURLs On): CONNECT's is
    host:port, a plain HTTP request's is its URL."""
    pattern = egress.filter_text([allowed]).strip()
    assert bool(re.search(pattern, target, re.IGNORECASE)) is passes


def test_the_egress_proxy_config_denies_by_default_and_drops_root() -> None:
    text = egress.config_text(
        port=3128, filter_path=egress.Path("/r/f"), drop_to=("nobody", "nogroup")
    )
    for line in ("Listen 127.0.0.1", "FilterDefaultDeny Yes", "FilterURLs On", "ConnectPort 443"):
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


def test_the_tools_shell_runs_bash_in_namespaces_of_its_own_mapping_the_agent_onto_itself() -> None:
    text = tools_shell.script("/usr/bin/unshare")
    assert text.startswith("#!/bin/bash\nexec /usr/bin/unshare --user ")
    assert '--map-user="$UID" --map-group="$(id -g)" --pid --fork --kill-child -- ' in text
    assert text.rstrip().endswith('/bin/bash "$@"')
    box = bwrap.Box(TOOLS, USER, BASE, BASE / "sock", tools_shell=BASE / "bin" / "tools-shell")
    argv = box.claude([bwrap.CLAUDE_PATH], claude=Path("/opt/claude"), cwd=BASE, bridges=())
    assert f"--ro-bind {BASE}/bin/tools-shell {bwrap.TOOLS_SHELL}" in " ".join(argv)
    assert box.shell == bwrap.TOOLS_SHELL
    assert bwrap.Box(TOOLS, USER, BASE, BASE / "sock").shell == "/bin/bash"


def test_a_kernel_that_refuses_the_tools_a_user_namespace_is_found_and_said() -> None:
    seen: list[list[str]] = []

    def refusing(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 1, "", "unshare: unshare failed: EPERM")

    said = tools_shell.problem(USER, BASE, tools=TOOLS, unshare="/usr/bin/unshare", run=refusing)
    assert said == "unshare: unshare failed: EPERM"
    assert seen[0][0] == TOOLS.bwrap and seen[0][-1].endswith("--kill-child -- true")
    users_on = users.Decision(True, "Claude Code runs as a separate unprivileged user")
    note = box_place.isolation_note(users_on, None, "the kernel refused")
    assert note.endswith("; its tools share its PID namespace (the kernel refused)")
    assert box_place.isolation_note(users_on, None).endswith(
        ", its tools in user and PID namespaces of their own"
    )
