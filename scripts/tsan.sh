#!/usr/bin/env bash
# ThreadSanitizer over the OMPL checkers and planners: builds ompl_cuda and its GoogleTest suite with
# -fsanitize=thread (C++ and the host side of the .cu files) into ${TSAN_BUILD_DIR:-build-tsan} and runs
# the suite, whose concurrency tests call the checkers from several threads at once (single and batch
# calls, OMPL's PRM, ompl::tools::ParallelPlan, the batched planners side by side) and whose batch
# calls run OpenMP loops. Exits non-zero on a failing test and on any ThreadSanitizer report.
#
# The build uses clang 14 and LLVM's OpenMP runtime (libomp), with Archer (libarcher.so, LLVM's OpenMP
# tool for ThreadSanitizer) loaded into it: Archer tells TSan what the runtime's barriers, reductions
# and task dependences order, which TSan cannot see in the uninstrumented runtime. GCC's libgomp has
# no such tool, so a g++ build reports races between an OpenMP loop and the code after its barrier.
# Extra arguments go to cmake; TSAN_GTEST_FILTER picks tests (GoogleTest's --gtest_filter).
# Usage: scripts/tsan.sh [CMAKE_ARGS...]   (docs/reliability.md, "ThreadSanitizer")
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${TSAN_BUILD_DIR:-build-tsan}
jobs=${TSAN_JOBS:-$(nproc)}
llvm=${TSAN_LLVM_DIR:-/usr/lib/llvm-14}
archer=$llvm/lib/libarcher.so
for f in "$llvm/bin/clang++" "$archer"; do
  [[ -e $f ]] || { echo "error: $f not found (Debian packages clang-14, libomp-14-dev)" >&2; exit 1; }
done
mkdir -p "$build"
build=$(cd "$build" && pwd)
supp=$root/scripts/sanitizers

# clang for C++ and as nvcc's host compiler, so that all host code is instrumented by one compiler
# and OpenMP is libomp's everywhere. Only ompl_cuda, linalg_cuda under it, and their tests are built.
start=$SECONDS
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDA_SOLVERS_SANITIZE=thread \
      -DCMAKE_CXX_COMPILER="$llvm/bin/clang++" -DCMAKE_CUDA_HOST_COMPILER="$llvm/bin/clang++" \
      -DCUDA_SOLVERS_BUILD_BENCH=OFF -DCUDA_SOLVERS_BUILD_EXAMPLES=OFF "$@"
cmake --build "$build" -j"$jobs" --target ompl_cuda_test
echo "build for ThreadSanitizer: $((SECONDS - start)) s"

# halt_on_error: the first report ends the run (exit code 66). ignore_noninstrumented_modules: memory
# accesses made inside uninstrumented libraries (libomp's own bookkeeping, OMPL, libstdc++) are not
# checked, as Archer asks; their locks and thread starts still order ours, and every access of our
# code, also one in an OpenMP loop body that libomp calls, is checked.
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:ignore_noninstrumented_modules=1:\
suppressions=$supp/tsan.supp:print_suppressions=0"
export OMP_TOOL_LIBRARIES=$archer
export ARCHER_OPTIONS=verbose=1                 # it says that it is active; checked below
# Four OpenMP threads in every parallel loop, whatever the machine: the loops run on several threads
# inside each of the tests' threads.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}

log=$build/ompl_cuda_test.log
status=0
start=$SECONDS
"$build/tests/ompl_cuda/ompl_cuda_test" --gtest_filter="${TSAN_GTEST_FILTER:-*}" >"$log" 2>&1 || status=$?
echo "ompl_cuda_test under ThreadSanitizer: $((SECONDS - start)) s, exit status $status"
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$log" || true
if grep -n -E 'WARNING: ThreadSanitizer|SUMMARY: ThreadSanitizer|FATAL: ThreadSanitizer' "$log"; then
  echo "FINDING: ThreadSanitizer reports above (full output: $log)"
  status=1
fi
if ! grep -q 'Archer detected OpenMP application with TSan' "$log"; then
  echo "error: Archer did not start ($archer): OpenMP's synchronisation was not seen (full output: $log)"
  status=1
fi
((status == 0)) || tail -n 60 "$log"
exit $status
