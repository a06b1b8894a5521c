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

echo
echo "== gridmap_cuda: occupancy grid maps (CARMEN evidence grid, 0.025 m) =="
out=${BUILD_DIR:-build}/demo
mkdir -p "$out"
printf '%-26s %8s %10s %12s %-8s %10s\n' log scans "cells" "updates" backend "map ms"
map_row() {  # map_row NAME ARGS...
  local name=$1; shift
  local text; text=$("$bin/gridmap_build" "$@" --out "$out/$name" 2>/dev/null) || { echo "$name: failed"; return; }
  local scans cells updates backend ms
  scans=$(awk '/^scans/{print $2}' <<<"$text")
  cells=$(awk '/^grid/{print $2 "x" $4}' <<<"$text")
  updates=$(awk '/^updates/{print $2}' <<<"$text")
  backend=$(awk '/^backend/{print $2}' <<<"$text")
  ms=$(awk '/^time/{print $2}' <<<"$text")
  printf '%-26s %8s %10s %12s %-8s %10s\n' "$name" "$scans" "$cells" "$updates" "$backend" "$ms"
}
map_row synthetic
if compgen -G "$data/carmen/*.log*" >/dev/null; then
  for log in "$data"/carmen/*.log*; do map_row "$(basename "$log" .log.gz)" --log "$log"; done
else
  echo "(no logs in $data/carmen: set CUDA_SOLVERS_DATA to the data folder)"
fi
echo "maps (ROS .pgm/.yaml and .png) in $out"

echo
echo "== ompl_cuda: planning for a planar chain with GPU collision checks =="
for args in "--env paper --planner batched-rrtstar --time 3" "--env paper --planner batched-prm --time 3" \
            "--env paper --planner rrtconnect --time 3" \
            "--env horn --links 8 --planner batched-rrtstar --time 5"; do
  name=$(echo "$args" | awk '{print $2 "_" $(NF-2)}')
  echo "-- plan_chain $args"
  "$bin/plan_chain" $args --svg "$out/$name.svg" 2>/dev/null | grep -E "^(planner|result|motions|path)" || echo "(no solution)"
done
echo "drawings (SVG) in $out"

echo
echo "== ceres_cuda: bundle adjustment of the BAL problems (ceres_cuda::Solve; GPU when present, else the CPU engine) =="
if compgen -G "$data/bal/problem-*" >/dev/null; then
  for f in "$data"/bal/problem-*; do
    name=$(basename "$f"); name=${name%%.txt*}
    echo "-- bal_solve --input $(basename "$f")"
    # --solver gpu: without a CUDA device ceres_cuda runs its CPU engine and the first line says so
    "$bin/bal_solve" --input "$f" --solver gpu --iterations 50 --quiet --ply "$out/$name.ply" \
      --plot "$out/$name.convergence.svg" 2>/dev/null |
      grep -E "^(ceres_cuda|PCG|Initial|Final|Minimizer iterations|Total|Termination)" || echo "(failed)"
  done
  echo "point clouds (PLY) and convergence plots (SVG) in $out"
else
  echo "(no BAL problems in $data/bal: set CUDA_SOLVERS_DATA to the data folder)"
fi
