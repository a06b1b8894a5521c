#!/usr/bin/env bash
# The LD_PRELOAD test: preload_probe (a program linked to the system's libceres alone) with and without
# libceres_cuda_preload.so gives the same costs (1e-6 relative); the report names the ceres_cuda path
# for the solves it takes and hands the line search solve to Ceres, saying why once.
#
#   preload_test.sh PROBE PRELOAD_SO BAL_FILE [PATH_REGEX]   (PATH_REGEX: the path expected for solves
#                                                             1 and 2; default "gpu|cpu reference")
set -euo pipefail
probe=$1 preload=$2 bal=$3 expected=${4:-"gpu|cpu reference"}
plain=$("$probe" "$bal" 2>/dev/null)
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
# A sanitizer's runtime must come first among the preloads of a program built with it.
runtime=$(ldd "$probe" | awk '/libasan|libtsan/ {print $3}')
routed=$(LD_PRELOAD=${runtime:+$runtime:}$preload CERES_CUDA_REPORT=1 "$probe" "$bal" 2>"$errors")
echo "without the preload:"; echo "$plain"
echo "with it:"; echo "$routed"; cat "$errors"
fail() { echo "FAILED: $*"; exit 1; }
for solve in 1 2; do
  grep -Eq "ceres_cuda_preload: solve $solve: ($expected)[ ,]" "$errors" || fail "solve $solve did not run on '$expected'"
done
grep -q "ceres_cuda_preload: solve 3: ceres::Solve (fallback)" "$errors" || fail "solve 3 was not handed to Ceres"
[[ $(grep -c "said once per reason" "$errors") == 1 ]] || fail "the fallback reason was not said exactly once"
# Costs within 1e-6 relative, iteration counts equal.
paste <(echo "$plain") <(echo "$routed") | awk '{
  for (k = 4; k <= 6; k += 2) { a = $k; b = $(k + 8); d = a - b; if (d < 0) d = -d; s = a < 0 ? -a : a;
    if (d > 1e-6 * s) { print "FAILED: " $1 " " $2 " " $(k - 1) " " a " against " b; bad = 1 } }
  if ($8 != $16) { print "FAILED: " $1 " " $2 " iterations " $8 " against " $16; bad = 1 } }
  END { exit bad }'
echo "PASSED"
