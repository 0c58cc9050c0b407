#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs the Debian packages that building, testing and the demo need, when
# any of them is missing. Extra package names may be given as arguments.
# Uses sudo when not run as root; never asks questions (CI has no stdin).
set -euo pipefail

packages=(
  meson ninja-build pkg-config gcc libc6-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad
  libgstreamer-plugins-bad1.0-dev   # gstreamer-cuda-1.0: CUDA memory, shared context
  gstreamer1.0-x            # textoverlay (pango), used by the demo
  "$@"
)

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "deps.sh: not a Debian system; install these yourself: ${packages[*]}" >&2
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "deps.sh: missing packages (${missing[*]}) and no sudo; run as root:" >&2
    echo "  apt-get install ${missing[*]}" >&2
    exit 1
  fi
  sudo=(sudo)
fi

echo "Installing: ${missing[*]}"
apt_env=(env DEBIAN_FRONTEND=noninteractive)
"${sudo[@]}" "${apt_env[@]}" apt-get update -q
"${sudo[@]}" "${apt_env[@]}" apt-get install -y -q --no-install-recommends \
  "${missing[@]}" </dev/null
