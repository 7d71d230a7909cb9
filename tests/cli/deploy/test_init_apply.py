"""``tusk init --apply`` against the local GitHub: from nothing to a deployment that
``tusk doctor`` passes, a second run that writes nothing, ``--dry-run`` that writes
nothing, and no token anywhere but (sealed) in the secrets API."""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import socket
import subprocess
import sys
from typing import Any

import pytest

from tests.cli.deploy.deploy_world import (
    ARGS,
    BOT,
    BOT_LOGIN,
    CONTROL,
    KEY,
    ONE_BOT_TOKEN,
    ONE_BOT_TOKEN_SCOPES,
    OWNER,
    OWNER_LOGIN,
    OWNER_TOKEN_SCOPES,
    ROOT,
    STEPS,
    new_user_world,
    writes,
)
from tusk import REPOSITORY, __version__
from tusk.cli.deploy.command import OWNER_SCOPES
from tusk.cli.doctor import ROLES
from tusk.cli.main import main as tusk_main

ALL = {**OWNER, **BOT, **KEY}


@pytest.fixture
def env(local_github: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    local_github.load(new_user_world())
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("TUSK_GITHUB_API_URL", local_github.url)
    for name in ("TUSK_DISPATCH_TOKEN", "ANTHROPIC_AUTH_TOKEN", *ALL):
        monkeypatch.delenv(name, raising=False)
    for name, value in ALL.items():
        monkeypatch.setenv(name, value)
    return ALL


def apply(*extra: str) -> int:
    return tusk_main(["init", "--apply", *ARGS, *extra])


def test_apply_from_nothing_then_doctor_passes_and_a_second_run_writes_nothing(
    local_github: Any, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert apply() == 0
    first = capsys.readouterr().out
    assert f"Plan for {CONTROL}: 23 of 23 step(s) to do" in first
    assert "15 check(s): all good, 1 warning(s)" in first  # the poll has not run yet
    assert f"Left for you: mention @{BOT_LOGIN} on an issue as {OWNER_LOGIN}" in first
    control = local_github.state()["repos"][CONTROL]
    assert control["private"] is True
    assert control["collaborators"] == {BOT_LOGIN: "write"} and control["invitations"] == []
    # The values the workflows will receive, as the stand-in opened them with its key.
    assert control["secret_values"] == {name: env[name] for name in (*BOT, *KEY)}
    titles = sorted(i["title"] for i in control["issues"].values())
    assert [(i["author"]) for i in control["issues"].values()] == [BOT_LOGIN] * 3
    assert len(titles) == 3
    assert set(control["branches"]) == {"main"}

    seen = len(local_github.journal())
    assert apply() == 0
    second = capsys.readouterr().out
    assert f"Plan for {CONTROL}: 0 of 23 step(s) to do" in second
    assert writes(local_github.journal()[seen:]) == []  # the stand-in's record, not the text
    assert local_github.state()["repos"][CONTROL]["branches"] == control["branches"]

    # No token or key anywhere but the secrets API: not in what was printed, not in any
    # request body the local GitHub received (the secrets' values went sealed).
    bodies = json.dumps([e["body"] for e in local_github.journal()])
    for value in env.values():
        assert value not in first + second
        assert value not in bodies


def test_init_says_which_of_dir_and_apply_it_needs(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tusk_main(["init", *ARGS]) == 1
    assert "tusk init needs DIR, or --apply" in capsys.readouterr().err
    assert tusk_main(["init", str(tmp_path), "--apply", *ARGS]) == 1
    assert "--apply writes to GitHub, not to a folder" in capsys.readouterr().err
    assert tusk_main(["init", str(tmp_path), "--dry-run", *ARGS]) == 1
    assert "only with --apply: --dry-run" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_dry_run_prints_the_plan_and_writes_nothing(
    local_github: Any, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert apply("--dry-run") == 0
    out = capsys.readouterr().out
    assert f"→ repository create {CONTROL}: a private repository" in out
    assert "→ secret store ANTHROPIC_API_KEY: sealed with the repository's key" in out
    assert out.rstrip().endswith("--dry-run: nothing was written.")
    assert writes(local_github.journal()) == []
    assert CONTROL not in local_github.state()["repos"]


def test_a_secret_neither_stored_nor_exported_stops_before_anything_is_written(
    local_github: Any,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert apply() == 1
    out = capsys.readouterr().out
    assert "✗ secret ANTHROPIC_API_KEY: not stored: export ANTHROPIC_API_KEY first" in out
    assert writes(local_github.journal()) == []


def test_an_owner_token_without_the_workflow_scope_is_refused_up_front(
    local_github: Any,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    local_github.load(new_user_world(ghp_owner0repo={"user": OWNER_LOGIN, "scopes": ["repo"]}))
    monkeypatch.setenv("TUSK_OWNER_TOKEN", "ghp_owner0repo")
    assert apply() == 1
    err = capsys.readouterr().err
    assert f"TUSK_OWNER_TOKEN (of {OWNER_LOGIN}) lacks the scope(s) workflow" in err
    assert "ghp_owner0repo" not in err
    assert writes(local_github.journal()) == []


def test_readme_has_four_steps_and_names_the_scopes_and_release_the_code_needs() -> None:
    assert re.findall(r"^(\d)\. \*\*", STEPS.text, re.M) == ["1", "2", "3", "4"]
    # Step 1: the owner's token as --apply checks it, the bot's with every role's scopes.
    assert list(OWNER_SCOPES) == OWNER_TOKEN_SCOPES
    bot_roles = [role for role in ROLES.values() if role.secret_of == "bot"]
    assert set(ONE_BOT_TOKEN_SCOPES) == {scope for role in bot_roles for scope in role.scopes}
    assert "`" + "`, `".join(ONE_BOT_TOKEN_SCOPES) + "`" in " ".join(STEPS.text.split())
    assert "`" + "`, `".join(OWNER_SCOPES) + "`" in " ".join(STEPS.text.split())
    # Step 2: the release this is (test_release holds version, tag and CHANGELOG together).
    assert STEPS.install == f"pip install git+https://github.com/{REPOSITORY}@v{__version__}"
    # Step 4: a mention of the bot the command deploys (the act test posts it).
    assert STEPS.mention.startswith(f"@{BOT_LOGIN} ")


def test_readmes_step_3_as_written_deploys_with_one_bot_token(
    local_github: Any,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only what step 3 exports, and its command line word for word."""
    values = {**OWNER, "TUSK_BOT_TOKEN": ONE_BOT_TOKEN, **KEY}
    for name in env:
        monkeypatch.delenv(name)
    assert set(STEPS.exports) == set(values)
    for name in STEPS.exports:
        monkeypatch.setenv(name, values[name])
    assert tusk_main(STEPS.apply) == 0
    out = capsys.readouterr().out
    assert "note: TUSK_AGENT_TOKEN not exported: the bot token's value is stored for it" in out
    assert "15 check(s): all good" in out and "✗" not in out
    stored = local_github.state()["repos"][CONTROL]["secret_values"]
    assert [stored[n] for n in BOT] == [ONE_BOT_TOKEN] * 3


def test_a_bot_token_that_cannot_serve_a_role_is_not_stored(
    local_github: Any,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The three-token route with the agent's token forgotten: the poller's token would
    be stored for the agent, and it lacks the agent's scopes."""
    monkeypatch.delenv("TUSK_AGENT_TOKEN")
    assert apply() == 1
    err = capsys.readouterr().err
    assert "TUSK_AGENT_TOKEN: belongs to my-tusk-bot, scopes notifications, repo; lacks" in err
    assert "Nothing was written." in err
    assert writes(local_github.journal()) == []


def test_a_run_again_with_fewer_tokens_leaves_the_stored_ones_alone(
    local_github: Any,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert apply() == 0
    monkeypatch.delenv("TUSK_AGENT_TOKEN")
    monkeypatch.delenv("TUSK_READ_TOKEN")
    capsys.readouterr()
    seen = len(local_github.journal())
    assert apply() == 0
    out = capsys.readouterr().out
    assert "0 of 23 step(s) to do" in out and "note:" not in out
    # The bot token is not taken for the others' (they may hold other values): named only.
    assert f"✓ TUSK_AGENT_TOKEN: not exported here; stored in {CONTROL}" in out
    assert writes(local_github.journal()[seen:]) == []
    stored = local_github.state()["repos"][CONTROL]["secret_values"]
    assert stored["TUSK_AGENT_TOKEN"] == BOT["TUSK_AGENT_TOKEN"]


def test_a_commit_whose_answer_was_lost_is_looked_for_not_sent_twice(
    local_github: Any, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = rf"^/repos/{CONTROL}/contents/tusk\.yml$"
    local_github.add_fault("PUT", path, status=502, lands=True)
    local_github.add_fault("POST", r"^/user/repos$", status=502, lands=True)
    local_github.add_fault("POST", rf"^/repos/{CONTROL}/labels$", status=502, lands=True)
    local_github.add_fault("PATCH", r"^/user/repository_invitations/\d+$", status=502, lands=True)
    assert apply() == 0
    capsys.readouterr()
    sent = writes(local_github.journal())
    assert sent.count(f"PUT /repos/{CONTROL}/contents/tusk.yml") == 1
    assert sent.count("POST /user/repos") == 1
    labels = [
        e["body"]["name"]
        for e in local_github.journal()
        if e["path"] == f"/repos/{CONTROL}/labels" and e.get("applied_status", e["status"]) == 201
    ]
    assert sorted(labels) == sorted(set(labels)) and len(labels) == 5  # each made once
    assert len([w for w in sent if w.startswith("PATCH /user/repository_invitations/")]) == 1
    assert local_github.state()["repos"][CONTROL]["collaborators"] == {BOT_LOGIN: "write"}


def test_an_organisations_control_repository_is_created_in_it(
    local_github: Any,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    world = new_user_world()
    world["users"].append({"login": "acme", "type": "Organization", "members": [OWNER_LOGIN]})
    local_github.load(world)
    args = [*ARGS[: ARGS.index("--control-repo") + 1], "acme/tusk-control"]
    args += ARGS[ARGS.index("--control-repo") + 2 :]
    assert tusk_main(["init", "--apply", *args]) == 0
    assert "15 check(s): all good" in capsys.readouterr().out
    assert "POST /orgs/acme/repos" in writes(local_github.journal())


def edit(local_github: Any, path: str, change: Any) -> str:
    """The owner edits ``path`` on GitHub (``change`` maps the old text to the new)."""
    owner = local_github.gateway("ghp_owner0wner")
    current = owner.get(f"/repos/{CONTROL}/contents/{path}")
    text = change(base64.b64decode(current["content"]).decode())
    body = {"message": "edit", "content": base64.b64encode(text.encode()).decode()}
    owner.put(f"/repos/{CONTROL}/contents/{path}", json={**body, "sha": current["sha"]})
    return str(text)


def file_on_github(local_github: Any, path: str) -> str:
    body = local_github.gateway("ghp_owner0wner").get(f"/repos/{CONTROL}/contents/{path}")
    return base64.b64decode(body["content"]).decode()


def test_a_second_apply_keeps_the_owners_tusk_yml_and_repairs_a_caller(
    local_github: Any, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert apply() == 0
    policy = "limits:\n  daily_budget_usd: 50\nagent:\n  network: open\n"
    mine = edit(local_github, "tusk.yml", lambda text: text + policy)
    edit(local_github, ".github/workflows/poll.yml", lambda text: text + "# drifted\n")
    capsys.readouterr()
    seen = len(local_github.journal())
    assert apply() == 0
    out = capsys.readouterr().out
    assert "✓ file tusk.yml: yours, kept as it is (your policy; --replace-config" in out
    assert "→ file update .github/workflows/poll.yml: differs from what tusk init writes" in out
    assert writes(local_github.journal()[seen:]) == [
        f"PUT /repos/{CONTROL}/contents/.github/workflows/poll.yml"
    ]
    assert file_on_github(local_github, "tusk.yml") == mine
    # A login asked for on the command line that the kept file lacks is named.
    assert apply("--allowed-user", "tusk-platform", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "note: --allowed-user tusk-platform is not in your tusk.yml's allowed_users" in out

    # Asked for, tusk init's tusk.yml replaces it, and what is lost is shown first.
    assert apply("--replace-config") == 0
    out = capsys.readouterr().out
    assert "→ file replace tusk.yml: with tusk init's (--replace-config)" in out
    assert "--replace-config changes your tusk.yml:\n" in out
    assert "  -  daily_budget_usd: 50\n" in out
    assert "daily_budget_usd" not in file_on_github(local_github, "tusk.yml")


def test_a_mistyped_allowed_user_stops_the_plan_before_anything_is_written(
    local_github: Any, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert apply("--allowed-user", "yuo") == 1
    out = capsys.readouterr().out
    assert "✓ allowed user you: a GitHub user" in out
    assert "✗ allowed user yuo: GitHub has no such user: check the spelling" in out
    assert "Nothing was written: do what the ✗ lines say" in out
    assert writes(local_github.journal()) == []


@pytest.mark.parametrize(
    ("control", "said"),
    [
        ("acme/tusk-control", "you is not a member of the organisation acme: export the token"),
        ("someone/tusk-control", "it would be someone's and TUSK_OWNER_TOKEN belongs to you"),
        ("nobody-here/tusk-control", "GitHub has no user or organisation nobody-here"),
    ],
    ids=["org_not_a_member", "another_users_account", "no_such_account"],
)
def test_a_repository_the_owner_cannot_create_stops_the_plan_with_the_real_fix(
    local_github: Any,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    control: str,
    said: str,
) -> None:
    world = new_user_world()
    world["users"] += [{"login": "acme", "type": "Organization"}, {"login": "someone"}]
    local_github.load(world)
    args = [*ARGS[: ARGS.index("--control-repo") + 1], control]
    args += ARGS[ARGS.index("--control-repo") + 2 :]
    assert tusk_main(["init", "--apply", *args]) == 1
    assert f"✗ your rights {control}: {said}" in capsys.readouterr().out
    assert writes(local_github.journal()) == []


def test_a_reader_that_goes_away_does_not_stop_the_apply(
    local_github: Any, env: dict[str, str]
) -> None:
    """`tusk init --apply ... | head -1`: the rest is written although nobody reads it."""
    environ = {**os.environ, **ALL, "TUSK_GITHUB_API_URL": local_github.url}
    environ.pop("GITHUB_ACTIONS", None)
    command = [sys.executable, "-m", "tusk.cli.main", "init", "--apply", *ARGS]
    process = subprocess.Popen(command, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    assert process.stdout.readline().startswith(b"Plan for ")
    process.stdout.close()  # the reader is gone
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err.decode()
    assert b"BrokenPipe" not in err
    control = local_github.state()["repos"][CONTROL]
    assert len(control["issues"]) == 3 and set(control["secret_values"]) == {*BOT, *KEY}


def test_doctor_and_usage_read_the_deployed_tusk_yml_right_after_an_apply(
    local_github: Any,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """README's next step, where the person is: no tusk.yml on this machine."""
    assert apply() == 0
    policy = "limits:\n  daily_budget_usd: 50\n"
    edit(local_github, "tusk.yml", lambda text: text + policy)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUSK_CONFIG", raising=False)
    capsys.readouterr()
    assert tusk_main(["doctor"]) == 1  # no local file: the hint names the way out
    assert "tusk doctor and tusk usage read the deployed one with --control-repo" in (
        capsys.readouterr().err
    )
    assert tusk_main(["doctor", "--control-repo", CONTROL]) == 0
    out = capsys.readouterr().out
    assert "15 check(s): all good" in out and "✗" not in out
    assert tusk_main(["usage", "--control-repo", CONTROL, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["runs"] == 0
    assert {"limit": "daily_budget_usd", "allowed": "$50.00"}.items() <= report["window"][0].items()
    assert list(tmp_path.iterdir()) == []
    assert tusk_main(["doctor", "--control-repo", "you/nothing-here"]) == 1
    assert "you/nothing-here:tusk.yml cannot be read" in capsys.readouterr().err


def test_the_plan_says_what_the_schedule_costs_and_how_to_change_it(
    local_github: Any, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert apply("--dry-run") == 0
    out = capsys.readouterr().out
    assert "poll.yml runs `2-57/5 * * * *`: 288 polls a day, 8,640 in a 30-day month" in out
    assert "about 8,640 Actions minutes a month (4.3 × GitHub Free's 2,000)" in out
    assert "to change it: edit the cron line of .github/workflows/poll.yml" in out
    assert apply() == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(
        "(4.3 × GitHub Free's 2,000), agent runs on top; to change it: "
        "edit the cron line of .github/workflows/poll.yml (README's cost "
        "table: every 15 min is 2,880 a month, hourly 720), or poll from "
        "a cron host, or --public for a public control repository."
    )
    assert f"tusk doctor --control-repo {CONTROL}" in out
    local_github.load(new_user_world())
    assert apply("--public", "--dry-run") == 0
    assert "in a public repository jobs on GitHub's standard runners are free" in (
        capsys.readouterr().out
    )


def test_a_placeholder_copied_from_readme_is_refused_before_anything_is_sent(
    local_github: Any,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    readme_values = dict(word.split("=", 1) for word in STEPS.export_line.split()[1:])
    monkeypatch.setenv("ANTHROPIC_API_KEY", readme_values["ANTHROPIC_API_KEY"])
    assert apply() == 1
    err = capsys.readouterr().err
    assert "ANTHROPIC_API_KEY: an example value, not a secret" in err
    assert local_github.journal() == []  # not even a read


def test_a_role_token_holding_more_than_its_role_needs_is_named_with_the_fix(
    local_github: Any,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wide = {"user": BOT_LOGIN, "scopes": ["repo", "delete_repo", "workflow"]}
    local_github.load(new_user_world(ghp_bot0wide=wide))
    monkeypatch.setenv("TUSK_READ_TOKEN", "ghp_bot0wide")
    assert apply("--dry-run") == 0
    out = capsys.readouterr().out
    assert (
        f"note: ! TUSK_READ_TOKEN: belongs to {BOT_LOGIN}, scopes delete_repo, repo, workflow: "
        "more than it needs for the agent's reads (delete_repo, workflow) → the least-privilege"
    ) in out


def test_readmes_rehearsal_runs_apply_and_doctor_against_the_shipped_scenario(
    tmp_path: Any,
) -> None:
    """README's "Rehearse it offline", line by line, on a port of its own."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("### Rehearse it offline", 1)[1].split("```bash\n", 1)[1]
    lines = block.split("```", 1)[0].strip().splitlines()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    lines = [line.replace("8700", port) for line in lines]
    serve = shlex.split(lines[0].removesuffix("&"))
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("TUSK_", "ANTHROPIC_"))}
    for line in lines[1:]:
        if line.startswith("export "):
            environ |= dict(word.split("=", 1) for word in shlex.split(line)[1:])
    tusk = [sys.executable, "-m", "tusk.cli.main"]
    server = subprocess.Popen(
        [*tusk, *serve[1:]], env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline().decode().strip() == f"http://127.0.0.1:{port}"
        runs = [shlex.split(line) for line in lines if line.startswith("tusk ")][1:]
        assert [run[:2] for run in runs] == [["tusk", "init"], ["tusk", "doctor"]]
        done = [
            subprocess.run(
                [*tusk, *run[1:]], env=environ, cwd=tmp_path, capture_output=True, text=True
            )
            for run in runs
        ]
    finally:
        server.terminate()
        server.wait(timeout=30)
    applied, doctor = done
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "Plan for you/tusk-control: 23 of 23 step(s) to do" in applied.stdout
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "✗" not in doctor.stdout and "check(s): all good" in doctor.stdout
