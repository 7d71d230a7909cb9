"""Settings: ``tusk.yml`` for policy and limits, the environment for secrets.

Read once, at each entry point, and passed down. Invalid config raises ``ConfigError``
listing every problem with its key path. Secrets are ``SecretStr``, masked in Actions
logs the moment they are read."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tusk import actions_edge
from tusk.contracts.config_text import MAX_CONFIG_BYTES, YamlProblem, load_yaml, plain_problems
from tusk.contracts.models import ALL_WRITE_OPERATIONS, Login, PermissionConfig, RepoName
from tusk.contracts.old_names import read_old_names
from tusk.contracts.pricing import Price
from tusk.errors import ConfigError

DEFAULT_CONFIG_NAME = "tusk.yml"
DEFAULT_API_URL = "https://api.github.com"
LINUX_USER_PREFIX = re.compile(r"[a-z_][a-z0-9_-]{0,19}")
# The names Claude Code's --tools accepts (2.1.328, pinned in package.json) in the agent's
# environment (no nonessential traffic), as its init event lists them. A name it does not
# know is dropped without a word, so a typo would silently take a tool away; a test runs
# the pinned CLI to check this list.
CLAUDE_CODE_TOOLS = frozenset(
    {
        "Bash",
        "CronCreate",
        "CronDelete",
        "CronList",
        "Edit",
        "EnterWorktree",
        "ExitWorktree",
        "Glob",
        "Grep",
        "ListAgents",
        "Monitor",
        "NotebookEdit",
        "Read",
        "ReportFindings",
        "ScheduleWakeup",
        "SendMessage",
        "Skill",
        "Task",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskStop",
        "TaskUpdate",
        "ToolSearch",
        "WebFetch",
        "WebSearch",
        "Workflow",
        "Write",
    }
)


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limits(Section):
    """Every limit docs/requirements.md names, with its default."""

    comments_per_thread: int = Field(2, ge=0, description="agent comments per issue or PR (M4)")
    issues_per_repo: int = Field(1, ge=0, description="issues the agent may open per repository")
    prs_per_repo: int = Field(
        1, ge=0, description="pull requests the agent may open per repository"
    )
    memory_writes_per_run: int = Field(3, ge=0, description="memory entries per run (M12)")
    memory_entry_chars: int = Field(500, ge=1, description="characters per memory entry")
    memory_total_chars: int = Field(8000, ge=1, description="memory shown to the agent, in all")
    history_entries: int = Field(10, ge=0, description="latest history entries shown (A3)")
    history_entry_chars: int = Field(300, ge=1, description="characters per history line (M11)")
    context_chars: int = Field(60000, ge=1000, description="budget of the markdown context (A3)")
    linked_issue_chars: int = Field(15000, ge=0, description="budget for linked issues")
    shard_bytes: int = Field(
        49152, ge=1024, le=60000, description="largest shard data string, in bytes (P7)"
    )
    loop_threshold: int = Field(6, ge=2, description="identical call+result repeats = loop (A6)")
    read_window_seconds: float = Field(60.0, gt=0, description="read throttle window (M6)")
    reads_per_window: int = Field(120, ge=1, description="reads allowed inside one window")
    mentions_per_post: int = Field(
        5, ge=0, description="@mentions one agent post may carry, over all its edits"
    )
    edits_per_comment: int = Field(
        3, ge=0, description="update_comment calls one run may make on each of its comments"
    )
    blocklist_check_seconds: float = Field(
        30.0,
        ge=0,
        le=30,
        description="the MCP server checks the blocklist again before a write once its last "
        "check is this old (at most 30 s)",
    )
    writes_per_run: int = Field(
        10,
        ge=0,
        description="writes one run may make across all repositories (history, memory apart)",
    )
    max_turns: int = Field(60, ge=1, description="Claude Code --max-turns")
    run_minutes: float = Field(30.0, gt=0, description="wall-clock budget of one agent run")
    stall_minutes: float = Field(10.0, gt=0, description="silent, no tool call, this long: stalled")
    state_issue_rollover: int = Field(
        2000, ge=10, le=2400, description="comments before a state issue rolls over"
    )
    resume_chars: int = Field(
        60_000,
        ge=0,
        description="characters of earlier runs' turns a later run on the same thread starts "
        "with (about 15,000 tokens: the model's context keeps ample room to work); older runs "
        "are left out whole, never cut mid-turn; 0: every run starts fresh",
    )
    resume_runs: int = Field(
        5, ge=0, le=20, description="earlier runs on the thread a later run resumes from, at most"
    )
    claim_lease_minutes: float = Field(
        30.0,
        gt=0,
        description="a log issue whose run reported no progress this long after it was "
        "claimed may be taken over by a later delivery of the job",
    )
    # Limits across runs over a rolling window (tusk.contracts.limits); null turns one off.
    daily_budget_usd: float | None = Field(
        20.0,
        ge=0,
        description="model spend of all runs in the rolling window (24 h by default), in USD; "
        "null: no cap",
    )
    runs_per_requester: int | None = Field(
        10, ge=0, description="runs one login may start in the rolling window; null: no limit"
    )
    requester_budget_usd: float | None = Field(
        10.0,
        ge=0,
        description="model spend of the runs one login asks for in the rolling window, in USD; "
        "a run in flight holds its whole budget, and a new run's budget is lowered to what "
        "the login has left; null: no cap",
    )
    runs_per_repository: int | None = Field(
        30, ge=0, description="runs for one repository in the rolling window; null: no limit"
    )
    usage_window_hours: float = Field(
        24.0, gt=0, le=168, description="the rolling window of the limits across runs, in hours"
    )
    over_limit: Literal["wait", "drop"] = Field(
        "wait",
        description="a mention over a limit across runs is answered on its thread and then "
        "waits for a later poll (wait) or is dropped (drop)",
    )

    @property
    def counts_runs(self) -> bool:
        """Whether any limit across runs is on."""
        return any(
            limit is not None
            for limit in (
                self.daily_budget_usd,
                self.runs_per_requester,
                self.requester_budget_usd,
                self.runs_per_repository,
            )
        )


class Labels(Section):
    workflow: str = "workflow"
    bug: str = "bug"
    history: str = "tusk-history"
    memory: str = "tusk-memory"
    blocklist: str = "tusk-blocklist"


class Feedback(Section):
    """What the requester sees of a run on the thread that started it."""

    thread_status: bool = Field(
        True,
        description="keep one status comment on the triggering issue or pull request "
        "(queued, working, the outcome with links); off: only the reactions",
    )


class GoAway(Section):
    phrase: str = Field("go away", min_length=2, description="`@bot <phrase>` blocks the bot")
    reaction: str | None = Field("+1", description="reaction on the request; null for none")
    delete_pause_seconds: float = Field(1.0, ge=0, description="pause between deletes")

    @field_validator("reaction")
    @classmethod
    def _known_reaction(cls, value: str | None) -> str | None:
        allowed = {"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}
        if value is not None and value not in allowed:
            raise ValueError(f"must be one of {sorted(allowed)} or null")
        return value


# Hosts a fenced agent may reach through its egress proxy by default: the common
# package registries, so it can install dependencies and run a repository's tests.
DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = (
    "pypi.org",
    "files.pythonhosted.org",
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "repo.yarnpkg.com",
    "proxy.golang.org",
    "sum.golang.org",
    "index.crates.io",
    "static.crates.io",
    "crates.io",
    "rubygems.org",
    "index.rubygems.org",
    "repo.maven.apache.org",
    "repo1.maven.org",
    "plugins.gradle.org",
    "services.gradle.org",
    "api.nuget.org",
)
HOST_PATTERN = re.compile(
    r"^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$"
)
# Built-in tools that reach the web, and the host each needs besides the pages it
# fetches: WebFetch asks api.anthropic.com/api/web/domain_info before each fetch
# (Claude Code's own code), WebSearch's results are then fetched the same way.
WEB_TOOLS = {"WebFetch": "api.anthropic.com", "WebSearch": "api.anthropic.com"}


class Network(Section):
    """The agent's network fence: what its egress proxy lets through."""

    allow: tuple[str, ...] = Field(
        DEFAULT_ALLOWED_HOSTS,
        description="hostnames the agent may reach (HTTPS and HTTP, through the egress "
        "proxy): pypi.org exactly, *.example.com for any subdomain. Default: the common "
        "package registries",
    )

    @field_validator("allow")
    @classmethod
    def _hostnames(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [host for host in value if not HOST_PATTERN.match(host.lower())]
        if bad:
            raise ValueError(
                f"not a hostname: {', '.join(repr(b) for b in bad)}; write names such as "
                "pypi.org or *.pythonhosted.org (IP addresses and localhost are refused: "
                "the fence keeps loopback closed)"
            )
        return tuple(host.lower() for host in value)


class Agent(Section):
    linux_user: str = Field(
        "tusk-agent",
        description="name prefix of the unprivileged users Claude Code runs as: each run "
        "creates its own, <prefix>-<run id>-<attempt>-<random>, and deletes it at the end",
    )
    branch_prefix: str = Field("tusk/", min_length=1, description="branches the agent may push")
    allow_workflow_changes: bool = Field(False, description="may pushes touch .github/workflows/")
    builtin_tools: tuple[str, ...] = Field(
        ("Bash", "Read", "Edit", "Write", "Glob", "Grep"),
        description="Claude Code built-in tools the agent may use, by Claude Code's own names "
        "(Bash, Read, Edit, Write, Glob, Grep, WebFetch, ...); an unknown name is refused",
    )
    model: str | None = Field(None, description="--model for Claude Code; null for its default")
    fork_wait_seconds: float = Field(
        300.0,
        ge=1,
        le=3600,
        description="how long push_branch waits for a new fork (GitHub forks asynchronously; "
        "a large repository can take up to 5 minutes)",
    )
    max_budget_usd: float = Field(
        5.0,
        gt=0,
        description="model spend (USD) past which the run is stopped (metered by its model proxy)",
    )
    prices: dict[str, Price] = Field(
        default_factory=dict,
        description="USD per million tokens by model id substring; adds to or replaces "
        "Tusk's price table (tusk/pricing.py)",
    )
    read_public: bool = Field(
        False,
        description="read tools may also read any public repository, not only the run's own",
    )
    write_repos: tuple[RepoName, ...] = Field(
        (),
        description="repositories (owner/name) the agent may write to besides the run's own "
        "(the trigger repository, the bot's fork of it, and those the task names or links); "
        "a permission marker can narrow this, never widen it",
    )
    network: Literal["open"] | Network = Field(
        default_factory=Network,
        description="`open` turns the agent's network fence off; otherwise `allow` lists "
        "the hosts its egress proxy lets through",
    )
    network_required: bool = Field(
        True,
        description="false: where the fence cannot be put up (no root, no box), run "
        "with the network open and say so, instead of stopping",
    )
    approval: Literal["off", "required"] | tuple[RepoName, ...] = Field(
        "off",
        description="`required`: every GitHub write a run makes is staged, previewed on the "
        "trigger's thread and made only once a person approves it (`@bot apply <digest>`); a "
        "list of owner/name: the same in those repositories only. A mention's "
        "`[permissions: approve]` asks for it on its own run",
    )
    approval_days: float = Field(
        7.0, gt=0, le=90, description="days a staged set waits for approval before it expires"
    )
    approvers: tuple[Login, ...] | None = Field(
        None,
        description="who may approve a staged set (`@bot apply`): these logins, each also with "
        "write access to the repository; null: the allowed_users",
    )

    @field_validator("linux_user")
    @classmethod
    def _unprivileged_user(cls, value: str) -> str:
        if value == "root":
            raise ValueError(
                "must not be root: Claude Code must run as an unprivileged user that Tusk "
                "creates for each run; keep the default tusk-agent"
            )
        if not LINUX_USER_PREFIX.fullmatch(value):
            raise ValueError(
                "must be the start of a Linux user name: lowercase letters, digits, '_' and "
                "'-', beginning with a letter or '_', at most 20 characters"
            )
        return value

    @field_validator("builtin_tools")
    @classmethod
    def _known_tools(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [name for name in value if name not in CLAUDE_CODE_TOOLS]
        if unknown:
            named = []
            for name in unknown:
                close = difflib.get_close_matches(name, sorted(CLAUDE_CODE_TOOLS), n=1)
                named.append(repr(name) + (f" (did you mean {close[0]!r}?)" if close else ""))
            raise ValueError(
                f"{', '.join(named)}: not a Claude Code tool, which Claude Code would drop "
                f"without a word; use its names: {', '.join(sorted(CLAUDE_CODE_TOOLS))}"
            )
        return value

    @model_validator(mode="after")
    def _web_tools_need_their_hosts(self) -> Agent:
        if self.network == "open":
            return self
        for tool, host in WEB_TOOLS.items():
            if tool in self.builtin_tools and host not in self.network.allow:
                raise ValueError(
                    f"builtin_tools has {tool}, but the agent's network is fenced and "
                    f"{host} is not in agent.network.allow; set agent.network: open, or "
                    f"add {host} and the hosts it may fetch to agent.network.allow"
                )
        return self


class Settings(Section):
    """The whole of ``tusk.yml``."""

    bot: Login = Field(description="the bot account's login", examples=["my-bot"])
    control_repo: RepoName = Field(
        description="owner/name holding log, history, memory, blocklist",
        examples=["my-org/tusk-control"],
    )
    allowed_users: tuple[Login, ...] = Field(
        description="logins whose mentions start work (never the bot itself)",
        examples=[["alice", "bob"]],
    )
    allow_bot_accounts: bool = Field(False, description="accept mentions by accounts of type Bot")
    record_only: bool = Field(
        False, description="record agent writes in the log issue, don't perform them"
    )
    staged: bool = Field(
        False,
        description="the old name of record_only, still read for this release (with a warning)",
        deprecated="renamed record_only",
    )
    discussions_write: bool = Field(False, description="let the agent comment on discussions")
    attestation: Literal["auto", "github", "sigstore", "off"] = Field(
        "auto", description="sign each audit; sigstore (opt-in): public log, even if private"
    )
    limits: Limits = Limits()
    labels: Labels = Labels()
    go_away: GoAway = GoAway()
    feedback: Feedback = Feedback()
    agent: Agent = Agent()

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        return read_old_names(data)

    @field_validator("allowed_users")
    @classmethod
    def _not_empty(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        if not value:
            raise ValueError("list at least one login; nobody could trigger the bot otherwise")
        bot = str(info.data.get("bot") or "")
        if bot and bot.lower() in {login.lower() for login in value}:
            raise ValueError(
                f"lists the bot itself ({bot}): the bot must never start work for itself; remove it"
            )
        return value

    def approval_required(self, repo: str) -> bool:
        """Whether ``agent.approval`` holds every write of a run on ``repo`` for approval."""
        approval = self.agent.approval
        if approval in ("off", "required"):
            return approval == "required"
        return repo.lower() in {name.lower() for name in approval}

    def default_permissions(self) -> PermissionConfig:
        """The permission config a mention without a marker gets."""
        operations = (
            ALL_WRITE_OPERATIONS
            if self.limits.memory_writes_per_run
            else tuple(op for op in ALL_WRITE_OPERATIONS if op != "memory")
        )
        return PermissionConfig(
            operations=operations,
            comments_per_thread=self.limits.comments_per_thread,
            issues_per_repo=self.limits.issues_per_repo,
            prs_per_repo=self.limits.prs_per_repo,
            memory_writes=self.limits.memory_writes_per_run,
            budget_usd=self.agent.max_budget_usd,
            max_turns=self.limits.max_turns,
            run_minutes=self.limits.run_minutes,
        )


class Secrets(BaseModel):
    """Secrets and endpoints, from the environment only. Any may be absent; each
    entry point asks for the ones it needs with ``require``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bot_token: SecretStr | None = None
    dispatch_token: SecretStr | None = None
    agent_token: SecretStr | None = None
    read_token: SecretStr | None = None
    anthropic_api_key: SecretStr | None = None
    anthropic_auth_token: SecretStr | None = None  # a gateway's bearer token, instead of a key
    github_api_url: str = DEFAULT_API_URL

    ENV_NAMES: ClassVar[dict[str, str]] = {
        "bot_token": "TUSK_BOT_TOKEN",
        "dispatch_token": "TUSK_DISPATCH_TOKEN",
        "agent_token": "TUSK_AGENT_TOKEN",
        "read_token": "TUSK_READ_TOKEN",
        "anthropic_api_key": "ANTHROPIC_API_KEY",
        "anthropic_auth_token": "ANTHROPIC_AUTH_TOKEN",
    }

    def require(self, *names: str) -> dict[str, SecretStr]:
        """Return the named secrets, or raise one error naming every missing variable."""
        found: dict[str, SecretStr] = {}
        missing = []
        for name in names:
            value = getattr(self, name)
            if value is None or not value.get_secret_value():
                missing.append(self.ENV_NAMES[name])
            else:
                found[name] = value
        if missing:
            raise ConfigError(
                "environment",
                [
                    f"{env}: not set; export it (in Actions: map it from a secret)"
                    for env in missing
                ],
            )
        return found


OPEN_BY_SETTING = "open (agent.network: open in tusk.yml)"


def fenced_status(hosts: int) -> str:
    return f"fenced ({hosts} hosts allowed)"


def network_summary(settings: Settings) -> str:
    """How the agent's network is to be held, in the words the log issue and summary
    use. Before a run this is the setting; the run's summary says what it got (the
    fence, or open and why)."""
    agent = settings.agent
    if agent.network == "open":
        return OPEN_BY_SETTING
    status = fenced_status(len(agent.network.allow))
    if agent.network_required:
        return status
    return f"{status}, or open where no fence can be put up (agent.network_required: false)"


def load_secrets(environ: Mapping[str, str] | None = None, *, mask: bool = True) -> Secrets:
    """Read secrets from the environment and mask each one in Actions logs."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for field, env_name in Secrets.ENV_NAMES.items():
        raw = env.get(env_name)
        if raw:
            if mask and actions_edge.in_actions():
                actions_edge.mask(raw)
            values[field] = SecretStr(raw)
    api_url = env.get("TUSK_GITHUB_API_URL") or DEFAULT_API_URL
    values["github_api_url"] = api_url.rstrip("/")
    return Secrets(**values)


def resolve_config_path(explicit: str | None, environ: Mapping[str, str] | None = None) -> Path:
    """``--config``, else ``TUSK_CONFIG``, else ``./tusk.yml``."""
    env = os.environ if environ is None else environ
    return Path(explicit or env.get("TUSK_CONFIG") or DEFAULT_CONFIG_NAME)


def parse_settings(data: Any, *, source: str) -> Settings:
    """Validate already-parsed YAML, listing every problem with its key path."""
    if not isinstance(data, dict):
        raise ConfigError(
            source, ["(top level): must be a block of keys; for example `bot: my-bot`"]
        )
    try:
        return Settings.model_validate(data)
    except ValidationError as error:
        raise ConfigError(source, describe_validation_errors(error)) from None


def describe_validation_errors(error: ValidationError) -> list[str]:
    """Every problem in plain words, with its key path and an example (``config_text``)."""
    return plain_problems(error, Settings)


def load_settings(path: Path) -> Settings:
    """Load and validate a ``tusk.yml``: at most ``MAX_CONFIG_BYTES``, strict YAML (no
    anchors or aliases, no key given twice)."""
    if not path.is_file():
        raise ConfigError(
            str(path),
            [
                "file not found; pass --config, set TUSK_CONFIG, or create ./tusk.yml "
                "(tusk.example.yml documents every key); tusk doctor and tusk usage read "
                "the deployed one with --control-repo OWNER/REPO"
            ],
        )
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise ConfigError(str(path), [f"(file) cannot be read: {error}"]) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            str(path),
            [
                f"(file) is larger than {MAX_CONFIG_BYTES // 1024} KB, which no tusk.yml needs: "
                "check that this is the right file"
            ],
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(str(path), [f"(file) is not UTF-8 text: {error}"]) from None
    return settings_from_text(text, source=str(path))


def settings_from_text(text: str, *, source: str) -> Settings:
    """A ``tusk.yml``'s text validated as ``load_settings`` validates the file (the text
    may come from the control repository through the API)."""
    if len(text.encode("utf-8")) > MAX_CONFIG_BYTES:
        raise ConfigError(source, [f"(file) is larger than {MAX_CONFIG_BYTES // 1024} KB"])
    try:
        data = load_yaml(text)
    except YamlProblem as problem:
        raise ConfigError(source, [str(problem)]) from None
    return parse_settings(data, source=source)


def settings_schema() -> dict[str, Any]:
    return Settings.model_json_schema()
