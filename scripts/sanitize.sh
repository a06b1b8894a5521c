#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer and UndefinedBehaviorSanitizer on host code (C++ and
# the host side of every .cu file, through nvcc's -Xcompiler) into ${SANITIZE_BUILD_DIR:-build-sanitize}
# and runs the CPU test suite (ctest) under them. Exits non-zero on a failing test and on any sanitizer
# report, also one that a test's verdict does not see: a test that expects its program to fail
# (WILL_FAIL) or passes on its output alone (PASS_REGULAR_EXPRESSION). Extra arguments go to cmake.
# Device code is compute-sanitizer's job on a GPU machine.
# Usage: scripts/sanitize.sh [CMAKE_ARGS...]   (docs/reliability.md, "Sanitizers")
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${SANITIZE_BUILD_DIR:-build-sanitize}
jobs=${SANITIZE_JOBS:-$(nproc)}
mkdir -p "$build"
build=$(cd "$build" && pwd)
supp=$root/scripts/sanitizers

# The benchmarks are left out: ctest does not run them.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDA_SOLVERS_SANITIZE=address,undefined \
      -DCUDA_SOLVERS_BUILD_BENCH=OFF "$@"

# Set before the build too: gtest_discover_tests runs each test program to list its tests. Reports go
# to stderr, where ctest keeps them in its log whatever the verdict (a log_path file would not hold
# UBSan's reports: with -fno-sanitize-recover they go to stderr before the process dies).
# protect_shadow_gap=0: the CUDA driver maps memory where ASan would otherwise protect its shadow gap
# (without it cudaMalloc fails on a GPU machine; without a driver it changes nothing).
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:protect_shadow_gap=0:\
check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:print_summary=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:print_summary=1:suppressions=$supp/ubsan.supp"
symbolizer=$(command -v llvm-symbolizer || true)
[[ -n $symbolizer ]] && export ASAN_SYMBOLIZER_PATH=$symbolizer

status=0
cmake --build "$build" -j"$jobs" || exit $?
start=$SECONDS
(cd "$build" && ctest --output-on-failure -j"$jobs") || status=$?
echo "ctest under the sanitizers: $((SECONDS - start)) s"
# Every test's output, passed or not, is in ctest's log. ASan and LSan end a report with a SUMMARY line;
# UBSan, stopping at its first report, prints none, only "FILE:LINE:COLUMN: runtime error: ...".
log=$build/Testing/Temporary/LastTest.log
if grep -n -E 'SUMMARY: (Address|Leak|UndefinedBehavior)Sanitizer|: runtime error: ' "$log"; then
  echo "FINDING: sanitizer reports above (full output: $log)"
  status=1
fi
exit $status
