#!/usr/bin/env bash
# Packs the build for the GPU machine (../shared/device/README.md): binaries, the libraries the bare
# machine lacks, the data they read, and gpu_run.sh, which runs the test suites and the benchmarks there.
#
#   scripts/gpu_pack.sh [MODULE...]     MODULE: linalg | gridmap | ompl | ceres   (default: all four)
#                                       | colmap: Debian's COLMAP and its libraries
#
# Naming modules packs only their tests, benchmark, example and data. COLMAP (30 MB compressed) is
# packed only when named: the ceres tests and bench_ceres_colmap that compare with it need it, and
# with all four modules it would pass the carry limit (`scripts/gpu_pack.sh ceres colmap`: 49 MB). The programs and libraries travel
# as one xz archive, .device/binaries.tar.xz (the device tool carries at most 64 MiB, which all four
# modules' binaries exceed uncompressed); gpu_run.sh unpacks it. Then, with the device tool:
#   carry [".device"], command "bash .device/run bash gpu_run.sh"
# (for a program alone: "bash .device/run bash -c 'bash unpack.sh && bench/bench_ceres ...'")
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
data=${CUDA_SOLVERS_DATA:-../shared/data}
modules=("$@")
((${#modules[@]})) || modules=(linalg gridmap ompl ceres)
declare -A example=([linalg]=cg_solve [gridmap]="gridmap_build gridmap_replay" [ompl]="plan_chain plan_robot"
                    [ceres]="bal_solve bal_to_colmap colmap_ba")
declare -A dataset=([linalg]=matrices [gridmap]=carmen [ompl]="robots scenes" [ceres]=bal)
selected=$(mktemp -d)
trap 'rm -rf "$selected"' EXIT
folders=()
for m in "${modules[@]}"; do
  if [[ $m == colmap ]]; then  # COLMAP itself, the anchor of colmap_ba's tests and benchmark
    mkdir -p "$selected/colmap"
    cp "$(command -v colmap)" "$selected/colmap/"
    continue
  fi
  [[ -n ${example[$m]+x} ]] || { echo "gpu_pack.sh: unknown module '$m' (linalg, gridmap, ompl, ceres, colmap)" >&2; exit 2; }
  mkdir -p "$selected/tests/${m}_cuda" "$selected/bench" "$selected/examples"
  cp "$build/tests/${m}_cuda/${m}_cuda_test" "$selected/tests/${m}_cuda/"
  cp "$build"/bench/bench_"$m"* "$selected/bench/"
  for program in ${example[$m]}; do cp "$build/examples/$program" "$selected/examples/"; done
  for folder in ${dataset[$m]}; do folders+=("$data/$folder"); done
  if [[ $m == ceres ]]; then
    cp "$build/tests/ceres_cuda/preload_probe" "$selected/tests/ceres_cuda/"  # the LD_PRELOAD test's program
  fi
done
../shared/device/pack "$selected" .device "${folders[@]}"
# The kernel timeline (bench/kernel_timeline.cpp) is injected by the driver, so no program links it:
# pack it and its CUPTI by hand.
cp "$build/bench/libkernel_timeline.so" .device/bench/
cp -L "$(ldd "$build/bench/libkernel_timeline.so" | awk '/libcupti/ {print $3}')" .device/lib/
cp scripts/gpu_run.sh scripts/gpu_sanitize.sh .device/
# pack copies programs, not libraries: the preload library and the test's script go by hand.
if [[ -f .device/tests/ceres_cuda/preload_probe ]]; then
  mkdir -p .device/ceres_cuda
  cp "$build/ceres_cuda/libceres_cuda_preload.so" .device/ceres_cuda/
  cp tests/ceres_cuda/preload/preload_test.sh .device/tests/ceres_cuda/
fi
packed=(tests bench examples lib)
for extra in ceres_cuda colmap; do [[ -d .device/$extra ]] && packed+=("$extra"); done
tar -cf - -C .device "${packed[@]}" | xz -T0 -6 >.device/binaries.tar.xz
rm -rf "${packed[@]/#/.device/}"
printf '%s\n' '# Unpacks the programs and libraries that scripts/gpu_pack.sh packed (once per machine).' \
  '[[ -d lib ]] || tar -xJf binaries.tar.xz' >.device/unpack.sh
du -sh .device
