#!/usr/bin/env bash
# Fuzzes the library's file readers and ceres_cuda::Solve: builds the libFuzzer harnesses
# fuzz/*_fuzzer.cpp with clang, AddressSanitizer and UndefinedBehaviorSanitizer into
# ${FUZZ_BUILD_DIR:-build-fuzz}, replays the inputs that once crashed (fuzz/regressions/<harness>/),
# assembles each corpus (the hand-written seeds in fuzz/seeds/<harness>/ and small inputs cut from
# ../shared/data or $CUDA_SOLVERS_DATA) and runs each harness for SECONDS (default 60; the Solve
# harness for $FUZZ_SOLVE_SECONDS when set). Exits non-zero on any finding (crash, sanitizer report,
# uncaught exception, leak, a run over -timeout or over -rss_limit_mb, a solve that ends otherwise than
# ceres::Solve where it must not) and prints the reproducer's path.
# Usage: scripts/fuzz.sh [SECONDS_PER_HARNESS]   (docs/reliability.md, "Fuzzing")
#
# The readers' harnesses are three direct clang++ commands, not a CMake project: each compiles only
# the one or two reader sources it needs (none includes a CUDA header), and the main project's
# configuration needs OMPL and g++, which a fuzzing build does not want. The Solve harness needs all of
# ceres_cuda and linalg_cuda, .cu files included: fuzz/ceres_cuda_solve_fuzzer.mk builds them (the .cu
# files with nvcc and clang++ as its host compiler) and keeps the objects, so that a second run
# compiles only what changed; it builds while the readers' harnesses fuzz, with FUZZ_JOBS jobs (1
# beside them, 2 alone). The growing corpus is kept in $FUZZ_BUILD_DIR/corpus/<harness>/ between
# runs; the seeds are rebuilt every run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
data=${CUDA_SOLVERS_DATA:-../shared/data}
cxx=${FUZZ_CXX:-clang++}
command -v "$cxx" >/dev/null || { echo "error: $cxx not found (scripts/install_deps.sh installs clang)" >&2; exit 1; }
mkdir -p "$build"

flags=(-std=c++17 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -Ifuzz -Ilinalg_cuda/include -Ilinalg_cuda/internal/include -I/usr/include/eigen3)
# FUZZ_HARNESSES="name ..." builds and runs only those.
all_harnesses="linalg_cuda_matrix_market_fuzzer gridmap_cuda_carmen_log_fuzzer ceres_cuda_bal_problem_fuzzer"
all_harnesses+=" ceres_cuda_colmap_model_fuzzer"
all_harnesses+=" ompl_cuda_point_cloud_fuzzer ompl_cuda_urdf_fuzzer ompl_cuda_srdf_fuzzer ompl_cuda_scene_fuzzer"
all_harnesses+=" ompl_cuda_sphere_file_fuzzer"
all_harnesses+=" ceres_cuda_solve_fuzzer"
read -r -a harnesses <<< "${FUZZ_HARNESSES:-$all_harnesses}"
# Longest input per harness: room for a few hundred Matrix Market entries or BAL observations, for a
# few CARMEN lines of 361 readings (about 2.5 KB each), for a problem of 40 residual blocks with
# every value a raw double (a few KB), for the Panda's URDF and SRDF without comments and visuals
# (6 KB, 5 KB), MotionBenchMaker's largest scene (5 KB) and a COLMAP model of a few images and points.
declare -A max_len=([linalg_cuda_matrix_market_fuzzer]=8192 [gridmap_cuda_carmen_log_fuzzer]=16384
                    [ceres_cuda_bal_problem_fuzzer]=8192 [ceres_cuda_colmap_model_fuzzer]=4096
                    [ceres_cuda_solve_fuzzer]=4096
                    [ompl_cuda_point_cloud_fuzzer]=4096 [ompl_cuda_urdf_fuzzer]=8192 [ompl_cuda_srdf_fuzzer]=8192
                    [ompl_cuda_scene_fuzzer]=8192 [ompl_cuda_sphere_file_fuzzer]=4096)
declare -A harness_seconds=([ceres_cuda_solve_fuzzer]=${FUZZ_SOLVE_SECONDS:-$seconds})
selected() { [[ " ${harnesses[*]} " == *" $1 "* ]]; }

