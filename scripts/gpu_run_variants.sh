#!/usr/bin/env bash
# Runs on the GPU machine from the packed folder (see gpu_pack_variants.sh): every packed revision's test
# suite, then its benchmark with the given arguments, in ROUNDS (default 2) rounds that take the
# revisions in turn, then a table of each benchmark row's figures by revision. The summary goes to
# $OUT/variants_summary.txt (or out/) as it is written, so that a call cut short still brings back
# what ran, and to stdout; the logs, kept outside $OUT while the call runs (the device tool brings back
# at most 8 files), go to $OUT/variants_logs.tar.gz at the end.
#
#   bash .device/gpu_run_variants.sh [BENCH_ARGS...]          e.g. --only Venice --skip-ceres
#   ROUNDS (default 2) and ROW_PATTERN (default " LM ", the benchmark rows of bench_ceres) in the environment;
#   TESTS=last runs only the last revision's tests (the others' ran before), TESTS=none none.
#   TEST_TIMEOUT and BENCH_TIMEOUT (default 300 each; a Final-scale run takes about 120 s on the H100):
#   seconds a test suite or a benchmark run may take. A run that fails is reported at once with its
#   log's tail, and a revision whose run timed out is left out of the later rounds: a build that hangs,
#   or falls back to the CPU engine, must not take the device call's whole time (the device tool stops
#   a call at 600 s).
set -uo pipefail
cd "$(dirname "$0")"
bash unpack.sh || exit 1  # the libraries of scripts/gpu_pack.sh
out=${OUT:-out}
logs=$PWD/variant_logs
mkdir -p "$out" variants "$logs"
tar -xJf variants.tar.xz -C variants
export LD_LIBRARY_PATH=$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} CUDA_SOLVERS_DATA=$PWD/data
module=$(cat variants/module)
mapfile -t names <variants/order
summary=$out/variants_summary.txt
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  for name in "${names[@]}"; do
    echo "== $(cat "variants/$name/revision")"
    case ${TESTS:-all} in
      none) continue ;;
      last) [[ $name == "${names[-1]}" ]] || continue ;;
    esac
    timeout "${TEST_TIMEOUT:-300}" "variants/$name/${module}_cuda_test" --gtest_brief=1 >"$logs/$name.test.log" 2>&1
    echo "   tests: exit $?, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\]' "$logs/$name.test.log" | tr '\n' ' ')"
    grep -E '^\[  FAILED  \]' "$logs/$name.test.log" | head -n 10
  done
  timed_out=" "
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for name in "${names[@]}"; do
      [[ $timed_out == *" $name "* ]] && continue
      log=$logs/$name.bench.$round.log
      timeout "${BENCH_TIMEOUT:-300}" "variants/$name/bench_$module" "$@" >"$log" 2>&1
      status=$?
      echo "   $name, round $round: exit $status"
      if ((status != 0)); then
        tail -n 8 "$log" | cut -c1-300 | sed 's/^/      /'
        ((status == 124)) && timed_out+="$name "
      fi
    done
  done
  # Each benchmark row (lines matching ROW_PATTERN, default bench_ceres's " LM "), by revision and round.
  for name in "${names[@]}"; do
    echo "== $name"
    for round in $(seq 1 "${ROUNDS:-2}"); do
      [[ -f $logs/$name.bench.$round.log ]] || continue  # left out after a timeout
      grep -E "${ROW_PATTERN:- LM }" "$logs/$name.bench.$round.log" | sed -E 's/ +/ /g' | cut -c1-220 | sed "s/^/   round $round: /"
    done
  done
} 2>&1 | tee "$summary"
tar -czf "$out/variants_logs.tar.gz" -C "$logs" .
