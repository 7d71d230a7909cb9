"""What a run pays before Claude Code says a word: the agent workflow's set-up under act.

Plays the demo's mention (local GitHub, scripted model, the real poller, actions
and Claude Code) through the agent workflow under act in host mode, as a fresh
GitHub runner would: no ``tusk`` on PATH, no Claude Code in the Tusk checkout, a
new runner folder (HOME, act's cache, the workspace) for every run. Three runs:

- ``cold``: an empty Actions cache and empty download caches (npm fetches
  Claude Code from its registry; pip fetches uv and uv Tusk's dependencies from
  PyPI, or pip does all of it where uv cannot be had);
- ``cold, downloads cached``: an empty Actions cache, npm's download cache kept
  from the first run (closer to a registry next door);
- ``warm``: the Actions cache the second run left (the venv, Claude Code).

then ``tusk demo`` as a person runs it (this checkout's own ``tusk`` and Claude
Code: nothing to install). For each it prints the seconds from the start of
the workflow run (act started) to Claude Code's first request to the model, the
whole run, the bytes installed (what the install steps wrote, as the cache
saved it) and restored from the cache, and each step's share of the time before
the first request. Figures only; nothing is asserted.

    python bench/bench_setup.py [--workdir DIR] [--only cold|warm|demo]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tusk.cli import demo
from tusk.sandbox.act_runner import ControlRepo
from tusk.sandbox.github_server import start_server
from tusk.sandbox.model_server import ModelServer
from tusk.sandbox.scenario import read_scenario_file

# act: `[agent.yml/agent]   ✅  Success - Main Install Tusk [12.3s]` (Go's Duration).
STEP = re.compile(
    r"\[[^\]]*/([\w-]+)\s*\]\s+\S+\s+(?:Success|Failure) - Main (.+?) \[([\dhms.µ]+)\]"
)
DURATION = re.compile(r"([\d.]+)(h|ms|µs|m|s)")
UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6}


@dataclass
class Figures:
    name: str
    to_first_request: float | None = None
    total: float = 0.0
    installed: int = 0
    restored: int = 0
    steps: list[tuple[str, float]] = field(default_factory=list)


def seconds(text: str) -> float:
    return sum(float(n) * UNITS[u] for n, u in DURATION.findall(text))


def step_times(log: str) -> list[tuple[str, float]]:
    """The steps act timed before Claude Code's run, in order (jobs prefixed).

    A composite action's own steps come first, then the action as a whole; the
    stand-ins' inner steps (a line of `python3 "$GITHUB_ACTION_PATH/..."`) are left out.
    """
    found = []
    for job, name, took in STEP.findall(log):
        if name == "Run Claude Code":
            break
        if not name.startswith('python3 "$GITHUB_ACTION_PATH/'):
            found.append((f"{job}: {name}", seconds(took)))
    return found


def cache_sizes(cache: Path) -> dict[str, int]:
    sizes = {}
    for meta in cache.glob("*.json"):
        key = yaml.safe_load(meta.read_text(encoding="utf-8"))["key"]
        sizes[key] = (meta.parent / (meta.name.removesuffix(".json") + ".tar")).stat().st_size
    return sizes


def fresh_runner(control: ControlRepo) -> None:
    """A new runner: no HOME, no act cache; Tusk checked out anew (no node_modules)."""
    shutil.rmtree(control.home, ignore_errors=True)
    control.home.mkdir()
    for leftover in ("node_modules", "build"):
        path = control.published / leftover
        if path.is_symlink():
            path.unlink()
        elif path.exists():
            shutil.rmtree(path)


def play(name: str, control: ControlRepo, env: dict[str, str]) -> Figures:
    """One mention through poll → agent workflow; the figures of that run."""
    figures = Figures(name)
    github = start_server(scenario=read_scenario_file(str(demo.scenario_path("demo.yml"))))
    model = ModelServer(demo.scenario_path("demo-model.yml"))
    model_url = model.start()
    cache = control.root / ".act-cache"
    before = cache_sizes(cache)
    try:
        demo.show_trigger(github.url)
        demo.poll_once(github.url, control.root / "tusk.yml")
        dispatches = demo.admin_get(github.url, "/_sandbox/dispatches", github.app.admin_secret)
        started = time.time()
        log = ""
        for number, dispatch in enumerate(dispatches, start=1):
            event = {"action": dispatch["event_type"], "client_payload": dispatch["client_payload"]}
            result = control.run(
                "repository_dispatch",
                event,
                workflow="agent.yml",
                api_url=github.url,
                secrets=demo.DEMO_SECRETS,
                env={"GITHUB_RUN_ID": str(number), "TUSK_LOCAL_DEMO": "1", **env},
                variables={"TUSK_ANTHROPIC_BASE_URL": model_url},
            )
            log += result.stdout
            (control.root / f"{name.split()[0]}-act-{number}.log").write_text(
                result.stdout + result.stderr, encoding="utf-8"
            )
            if not result.ok:
                print(f"  {name}: act exited {result.returncode}; log in {control.root}")
        figures.total = time.time() - started
        journal = model.journal()
        if journal:
            figures.to_first_request = float(journal[0]["at"]) - started
    finally:
        model.stop()
        github.stop()
    after = cache_sizes(cache)
    figures.installed = sum(size for key, size in after.items() if key not in before)
    figures.restored = sum(
        size for key, size in before.items() if f"Cache restored from key: {key}" in log
    )
    figures.steps = step_times(log)
    return figures


def report(figures: Figures) -> None:
    first = figures.to_first_request
    print(f"\n== {figures.name}")
    print(f"  to Claude Code's first request: {first:.1f} s" if first else "  no model request")
    print(f"  whole run: {figures.total:.1f} s")
    print(
        f"  installed: {figures.installed / 1e6:.0f} MB;"
        f" restored from the Actions cache: {figures.restored / 1e6:.0f} MB"
    )
    budget = first or figures.total
    shown = [(n, t) for n, t in figures.steps if t >= 0.05]
    for step, took in shown:
        print(f"  {took:7.2f} s  {100 * took / budget:5.1f}%  {step}")


def control_repo(base: Path, *, installed: bool) -> ControlRepo:
    return ControlRepo(
        base,
        repo=demo.CONTROL_REPO,
        config_text=yaml.safe_dump(demo.DEMO_CONFIG),
        installed=installed,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--only", choices=["cold", "warm", "demo"])
    args = parser.parse_args(argv)
    base = Path(args.workdir or tempfile.mkdtemp(prefix="tusk-bench-setup-"))
    base.mkdir(parents=True, exist_ok=True)
    print(f"bench_setup: files in {base}")
    downloads = {"npm_config_cache": str(base / "npm-cache")}
    # This machine's way to its registries (a CA of its own, npm's settings), as a
    # runner has its own: the runs get a HOME of their own, so name them.
    for name in ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "PIP_CERT"):
        if os.environ.get(name):
            downloads[name] = os.environ[name]
    if (Path.home() / ".npmrc").is_file():
        downloads["npm_config_userconfig"] = str(Path.home() / ".npmrc")
    results = []
    if args.only in (None, "cold"):
        results.append(play("cold", control_repo(base / "cold", installed=False), downloads))
    if args.only in (None, "cold", "warm"):
        warm = control_repo(base / "warm", installed=False)
        fresh_runner(warm)
        results.append(play("cold, downloads cached", warm, downloads))
        fresh_runner(warm)
        results.append(play("warm", warm, downloads))
    if args.only in (None, "demo"):
        results.append(
            play("tusk demo (nothing to install)", control_repo(base / "demo", installed=True), {})
        )
    for figures in results:
        report(figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
