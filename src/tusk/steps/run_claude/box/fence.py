"""The network fence: the agent's user may connect only to this run's own servers.

Kernel owner match (``iptables -m owner --uid-owner``) on the OUTPUT chain, in
a chain of this run's own (``TUSK-AGENT-<uid>``): the run's user may open TCP
connections to 127.0.0.1 on exactly the ports of the model proxy, the MCP
server and the egress proxy; every other packet it sends is refused at once
(TCP reset, ICMP unreachable), other loopback ports and DNS included. IPv6 is
refused whole. The rules name only this run's uid and are removed when the
run ends (and again by the cleanup step); Docker's and anyone else's chains
are left alone.

``rules``/``removal`` are pure (the argv after ``iptables -w``); ``Fence``
applies them.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tusk.errors import UserError

SBIN_PATH = "/usr/sbin:/sbin:/usr/bin:/bin"
IPV6_PRESENT = Path("/proc/net/if_inet6")


class FenceError(UserError):
    """The fence could not be put up."""


@dataclass(frozen=True)
class FencePlan:
    uid: int
    ports: tuple[int, ...]  # loopback TCP ports the agent may connect to

    @property
    def chain(self) -> str:
        return chain_name(self.uid)


def chain_name(uid: int) -> str:
    return f"TUSK-AGENT-{uid}"  # iptables allows 28 characters


def jump(uid: int) -> list[str]:
    return ["OUTPUT", "-m", "owner", "--uid-owner", str(uid), "-j", chain_name(uid)]


def ipv4_rules(plan: FencePlan) -> list[list[str]]:
    chain = plan.chain
    loopback = ["-o", "lo", "-d", "127.0.0.1/32", "-p", "tcp"]
    allowed = [
        ["-A", chain, *loopback, "--dport", str(port), "-j", "ACCEPT"]
        for port in sorted(set(plan.ports))
    ]
    return [
        ["-N", chain],
        *allowed,
        ["-A", chain, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"],
        ["-A", chain, "-j", "REJECT", "--reject-with", "icmp-port-unreachable"],
        ["-I", *jump(plan.uid)[:1], "1", *jump(plan.uid)[1:]],
    ]


def ipv6_rules(plan: FencePlan) -> list[list[str]]:
    chain = plan.chain
    return [
        ["-N", chain],
        ["-A", chain, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"],
        ["-A", chain, "-j", "REJECT"],
        ["-I", *jump(plan.uid)[:1], "1", *jump(plan.uid)[1:]],
    ]


def removal(uid: int) -> list[list[str]]:
    chain = chain_name(uid)
    return [["-D", *jump(uid)], ["-F", chain], ["-X", chain]]


Runner = Callable[[Sequence[str]], subprocess.CompletedProcess[str]]


def _run(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), capture_output=True, text=True, check=False, env={"PATH": SBIN_PATH}
    )


def tools(ipv6: bool | None = None) -> dict[str, str | None]:
    """Where the fence's commands are (None when missing)."""
    ipv6 = IPV6_PRESENT.exists() if ipv6 is None else ipv6
    names = ["iptables", *(["ip6tables"] if ipv6 else [])]
    return {name: shutil.which(name, path=SBIN_PATH) for name in names}


def unavailable_reason(*, euid: int, isolated: bool, found: dict[str, str | None]) -> str | None:
    """Why the fence cannot be put up here, or None when it can."""
    if euid != 0:
        return "not root, so no firewall rule can be set"
    if not isolated:
        return "user isolation is off, so there is no agent user to fence"
    missing = sorted(name for name, path in found.items() if path is None)
    if missing:
        return f"{', '.join(missing)} is not installed (apt-get install iptables)"
    return None


class Fence:
    """Applies and removes one run's rules; each command runs with ``-w`` (wait for
    the xtables lock: concurrent runs change the tables at the same time)."""

    def __init__(self, found: dict[str, str | None], run: Runner = _run) -> None:
        self._v4 = found.get("iptables")
        self._v6 = found.get("ip6tables")
        self._run = run

    def apply(self, plan: FencePlan) -> None:
        # The uid is this run's now: rules naming it are a dead run's (killed before its
        # cleanup, its uid handed out again), and would let this run reach old ports.
        self.remove(plan.uid)
        try:
            for binary, rules in ((self._v4, ipv4_rules(plan)), (self._v6, ipv6_rules(plan))):
                if binary is None:
                    continue
                for rule in rules:
                    done = self._run([binary, "-w", *rule])
                    if done.returncode != 0:
                        raise FenceError(
                            "The network fence could not be put up",
                            f"`{Path(binary).name} {' '.join(rule)}` said: "
                            f"{done.stderr.strip()[-500:]}",
                        )
        except FenceError:
            self.remove(plan.uid)
            raise

    def remove(self, uid: int) -> bool:
        """Remove this uid's rules wherever they are; True if any were there."""
        removed = False
        for binary in (self._v4, self._v6):
            if binary is None:
                continue
            delete, flush, drop = removal(uid)
            while self._run([binary, "-w", *delete]).returncode == 0:
                removed = True  # every jump, should one have been added twice
            self._run([binary, "-w", *flush])
            removed = self._run([binary, "-w", *drop]).returncode == 0 or removed
        return removed


def probe(found: dict[str, str | None], run: Runner = _run) -> str | None:
    """Whether the kernel lets us list the tables: None if so, else what was said."""
    binary = found.get("iptables")
    if binary is None:
        return "iptables is not installed"
    done = run([binary, "-w", "-S", "OUTPUT"])
    if done.returncode != 0:
        return f"iptables cannot be used here: {done.stderr.strip()[-300:]}"
    return None