build_harness() {
  local name=$1; shift
  selected "$name" || return 0
  echo "== building $name"
  "$cxx" "${flags[@]}" "fuzz/$name.cpp" "$@" -o "$build/$name"
}
build_harness linalg_cuda_matrix_market_fuzzer linalg_cuda/src/matrix_market.cpp
build_harness gridmap_cuda_carmen_log_fuzzer -Igridmap_cuda/include gridmap_cuda/src/carmen_log.cpp -lz
# bal_problem.cpp also holds BALProblem::add_to, which names Ceres' Problem and the library's cost
# function: linking libceres and that one source keeps the reader's file as it is.
build_harness ceres_cuda_bal_problem_fuzzer -Iceres_cuda/include ceres_cuda/src/bal_problem.cpp \
  ceres_cuda/src/snavely_reprojection_error.cpp -lceres -lglog -lbz2
build_harness ceres_cuda_colmap_model_fuzzer -Iceres_cuda/include ceres_cuda/src/colmap_model.cpp \
  ceres_cuda/src/colmap_model_text.cpp ceres_cuda/src/colmap_model_binary.cpp ceres_cuda/src/binary_reader.cpp \
  ceres_cuda/src/colmap_model_validation.cpp -fopenmp
build_harness ompl_cuda_point_cloud_fuzzer -Iompl_cuda/include ompl_cuda/src/point_cloud.cpp
# The robot description readers: the URDF and SRDF through urdfdom (which parses with TinyXML) and
# tinyxml2; the sphere file reader reads against a robot read from a URDF.
robot_model=(-Iompl_cuda/include ompl_cuda/src/robot_model_reader.cpp ompl_cuda/src/robot_model.cpp
             ompl_cuda/src/package_path.cpp -lurdfdom_model -ltinyxml2 -lconsole_bridge)
