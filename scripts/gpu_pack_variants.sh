#!/usr/bin/env bash
# Builds a module's test suite and benchmark at several git revisions and adds them, compressed, to the
# folder scripts/gpu_pack.sh made, with scripts/gpu_run_variants.sh, which runs them all on the GPU
# machine in one device call: each revision's tests, then the benchmark in alternating rounds (so that
# the machine's drift falls on all of them alike), then a table of the figures side by side.
#
#   scripts/gpu_pack.sh ceres                                   # the libraries and data (once)
#   scripts/gpu_pack_variants.sh ceres main wip/a wip/b         # MODULE REV...
#   device tool: carry [".device"], command
#     "bash .device/gpu_run_variants.sh --only Venice --skip-ceres --ceres-iterations-large 1"
#
# Each revision is checked out in a worktree under ${VARIANTS_DIR:-/tmp/cuda_solvers_variants} and built
# there (Release, the default CUDA architecture; builds are kept, so a second call only rebuilds what
# changed). The binaries travel as one xz archive (about 2 MB a revision, where the device tool carries
# 64 MiB in all).
set -euo pipefail
cd "$(dirname "$0")/.."
(($# >= 2)) || { echo "usage: scripts/gpu_pack_variants.sh MODULE REV..." >&2; exit 2; }
module=$1
shift
case $module in linalg | gridmap | ompl | ceres) ;; *) echo "gpu_pack_variants.sh: unknown module '$module'" >&2; exit 2 ;; esac
[[ -d .device ]] || { echo "gpu_pack_variants.sh: run scripts/gpu_pack.sh $module first (it makes .device)" >&2; exit 2; }
root=${VARIANTS_DIR:-/tmp/cuda_solvers_variants}
git worktree prune  # worktrees of an earlier call whose folders are gone (a cleared /tmp)
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
names=()
for rev in "$@"; do
  commit=$(git rev-parse --verify "$rev^{commit}")
  name=$(echo "$rev" | tr '/' '_')
  tree="$root/$name"
  if [[ -d $tree ]]; then
    git -C "$tree" checkout -q --detach "$commit"
  else
    mkdir -p "$root"
    git worktree add -q --detach "$tree" "$commit"
  fi
  echo "== $rev ($(git log -1 --format='%h %s' "$commit" | cut -c1-80))"
  cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$tree/build" -j"$(nproc)" --target "${module}_cuda_test" "bench_$module" | tail -n 1
  mkdir -p "$staging/$name"
  cp "$tree/build/tests/${module}_cuda/${module}_cuda_test" "$tree/build/bench/bench_$module" "$staging/$name/"
  echo "$rev $commit" >"$staging/$name/revision"
  names+=("$name")
done
printf '%s\n' "${names[@]}" >"$staging/order"
echo "$module" >"$staging/module"
tar -cJf .device/variants.tar.xz -C "$staging" .
cp scripts/gpu_run_variants.sh .device/
du -sh .device/variants.tar.xz .device
