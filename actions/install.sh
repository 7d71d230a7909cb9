#!/usr/bin/env bash
# Make the `tusk` command available to the steps of a composite action.
#
# On GitHub the runner's system Python refuses pip installs (PEP 668), so Tusk
# goes into a virtualenv under $RUNNER_TEMP, created once per job and put on
# $GITHUB_PATH for later steps. When a `tusk` of the same version is already on
# PATH (a self-hosted runner, or the local act runs of the demo and tests),
# nothing is installed.
set -euo pipefail
root="$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
want="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/pyproject.toml" | head -n 1)"

if command -v tusk >/dev/null 2>&1 && [ "$(tusk --version 2>/dev/null)" = "tusk $want" ]; then
  exit 0
fi

venv="${RUNNER_TEMP:-/tmp}/tusk-venv"
if [ ! -x "$venv/bin/tusk" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$root"
fi
echo "$venv/bin" >> "${GITHUB_PATH:-/dev/null}"
