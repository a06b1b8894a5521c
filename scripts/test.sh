#!/usr/bin/env bash
# The whole test suite from a fresh machine: install what is missing, build, run every test.
# GPU tests skip with "no CUDA device" where there is none; on the GPU machine they run through
# scripts/gpu_pack.sh and gpu_run.sh (docs/gpu_testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j"$(nproc)")
# The fuzzers, a bounded run (docs/reliability.md): the nine file readers' 60 s each after a build of
# about 2 minutes, ceres_cuda::Solve's 60 s after its library's build (about 5 minutes of a core,
# beside the readers' runs): about 12 minutes on two cores; FUZZ_SECONDS and FUZZ_SOLVE_SECONDS change
# them.
FUZZ_SOLVE_SECONDS=${FUZZ_SOLVE_SECONDS:-60} scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
# The CPU test suite again, built with ASan and UBSan on the host code, .cu files included
# (docs/reliability.md, "Sanitizers"): 28 to 34 minutes from an empty build folder on two cores, 5 to
# 7 of them ctest; a kept SANITIZE_BUILD_DIR rebuilds only what changed.
scripts/sanitize.sh
# The OMPL checkers and planners under ThreadSanitizer (docs/reliability.md, "ThreadSanitizer"): ompl_cuda
# and its tests built with clang and LLVM's OpenMP, run with Archer: 3 to 8 minutes from an empty build
# folder on two cores (the build 1.3 to 5.3 of them, the tests 1.5 to 2), 2 minutes with a kept
# TSAN_BUILD_DIR.
scripts/tsan.sh
