#!/usr/bin/env bash
# Packs the build for the GPU machine (../shared/device/README.md): binaries, the libraries the bare
# machine lacks, the data (matrices, CARMEN logs, BAL problems), and gpu_run.sh, which runs every test suite and the benchmarks there.
# Then, with the device tool:  carry [".device"],  command "bash .device/run bash gpu_run.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
data=${CUDA_SOLVERS_DATA:-../shared/data}
../shared/device/pack "$build" .device "$data/matrices" "$data/carmen" "$data/bal"
cp scripts/gpu_run.sh .device/gpu_run.sh
du -sh .device
