#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every tracked source file carries the project's licence as an SPDX line in
# its first lines (after a shebang where there is one), so a file copied out
# of the tree still says under which terms.
#   check-licence.sh SOURCE_ROOT
# Skips (exit 77) outside a git checkout, e.g. in a release tarball.
set -eu
root=$1
line='SPDX-License-Identifier: LGPL-2.1-or-later'
files=$(git -C "$root" ls-files 2>/dev/null) || { echo "not a git checkout: skipped"; exit 77; }
missing=0
checked=0
for f in $files; do
  case "$f" in
    *.c|*.h|*.cu|*.cuh|*.cpp|*.py|*.sh|meson.build|*/meson.build|meson_options.txt|.ci/run|*.prs) ;;
    *) [ -f "$root/$f" ] && head -c 2 "$root/$f" | grep -q '^#!' || continue ;;
  esac
  [ -f "$root/$f" ] || continue
  checked=$((checked + 1))
  if ! head -n 3 "$root/$f" | grep -q "$line"; then
    echo "no SPDX line: $f"
    missing=$((missing + 1))
  fi
done
echo "$checked source files checked, $missing without the SPDX line"
[ "$missing" -eq 0 ]
