#!/usr/bin/env bash
# The main job from a fresh machine: install what is missing, build, and run the demos:
# conjugate gradients on a generated 3-D Poisson system and on every matrix in ../shared/data/matrices.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh >/dev/null
bin=${BUILD_DIR:-build}/examples
data=${CUDA_SOLVERS_DATA:-../shared/data}

echo "== linalg_cuda: conjugate gradients =="
printf '%-28s %-13s %-8s %6s %12s %12s\n' system precond backend iters "|r|/|b|" "time ms"
row() {  # row NAME ARGS...: one table line from cg_solve's output
  local name=$1; shift
  local out; out=$("$bin/cg_solve" "$@" 2>/dev/null) || true
  local pre backend iters rel ms
  pre=$(awk '/^preconditioner/{print $2}' <<<"$out")
  backend=$(awk '/^backend/{print $2}' <<<"$out")
  iters=$(awk '/^iterations/{print $2}' <<<"$out")
  rel=$(awk '/^true/{print $3}' <<<"$out")
  ms=$(awk '/^solve time/{print $3}' <<<"$out")
  printf '%-28s %-13s %-8s %6s %12s %12s\n' "$name" "$pre" "$backend" "$iters" "$rel" "$ms"
}
for p in none jacobi; do row "poisson3d 64 (262k rows)" --poisson3d 64 --precond "$p"; done
if compgen -G "$data/matrices/*.mtx" >/dev/null; then
  for m in "$data"/matrices/*.mtx; do
    for p in none jacobi block-jacobi; do row "$(basename "$m")" --matrix "$m" --precond "$p"; done
  done
else
  echo "(no matrices in $data/matrices: set CUDA_SOLVERS_DATA to the data folder)"
fi
