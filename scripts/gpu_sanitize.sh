#!/usr/bin/env bash
# Runs one compute-sanitizer tool over one packed test suite on the GPU machine, a GoogleTest group
# (the part of a test's name before the dot) per process, so that one slow group does not hide the
# others' results. Run from the packed folder (scripts/gpu_pack.sh), like gpu_run.sh:
#
#   bash gpu_sanitize.sh TOOL SUITE [FILTER]     TOOL: memcheck | racecheck | initcheck | synccheck
#                                                SUITE: linalg_cuda | gridmap_cuda | ompl_cuda | ceres_cuda
#                                                FILTER: a --gtest_filter (default '*'); groups with no
#                                                test in it are not started
#
# Each group gets GROUP_SECONDS (default 120) under `timeout`. One line per group: its tests passed,
# failed and skipped, the tool's summary, the seconds, and for a group cut off the test it was in.
# LAUNCHES=N samples instead, for groups that launch too many kernels for the tool (tens of thousands
# of CG iterations): each test runs alone and the tool checks its first N launches (--launch-count);
# then, for each kernel no test launched among its first N, a test that launches it runs again with
# the tool restricted to those kernels (--kernel-name kns=...), again for N launches. Each test also
# runs without the tool under the kernel timeline (bench/libkernel_timeline.so, packed by
# gpu_pack.sh), which tells the kernels it launches and in what order; the line says how many of the
# group's kernels the tool checked, and the log names the others.
# Logs go to $OUT/sanitize/TOOL_SUITE/; the exit status is 1 if any group failed, reported an error
# or hazard, or was cut off. The tools need the memory cache off to see a block's reuse
# (LINALG_CUDA_MEMORY_CACHE=0, set here) and, for racecheck and synccheck, the CG loops launched from
# the host (LINALG_CUDA_CG_HOST_LOOP=1 CERES_CUDA_PCG_HOST_LOOP=1, set here): docs/reliability.md says why.
set -uo pipefail
tool=${1:?tool}
suite=${2:?suite}
filter=${3:-*}
seconds=${GROUP_SECONDS:-120}
bash unpack.sh >/dev/null || exit 1
export CUDA_SOLVERS_DATA=${CUDA_SOLVERS_DATA:-$PWD/data}
export LD_LIBRARY_PATH=$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LINALG_CUDA_MEMORY_CACHE=0
case $tool in
  racecheck | synccheck) export LINALG_CUDA_CG_HOST_LOOP=1 CERES_CUDA_PCG_HOST_LOOP=1 ;;
esac
# cuSPARSE's csrmv kernel reports barrier errors and races of its own (docs/reliability.md).
exclude=()
[[ $tool == racecheck || $tool == synccheck ]] && exclude=(--kernel-name-exclude kns=csrmv)
binary=tests/$suite/${suite}_test
logs=${OUT:-out}/sanitize/${tool}_$suite
mkdir -p "$logs"
# The tests the filter selects, as "group test" lines in the suite's order.
tests=$("$binary" --gtest_list_tests --gtest_filter="$filter" |
  awk '/^[^ ]/ {group = $1; sub(/\.$/, "", group); next} /^  / {print group, $1}')
groups=$(awk '{print $1}' <<<"$tests" | uniq)
status=0
sanitize() {  # log, filter, extra tool options...: runs the tool, appends to the log, returns its exit
  local log=$1 filter=$2
  shift 2
  timeout "$seconds" compute-sanitizer --tool "$tool" --error-exitcode 3 --require-cuda-init=no "${exclude[@]}" "$@" \
    "$binary" --gtest_filter="$filter" >>"$log" 2>&1
}
printf '%-36s %-26s %-60s %s\n' group tests "$tool" seconds
for group in $groups; do
  log=$logs/${group//\//_}.log
  : >"$log"
  filter=$(awk -v g="$group" '$1 == g {print g "." $2}' <<<"$tests" | paste -sd:)
  start=$SECONDS
  note=""
  if [[ -n ${LAUNCHES:-} ]]; then
    : >"$logs/checked"
    code=0
    index=0
    for test in ${filter//:/ }; do
      index=$((index + 1))
      echo "== $test" >>"$log"
      rm -f "$logs/kernels.csv"
      CUDA_INJECTION64_PATH=$PWD/bench/libkernel_timeline.so KERNEL_TIMELINE_CSV=$logs/kernels.csv \
        timeout "$seconds" "$binary" --gtest_filter="$test" >/dev/null 2>&1
      # Kernel names in launch order, less those the tool leaves out.
      tail -n +2 "$logs/kernels.csv" 2>/dev/null | sort -t, -k2,2n | cut -d, -f1 | grep -v csrmv >"$logs/order.$index" || true
      head -n "$LAUNCHES" "$logs/order.$index" >>"$logs/checked"
      sanitize "$log" "$test" --launch-count "$LAUNCHES" || code=$?
    done
    launched=$(cat "$logs"/order.* | sort -u)
    # The second pass: each kernel not yet checked, by name (a name of one word, such as a library's
    # "kernel", would match every kernel and stays unchecked).
    index=0
    for test in ${filter//:/ }; do
      index=$((index + 1))
      wanted=$(comm -23 <(sort -u "$logs/order.$index") <(sort -u "$logs/checked") | grep -E '::|_')
      [[ -n $wanted ]] || continue
      echo "== $test, only $(paste -sd' ' <<<"$wanted")" >>"$log"
      names=()
      for kernel in $wanted; do names+=(--kernel-name "kns=${kernel##*::}"); done
      grep -Fxf <(echo "$wanted") "$logs/order.$index" | head -n "$LAUNCHES" >>"$logs/checked"
      sanitize "$log" "$test" "${names[@]}" --launch-count "$LAUNCHES" || code=$?
    done
    unchecked=$(comm -23 <(echo "$launched") <(sort -u "$logs/checked"))
    echo "== kernels launched but not checked: $(paste -sd' ' <<<"${unchecked:-none}")" >>"$log"
    note="$(comm -12 <(echo "$launched") <(sort -u "$logs/checked") | grep -c .) of $(grep -c . <<<"$launched") kernels checked"
    rm -f "$logs"/order.*
  else
    sanitize "$log" "$filter"
    code=$?
  fi
  # Tests by name: in sampling, a test can run twice.
  passed=$(grep '^\[       OK \]' "$log" | awk '{print $4}' | sort -u | grep -c .)
  failed=$(grep '^\[  FAILED  \] .*(' "$log" | awk '{print $4}' | sort -u | grep -c .)
  skipped=$(grep '^\[  SKIPPED \] .*(' "$log" | awk '{print $4}' | sort -u | grep -c .)
  # One summary per tool process; the worst one stands for the group.
  summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | sed 's/^========= //' | sort -u | sort -t: -k2 -n | tail -n 1)
  [[ -n $summary ]] || ! grep -q 'terminated before first instrumented API call' "$log" || summary="no CUDA call"
  if ((code == 124)); then
    note="cut off in $(grep '^\[ RUN      \]' "$log" | tail -n 1 | awk '{print $NF}') $note"
    status=1
  elif ((code != 0)); then
    note="exit $code $note"
    status=1
  fi
  printf '%-36s %-26s %-60s %4d %s\n' "$group" "$passed ok, $failed failed, $skipped skip" \
    "${summary:-no summary}" $((SECONDS - start)) "$note"
done
rm -f "$logs/kernels.csv" "$logs/checked"
exit $status
