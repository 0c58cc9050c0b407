#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Makes a Python venv for gpuconvolve-batch and installs requirements.txt
# into it; does nothing when that venv already has them.
#
#   tools/batch/install.sh [VENV_DIR]     (default: tools/batch/.venv)
#
# PYTHON picks the interpreter (default python3). On Debian, python3-venv
# (and with it python3) is installed first, through scripts/deps.sh, when the
# interpreter cannot make a venv. Exits 0 when the venv
# is ready, non-zero otherwise.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-$here/.venv}
python=${PYTHON:-python3}
requirements=$here/requirements.txt
# A copy of the requirements the venv was made from: when it matches, the
# venv is up to date and pip (slow, and online) is not run again.
stamp=$venv/.gpuconvolve-batch-requirements

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && cmp -s "$stamp" "$requirements"; then
  exit 0
fi

# Debian splits venv's ensurepip into python3-venv (which brings python3).
if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install.sh: $python cannot make a venv; install Python 3 with its venv module" >&2
    exit 1
  fi
  # the project's own installer: it adds python3-venv to what the build
  # and the pipelines need (sudo when not root, no questions)
  "$here/../../scripts/deps.sh" python3-venv || exit 1
  python=python3
fi

echo "Making $venv and installing $(grep -v '^#' "$requirements" | xargs)"
rm -f "$stamp"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"
