#!/usr/bin/env bash
# Runs on the GPU machine from the packed folder (see gpu_pack.sh): every test suite, then the
# benchmarks; logs and JSON go to $OUT (or ./out). Exit status: that of the tests.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
export CUDA_SOLVERS_DATA=$PWD/data
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
status=0
for t in tests/*/*_test; do
  echo "== $t"
  "./$t" --gtest_brief=1 2>&1 | tee "$out/$(basename "$t").log" | tail -n 30
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
done
if [[ ${SKIP_BENCH:-0} != 1 ]]; then
  for b in bench/bench_*; do
    echo "== $b"
    "./$b" --json "$out/$(basename "$b").json" ${BENCH_ARGS:-} 2>&1 | tee "$out/$(basename "$b").log"
  done
fi
echo "tests: $([[ $status -eq 0 ]] && echo passed || echo FAILED)"
exit $status
