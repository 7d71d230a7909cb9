"""A read's result reaches the model serialised once, with the server's secrets redacted.

Redaction works on the structure, so a secret is found however JSON would
escape it; the text is compact JSON of exactly the (redacted) result.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.mcp.mcp_harness import AGENT_TOKEN, READ_TOKEN, agent_session
from tusk.audit import chain as audit
from tusk.mcp.gate.results import redact_value, serialise

ODD = 'odd"secret\\with/escapes\u00e9'  # a secret JSON has to escape
SECRETS = (AGENT_TOKEN, READ_TOKEN, ODD)

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.lists(st.sampled_from(["a", " ", "\n", '"', *SECRETS]), max_size=6).map("".join),
)
results = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.lists(st.sampled_from(["k", *SECRETS]), max_size=2).map("".join), inner, max_size=4
        ),
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.lists(results, max_size=3), st.dictionaries(st.just("k"), results)))
def test_the_text_is_the_compact_json_of_the_redacted_result_with_no_secret_in_it(
    result: Any,
) -> None:
    text = serialise(result, SECRETS)
    assert json.loads(text) == json.loads(json.dumps(redact_value(result, SECRETS)))
    assert text == json.dumps(json.loads(text), separators=(",", ":"))
    for secret in SECRETS:
        assert secret not in text and json.dumps(secret)[1:-1] not in text


def test_a_result_without_secrets_is_serialised_as_it_is() -> None:
    result = {"issue": {"title": "Typo", "labels": ["bug"]}, "more": False}
    assert serialise(result, SECRETS) == json.dumps(result, separators=(",", ":"))


def test_a_text_result_is_redacted_as_text() -> None:
    assert serialise(f"diff --git a b\n+{READ_TOKEN}\n", SECRETS) == "diff --git a b\n+[redacted]\n"


@pytest.mark.anyio
async def test_a_token_pasted_into_an_issue_never_reaches_the_model(
    start_mcp: Any, local_github: Any
) -> None:
    running = start_mcp()
    alice = local_github.gateway("alice")
    alice.post(
        "/repos/alice/widgets/issues/1/comments",
        json={"body": f"my env: GITHUB_TOKEN={READ_TOKEN} and {AGENT_TOKEN}"},
    )
    async with agent_session(running.url) as agent:
        text = await agent.ok("get_issue", repo="alice/widgets", number=1)
    assert READ_TOKEN not in text and AGENT_TOKEN not in text
    assert "GITHUB_TOKEN=[redacted] and [redacted]" in json.dumps(json.loads(text))
    # The audit and the loop check know the call by the same digest.
    (record,) = [r for r in audit.read_records(running.audit_path) if r.tool == "get_issue"]
    assert record.args_digest == audit.digest(
        {"tool": "get_issue", "repo": "alice/widgets", "number": 1, "comments_page": 1}
    )
