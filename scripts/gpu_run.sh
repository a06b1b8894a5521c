#!/usr/bin/env bash
# Runs on the GPU machine from the packed folder (see gpu_pack.sh): every packed test suite, then the
# benchmarks (unless SKIP_BENCH=1; BENCH_ARGS go to each). A summary goes to stdout and $OUT/summary.txt;
# every log and JSON into one archive, $OUT/gpu_run.tar.gz (the device tool brings back at most 8
# files). Exit status: that of the tests.
set -uo pipefail
bash unpack.sh || exit 1
out=${OUT:-out}
logs=$(mktemp -d)
mkdir -p "$out"
export CUDA_SOLVERS_DATA=$PWD/data
[[ -d colmap ]] && export PATH=$PWD/colmap:$PATH  # COLMAP, for the tests and benchmark that compare with it
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  status=0
  for t in tests/*/*_test; do
    "./$t" --gtest_brief=1 >"$logs/$(basename "$t").log" 2>&1
    code=$?
    [[ $code -eq 0 ]] || status=1
    echo "== $t: exit $code, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\]' "$logs/$(basename "$t").log" | tr '\n' ' ')"
    [[ $code -eq 0 ]] || grep -E '^\[  FAILED  \]|Failure' "$logs/$(basename "$t").log" | head -n 20
  done
  if [[ -f tests/ceres_cuda/preload_test.sh ]]; then
    bash tests/ceres_cuda/preload_test.sh tests/ceres_cuda/preload_probe ceres_cuda/libceres_cuda_preload.so \
      data/bal/problem-49-7776-pre.txt "gpu" >"$logs/preload_test.log" 2>&1
    code=$?
    [[ $code -eq 0 ]] || status=1
    echo "== tests/ceres_cuda/preload_test.sh: exit $code"
    grep -E "ceres_cuda_preload:|FAILED|PASSED" "$logs/preload_test.log"
  fi
  if [[ ${SKIP_BENCH:-0} != 1 ]]; then
    for b in bench/bench_*; do
      echo "== $b"
      "./$b" --json "$logs/$(basename "$b").json" ${BENCH_ARGS:-} >"$logs/$(basename "$b").log" 2>&1
      tail -n 25 "$logs/$(basename "$b").log"
    done
  fi
  echo "tests: $([[ $status -eq 0 ]] && echo passed || echo FAILED)"
  echo "$status" >"$logs/status"
} 2>&1 | tee "$out/summary.txt"
tar -czf "$out/gpu_run.tar.gz" -C "$logs" .
exit "$(cat "$logs/status")"
