#!/usr/bin/env bash
# Make the `tusk` command available to the steps of a composite action.
#
# On GitHub the runner's system Python refuses pip installs (PEP 668), so Tusk
# goes into a virtualenv, created once per job and put on $GITHUB_PATH for later
# steps: at $TUSK_VENV when it is set (the reusable workflows put it in the
# workspace, where the Actions cache restores it), else under $RUNNER_TEMP. Only
# Tusk's runtime dependencies are installed, never the `sandbox`/`dev` extras.
# uv (PyPI's `uv`, pinned below, put under $RUNNER_TEMP with the runner's own
# pip) makes the venv and installs into it in seconds where pip takes tens of
# seconds; when uv cannot be had, pip does it as before. The step log says which.
# A venv restored from the cache may sit at another path than the one it was
# made at (act gives each job a new workspace), so `tusk` is a launcher that
# finds its Python beside itself rather than a script with a fixed #! line.
# When the `tusk` already on PATH runs the code of this very checkout (an
# editable install: the local act runs of the demo and tests), nothing is
# installed.
set -euo pipefail
root="$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
uv_release="uv==0.13.9"

if found="$(command -v tusk 2>/dev/null)"; then
  python="$(dirname "$found")/python"
  if [ -x "$python" ]; then
    installed="$("$python" -c 'import os, tusk; print(os.path.realpath(tusk.__file__))' 2>/dev/null || true)"
    if [ "$installed" = "$(realpath "$root/src/tusk/__init__.py")" ]; then
      exit 0
    fi
  fi
fi

# uv from PyPI into a folder of this job's own; prints its path, or why not on stderr.
get_uv() {
  local tools="${RUNNER_TEMP:-/tmp}/tusk-uv" said
  # --target installs beside no Python of the system's, so PEP 668 does not apply.
  if said="$(PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet \
    --disable-pip-version-check --no-warn-script-location --target "$tools" "$uv_release" 2>&1)" &&
    [ -x "$tools/bin/uv" ]; then
    echo "$tools/bin/uv"
  else
    echo "${said:-pip put no uv in $tools}" | tail -n 3 >&2
    return 1
  fi
}

# The venv and Tusk in it, with uv. --no-config: no uv.toml or pyproject.toml of the
# workspace (the control repository) chooses the index; never a Python of uv's own.
install_with_uv() {
  local uv="$1" venv="$2"
  UV_PYTHON_DOWNLOADS=never "$uv" venv --no-config --quiet --clear \
    --python "$(command -v python3)" "$venv" &&
    "$uv" pip install --no-config --quiet --link-mode copy --compile-bytecode \
      --python "$venv/bin/python" "$root"
}

install_with_pip() {
  local venv="$1"
  python3 -m venv --clear "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$root"
}

venv="${TUSK_VENV:-${RUNNER_TEMP:-/tmp}/tusk-venv}"
if "$venv/bin/python" -c 'import tusk.cli.main' 2>/dev/null; then
  echo "Tusk is installed in $venv (restored or made earlier in this job)"
else
  started=$SECONDS
  if uv="$(get_uv)"; then
    if install_with_uv "$uv" "$venv"; then
      echo "Installed Tusk in $venv with $("$uv" --version) in $((SECONDS - started)) s"
    else
      echo "uv could not install Tusk (above); installing it with pip instead"
      install_with_pip "$venv"
      echo "Installed Tusk in $venv with pip in $((SECONDS - started)) s"
    fi
  else
    echo "uv could not be had (above); installing Tusk with pip instead"
    install_with_pip "$venv"
    echo "Installed Tusk in $venv with pip in $((SECONDS - started)) s"
  fi
fi
cat > "$venv/bin/tusk" <<'LAUNCHER'
#!/bin/sh
exec "$(dirname -- "$0")/python" -m tusk.cli.main "$@"
LAUNCHER
chmod 755 "$venv/bin/tusk"
echo "$venv/bin" >> "${GITHUB_PATH:-/dev/null}"