build_harness ompl_cuda_urdf_fuzzer "${robot_model[@]}"
build_harness ompl_cuda_srdf_fuzzer "${robot_model[@]}"
build_harness ompl_cuda_scene_fuzzer -Iompl_cuda/include ompl_cuda/src/scene.cpp ompl_cuda/src/robot_model.cpp -lyaml-cpp
build_harness ompl_cuda_sphere_file_fuzzer ompl_cuda/src/sphere_file.cpp "${robot_model[@]}"
# The Solve harness' build takes minutes: it runs in the background, one job (FUZZ_JOBS) beside the
# readers' harnesses as they fuzz on the other core, and the Solve harness' run waits for it.
solve_build_pid=
solve_build_log=$build/logs/ceres_cuda_solve_fuzzer.build.log
if selected ceres_cuda_solve_fuzzer; then
  solve_jobs=${FUZZ_JOBS:-$(( ${#harnesses[@]} > 1 ? 1 : 2 ))}
  echo "== building ceres_cuda_solve_fuzzer in the background ($solve_jobs job(s); log: $solve_build_log)"
  mkdir -p "$build/logs"
  # Its own process group (setsid), so that an exit before the wait stops the whole build.
  setsid bash -c 'start=$SECONDS; make --no-print-directory -f fuzz/ceres_cuda_solve_fuzzer.mk "$@" &&
                  echo "built in $((SECONDS - start)) s"' build BUILD="$build" CXX="$cxx" -j"$solve_jobs" \
    > "$solve_build_log" 2>&1 &
  solve_build_pid=$!
  trap '[[ -z $solve_build_pid ]] || kill -- "-$solve_build_pid" 2>/dev/null || true' EXIT
fi
wait_for_solve_build() {
  [[ -n $solve_build_pid ]] || return 0
  local pid=$solve_build_pid
  solve_build_pid=
  if wait "$pid"; then
    echo "== ceres_cuda_solve_fuzzer $(tail -n 1 "$solve_build_log")"
    return 0
  fi
  tail -n 40 "$solve_build_log"
  echo "error: ceres_cuda_solve_fuzzer did not build (log: $solve_build_log)"
  return 1
}

# Seeds cut from the shared data: small, valid inputs of each format, so that the fuzzer starts past
# the header checks. Missing data only makes the corpus smaller.
seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{linalg_cuda_matrix_market_fuzzer,gridmap_cuda_carmen_log_fuzzer,ceres_cuda_bal_problem_fuzzer}
mkdir -p "$seeds"/ceres_cuda_solve_fuzzer "$seeds"/ceres_cuda_colmap_model_fuzzer "$seeds"/ompl_cuda_point_cloud_fuzzer
mkdir -p "$seeds"/{ompl_cuda_urdf_fuzzer,ompl_cuda_srdf_fuzzer,ompl_cuda_scene_fuzzer,ompl_cuda_sphere_file_fuzzer}
if [[ -d $data ]]; then
  for f in "$data"/matrices/*.mtx; do
    [[ -f $f ]] || continue
    for k in 8 60; do   # the banner, the comments, the first k entries and a size line that fits them
      awk -v k="$k" 'NR == 1 || /^%/ { print; next }
                     !sized { sized = 1; rows = $1; cols = $2; next }
                     n < k { entry[n++] = $0 }
                     END { print rows, cols, n; for (i = 0; i < n; ++i) print entry[i] }' "$f" \
        > "$seeds/linalg_cuda_matrix_market_fuzzer/$(basename "$f" .mtx)_$k.mtx"
    done
  done
  for f in "$data"/carmen/*.log.gz; do
    [[ -f $f ]] || continue
    base=$seeds/gridmap_cuda_carmen_log_fuzzer/$(basename "$f" .log.gz)
    # pipefail: head closing the pipe early makes zcat fail; that is expected here.
    { zcat "$f" | head -n 12 > "${base}_head.log"; } || true
    { zcat "$f" | grep -m 3 '^FLASER' > "${base}_flaser.log"; } || true
    gzip -c -1 "${base}_flaser.log" > "${base}_flaser.log.gz"
  done
  # BAL: the first k observations with their cameras and points renumbered from 0, a consistent
  # problem of a few hundred values (the real files' cameras and points follow all observations).
  cut_bal() {
    awk -v k="$1" '
      BEGIN { used_cameras = 0; used_points = 0; value = 0; seen = 0 }
      NF == 0 { next }
      NR == 1 { cameras = $1; points = $2; observations = $3; next }
      seen < observations {
        ++seen
        if (seen <= k) {
          if (!($1 in camera)) { camera[$1] = used_cameras; camera_of[used_cameras++] = $1 }
          if (!($2 in point)) { point[$2] = used_points; point_of[used_points++] = $2 }
          line[seen] = camera[$1] " " point[$2] " " $3 " " $4
        }
        next
      }
      {
        for (i = 1; i <= NF; ++i) {
          if (value < 9 * cameras) {
            c = int(value / 9)
            if (c in camera) camera_value[camera[c], value % 9] = $i
          } else {
            p = int((value - 9 * cameras) / 3)
            if (p in point) point_value[point[p], (value - 9 * cameras) % 3] = $i
          }
          ++value
        }
      }
      END {
        n = seen < k ? seen : k
        print used_cameras, used_points, n
        for (o = 1; o <= n; ++o) print line[o]
        for (c = 0; c < used_cameras; ++c)
          for (j = 0; j < 9; ++j) print camera_value[c, j]
        for (p = 0; p < used_points; ++p) print point_value[p, 0], point_value[p, 1], point_value[p, 2]
      }'
  }
  for f in "$data"/bal/*.txt "$data"/bal/*.txt.bz2; do
    [[ -f $f ]] || continue
    base=$seeds/ceres_cuda_bal_problem_fuzzer/$(basename "$f" | sed 's/\.txt\(\.bz2\)\?$//')
    for k in 10 40; do
      if [[ $f == *.bz2 ]]; then bzcat "$f" | cut_bal "$k"; else cut_bal "$k" < "$f"; fi > "${base}_$k.txt"
    done
    bzip2 -c "${base}_10.txt" > "${base}_10.txt.bz2"
  done
  # Solve: the first observations of each BAL file whose cameras and points fit (8 of each, 40
  # observations), as the fast path's shape and on the general engine (the seed script's --bal).
  bal_files=("$data"/bal/*.txt "$data"/bal/*.txt.bz2)
  bal_args=()
  for f in "${bal_files[@]}"; do [[ -f $f ]] && bal_args+=(--bal "$f"); done
  if selected ceres_cuda_solve_fuzzer && ((${#bal_args[@]})); then
    if command -v python3 >/dev/null; then
      python3 fuzz/ceres_cuda_solve_fuzzer_seeds.py "${bal_args[@]}" "$seeds/ceres_cuda_solve_fuzzer"
    else
      echo "note: python3 not found; the Solve harness starts without seeds cut from BAL files"
    fi
  fi
  # The Panda's URDF and SRDF without comments and (URDF) visuals, within max_len; its collision meshes
  # named as the mesh that the URDF harness' scratch folder holds. MotionBenchMaker's scene and problem
  # files as they are (kilobytes).
  panda=$data/robots/robowflex_resources/panda
  if [[ -f $panda/urdf/panda.urdf ]]; then
    perl -0pe 's/<!--.*?-->//gs; s#<visual>.*?</visual>##gs; s/\n\s*\n/\n/g;
               s#package://robowflex_resources/panda/meshes/collision/\w+\.stl#package://fuzz/mesh.stl#g' \
      "$panda/urdf/panda.urdf" > "$seeds/ompl_cuda_urdf_fuzzer/panda.urdf"
  fi
  if [[ -f $panda/config/panda.srdf ]]; then
    perl -0pe 's/<!--.*?-->//gs; s/\n\s*\n/\n/g' "$panda/config/panda.srdf" > "$seeds/ompl_cuda_srdf_fuzzer/panda.srdf"
  fi
  for f in "$data"/scenes/*.yaml "$data"/scenes/*/scene_*.yaml; do
    if [[ -f $f ]]; then cp "$f" "$seeds/ompl_cuda_scene_fuzzer/"; fi
  done
else
  echo "note: $data not found; the corpora start from fuzz/seeds only"
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
# The Solve harness prints at exit how many inputs reached each of its checks.
export CERES_CUDA_SOLVE_FUZZER_STATS=${CERES_CUDA_SOLVE_FUZZER_STATS:-1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
symbolizer=$(command -v llvm-symbolizer || true)
[[ -n $symbolizer ]] && export ASAN_SYMBOLIZER_PATH=$symbolizer

status=0
summary=()
for h in "${harnesses[@]}"; do
  if [[ $h == ceres_cuda_solve_fuzzer ]] && ! wait_for_solve_build; then
    status=1
    continue
  fi
  findings=$build/findings/$h
  mkdir -p "$build/corpus/$h" "$findings" "$build/logs"
  options=(-timeout=5 -rss_limit_mb=1024 -max_len="${max_len[$h]}" -dict="fuzz/$h.dict" -print_final_stats=1
           -artifact_prefix="$findings/")
  # The inputs that once crashed must now be read without a finding.
  if compgen -G "fuzz/regressions/$h/*" >/dev/null; then
    echo "== $h: replaying fuzz/regressions/$h"
    if ! "$build/$h" -timeout=5 -rss_limit_mb=1024 fuzz/regressions/"$h"/* > "$build/logs/$h.regressions.log" 2>&1; then
      tail -n 40 "$build/logs/$h.regressions.log"
      echo "FINDING: $h fails on a regression input (log: $build/logs/$h.regressions.log)"
      status=1
      continue
    fi
  fi
  run_seconds=${harness_seconds[$h]:-$seconds}
  echo "== $h: fuzzing for $run_seconds s"
  log=$build/logs/$h.log
  rm -f "$findings"/*
  if "$build/$h" "${options[@]}" -max_total_time="$run_seconds" "$build/corpus/$h" "fuzz/seeds/$h" "$seeds/$h" \
       > "$log" 2>&1; then
    final=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)
    files=$(find "$build/corpus/$h" -type f | wc -l)
    bytes=$(find "$build/corpus/$h" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
    summary+=("$h: ${final:-no DONE line} | corpus $files files, $bytes bytes")
    checks=$(grep -m 1 '^ceres_cuda_solve_fuzzer: ' "$log" || true)  # what its inputs reached
    if [[ -n $checks ]]; then summary+=("  $checks"); fi
  else
    tail -n 60 "$log"
    for reproducer in "$findings"/*; do
      [[ -e $reproducer ]] && echo "FINDING: $h: reproduce with $build/$h $reproducer"
    done
    echo "FINDING: $h stopped with a finding (log: $log)"
    status=1
  fi
done
printf '%s\n' "${summary[@]}"
exit $status
