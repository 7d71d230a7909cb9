#!/usr/bin/env bash
# Install the system packages of the agent's box that are missing: bubblewrap
# (bwrap), socat and tinyproxy, Debian's and Ubuntu's packages, as root (sudo on
# GitHub's runners). Present ones are looked for where run-claude looks for them.
#
# With TUSK_BOX_DEBS, a folder: when it holds .deb files (the agent workflow
# restores it from the Actions cache under a key naming the runner image, the
# week and this script), they are installed with dpkg: no apt-get update, no
# download. Otherwise apt-get downloads into that folder and installs from it,
# and `downloaded=true` goes to $GITHUB_OUTPUT so the workflow saves the folder
# for the next runs. Without TUSK_BOX_DEBS, apt-get installs as usual. Where
# nothing can be installed (no apt-get, no root), a warning says what the run
# needs instead.
set -euo pipefail
search="${TUSK_BOX_TOOLS_PATH:-/usr/sbin:/usr/bin:/sbin:/bin}"
debs="${TUSK_BOX_DEBS:-}"

missing() {
  local tool package need=""
  for tool in bwrap:bubblewrap socat:socat tinyproxy:tinyproxy; do
    package="${tool#*:}"
    PATH="$search" command -v "${tool%%:*}" >/dev/null || need="$need $package"
  done
  echo "${need# }"
}

need="$(missing)"
if [ -z "$need" ]; then
  echo "The box's tools are installed (bwrap, socat, tinyproxy): nothing to install"
  exit 0
fi
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo --non-interactive)
if ! command -v apt-get >/dev/null || ! "${as_root[@]}" true 2>/dev/null; then
  echo "::warning::$need missing and cannot be installed here; the run needs agent.network: open or agent.network_required: false"
  exit 0
fi

fix=()
if [ -n "$debs" ] && compgen -G "$debs/*.deb" >/dev/null; then
  if "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive dpkg --install "$debs"/*.deb >/dev/null; then
    need="$(missing)"
    if [ -z "$need" ]; then
      echo "Installed the box's packages from the Actions cache: $(cd "$debs" && echo *.deb) (no download)"
      exit 0
    fi
  fi
  echo "The cached packages did not give the box its tools ($need missing): installing with apt-get"
  fix=(--fix-broken)
fi

"${as_root[@]}" apt-get update -qq
install=(apt-get install -y -qq --no-install-recommends "${fix[@]}")
if [ -n "$debs" ]; then
  mkdir -p "$debs"
  install+=(-o "Dir::Cache::archives=$debs" -o APT::Keep-Downloaded-Packages=true)
fi
# shellcheck disable=SC2086 # one word per package
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive "${install[@]}" $need
echo "Installed $need with apt-get"
if [ -n "$debs" ]; then
  "${as_root[@]}" rm -rf "$debs/partial" "$debs/lock"
  echo "downloaded=true" >> "${GITHUB_OUTPUT:-/dev/null}"
fi
