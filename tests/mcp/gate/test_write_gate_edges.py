"""The smaller gaps of the write gate, through the real server over streamable HTTP where
the server is what decides: the throttle before any request, a write whose answer was
lost, the loop detector's normalisation, wide-encoded secrets in a push, branch names."""

from __future__ import annotations

import codecs
from typing import Any

import pytest

from tests.mcp.mcp_harness import agent_session
from tusk.audit import chain as audit
from tusk.contracts.models import PermissionConfig
from tusk.mcp.gate import policy
from tusk.mcp.gate.policy import PolicyConfig, Refused
from tusk.mcp.push.checks import secrets_in

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def records(running: Any) -> list[tuple[str, str, str | None]]:
    return [(r.tool, r.decision, r.code) for r in audit.read_records(running.audit_path)]


@pytest.mark.anyio
async def test_a_throttled_read_makes_no_github_request(start_mcp, local_github) -> None:
    """The scope's probe of a repository's visibility is a request too: it waits its turn."""
    running = start_mcp(limits={"reads_per_window": 1}, agent={"read_public": True})
    async with agent_session(running.url) as agent:
        await agent.ok("get_issue", repo="alice/widgets", number=1)
        start = len(local_github.journal())
        await agent.refused("get_repository", "RATE_LIMITED", repo="bob/gadgets")
    assert local_github.journal()[start:] == []
    assert records(running)[-1] == ("get_repository", "refused", "RATE_LIMITED")


@pytest.mark.anyio
async def test_a_comment_whose_answer_was_lost_counts_against_the_thread(
    start_mcp, local_github
) -> None:
    """It landed, GitHub's answer was lost and the look-up for its nonce is refused: the
    thread's limit of two holds, where it let a third through."""
    running = start_mcp()
    path = "/repos/alice/widgets/issues/1/comments"
    async with agent_session(running.url) as agent:
        await agent.ok("create_comment", repo="alice/widgets", number=1, body="first")
        local_github.add_fault("POST", f"^{path}$", status=502, lands=True, count=1)
        local_github.add_fault("GET", f"^{path}", status=403, count=None)
        is_error, text = await agent.call(
            "create_comment", repo="alice/widgets", number=1, body="2"
        )
        assert is_error and "may exist" in text, text
        await agent.refused(
            "create_comment", "LIMIT_EXCEEDED", repo="alice/widgets", number=1, body="third"
        )
    state = local_github.state()["repos"]["alice/widgets"]["issues"]["1"]["comments"]
    assert [c["body"].split("\n")[0] for c in state if "tusk:backlink" in c["body"]] == [
        "first",
        "2",
    ]
    assert records(running)[-1] == ("create_comment", "refused", "LIMIT_EXCEEDED")


@pytest.mark.anyio
async def test_alternating_repository_case_is_still_a_loop(start_mcp, local_github) -> None:
    running = start_mcp(limits={"loop_threshold": 4})
    async with agent_session(running.url) as agent:
        for repo in ("alice/widgets", "Alice/Widgets", "alice/widgets "[:-1], "ALICE/widgets"):
            is_error, text = await agent.call("get_issue", repo=repo, number=2)
    assert is_error and text.startswith("LOOP_DETECTED"), text
    assert records(running)[-1][2] == "LOOP_DETECTED"


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
        lambda text: text.encode("utf-16-be"),  # no mark: the NUL pattern tells
        lambda text: codecs.BOM_UTF32_BE + text.encode("utf-32-be"),
        lambda text: text.encode("utf-32-le"),
    ],
    ids=["utf-16-le-bom", "utf-16-be", "utf-32-be-bom", "utf-32-le"],
)
def test_a_token_in_a_wide_encoded_file_is_found(encode: Any) -> None:
    found = secrets_in(encode(f"token = {TOKEN}\n"))
    assert list(found.values()) == ["a GitHub token"]


def test_a_plain_binary_file_with_nuls_is_no_secret() -> None:
    assert secrets_in(bytes(range(256)) * 4) == {}


def config() -> PolicyConfig:
    return PolicyConfig(
        bot="tusk-bot",
        jobid="j",
        control_repo="alice/tusk-control",
        trigger_repo="alice/widgets",
        trigger_number=1,
        log_issue_url="https://github.com/alice/tusk-control/issues/9",
        permissions=PermissionConfig(),
    )


@pytest.mark.parametrize(
    "branch", ["tusk/\u202etxt.exe", "tusk/caf\u00e9", "tusk/a\u200bb", "tusk/\uff41", "tusk/a'b"]
)
def test_branch_names_hold_only_what_the_refusal_promises(branch: str) -> None:
    with pytest.raises(Refused, match="FORBIDDEN_OPERATION") as refused:
        policy.validate_branch(branch, config())
    assert "letters, digits, '-', '_', '.'" in refused.value.reason
    policy.validate_branch("tusk/fix-typo_2.1/a", config())


@pytest.mark.anyio
async def test_a_bidi_branch_name_is_refused_by_the_server(
    start_mcp, local_github, tmp_path
) -> None:
    import subprocess

    workspace = tmp_path / "workspace"
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    running = start_mcp(workspace=workspace)
    start = len(local_github.journal())
    async with agent_session(running.url) as agent:
        await agent.refused("push_branch", "FORBIDDEN_OPERATION", branch="tusk/\u202etxt.exe")
    assert local_github.journal()[start:] == []
    assert records(running)[-1] == ("push_branch", "refused", "FORBIDDEN_OPERATION")
