#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The engine library exports exactly the functions its installed headers
# declare (GCV_API in gcv.h and gcv-interop.h): nothing internal leaks, and
# nothing declared is missing.
#   check-exports.sh LIBRARY HEADER...
set -eu
lib=$1
shift
declared=$(mktemp)
exported=$(mktemp)
trap 'rm -f "$declared" "$exported"' EXIT
# GCV_API declarations may wrap: the name is the first gcv_ word on the line
grep -h '^GCV_API ' "$@" | grep -o 'gcv_[a-z0-9_]* (' | tr -d ' (' | sort -u >"$declared"
nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwVvDdBbRr]$/ { print $3 }' | sort -u >"$exported"
status=0
if ! cmp -s "$declared" "$exported"; then
  echo "exported but not declared in the installed headers:"
  comm -13 "$declared" "$exported" | sed 's/^/  /'
  echo "declared but not exported:"
  comm -23 "$declared" "$exported" | sed 's/^/  /'
  status=1
fi
echo "$(wc -l <"$exported") symbols exported, $(wc -l <"$declared") declared"
exit $status
