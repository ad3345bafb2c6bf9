#!/usr/bin/env bash
# cover-check.sh PROFILE MIN PKG... — fails when the statement coverage of any
# PKG in the coverage profile is below MIN percent. A block counts as covered
# when any test binary covered it (profiles from -coverpkg repeat blocks).
set -euo pipefail
profile=$1 min=$2; shift 2
status=0
for pkg in "$@"; do
  pct=$(awk -v pkg="$pkg/" '
    NR > 1 {
      split($1, a, ":"); file = a[1]
      dir = file; sub(/[^\/]*$/, "", dir)
      if (dir != pkg) next
      n[$1] = $2; if ($3 > 0) c[$1] = 1
    }
    END {
      for (b in n) { total += n[b]; if (b in c) cov += n[b] }
      if (total == 0) { print "0.0"; exit }
      printf "%.1f", 100 * cov / total
    }' "$profile")
  if awk -v p="$pct" -v m="$min" 'BEGIN { exit !(p < m) }'; then
    echo "coverage: $pkg $pct% is below $min%"
    status=1
  else
    echo "coverage: $pkg $pct% (floor $min%)"
  fi
done
exit $status
