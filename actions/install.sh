#!/usr/bin/env bash
# Make the `tusk` command available to the steps of a composite action.
#
# On GitHub the runner's system Python refuses pip installs (PEP 668), so Tusk
# goes into a virtualenv under $RUNNER_TEMP, created once per job and put on
# $GITHUB_PATH for later steps. When the `tusk` already on PATH runs the code of
# this very checkout (an editable install: the local act runs of the demo and
# tests), nothing is installed.
set -euo pipefail
root="$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if found="$(command -v tusk 2>/dev/null)"; then
  python="$(dirname "$found")/python"
  if [ -x "$python" ]; then
    installed="$("$python" -c 'import os, tusk; print(os.path.realpath(tusk.__file__))' 2>/dev/null || true)"
    if [ "$installed" = "$(realpath "$root/src/tusk/__init__.py")" ]; then
      exit 0
    fi
  fi
fi

venv="${RUNNER_TEMP:-/tmp}/tusk-venv"
if [ ! -x "$venv/bin/tusk" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$root"
fi
echo "$venv/bin" >> "${GITHUB_PATH:-/dev/null}"
