#!/usr/bin/env bash
# Make the `tusk` command available to the steps of a composite action.
#
# On GitHub the runner's system Python refuses pip installs (PEP 668), so Tusk
# goes into a virtualenv, created once per job and put on $GITHUB_PATH for later
# steps: at $TUSK_VENV when it is set (the reusable workflows put it in the
# workspace, where the Actions cache restores it), else under $RUNNER_TEMP. Only
# Tusk's runtime dependencies are installed, never the `sandbox`/`dev` extras.
# A venv restored from the cache may sit at another path than the one it was
# made at (act gives each job a new workspace), so `tusk` is a launcher that
# finds its Python beside itself rather than a script with a fixed #! line.
# When the `tusk` already on PATH runs the code of this very checkout (an
# editable install: the local act runs of the demo and tests), nothing is
# installed.
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

venv="${TUSK_VENV:-${RUNNER_TEMP:-/tmp}/tusk-venv}"
if "$venv/bin/python" -c 'import tusk.cli.main' 2>/dev/null; then
  echo "Tusk is installed in $venv (restored or made earlier in this job)"
else
  python3 -m venv --clear "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$root"
fi
cat > "$venv/bin/tusk" <<'LAUNCHER'
#!/bin/sh
exec "$(dirname -- "$0")/python" -m tusk.cli.main "$@"
LAUNCHER
chmod 755 "$venv/bin/tusk"
echo "$venv/bin" >> "${GITHUB_PATH:-/dev/null}"
