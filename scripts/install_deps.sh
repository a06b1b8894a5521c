#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test the project (Debian packages only).
# The CUDA 13 toolkit is expected in /usr/local/cuda (or nvcc on PATH); it is not an apt package here.
set -euo pipefail
# The Boost libraries are OMPL's: its CMake configuration links them by path. `file` is used by
# ../shared/device/pack (scripts/gpu_pack.sh) to find the binaries to pack. scripts/fuzz.sh builds with
# clang and libFuzzer: libclang-rt-14-dev holds libFuzzer and the sanitizer runtimes (clang only
# recommends it), llvm the symbolizer of the sanitizers' stack traces, bzip2 the tool that makes the
# compressed seeds; its ceres_cuda::Solve harness builds the library with make and LLVM's OpenMP, and
# python3 cuts its seeds from the BAL files. scripts/tsan.sh builds with clang 14 and LLVM's OpenMP
# runtime: libomp-14-dev holds libomp and Archer (libarcher.so), its OpenMP tool for ThreadSanitizer.
# ompl_cuda reads robot descriptions with urdfdom (URDF), tinyxml2 (SRDF), assimp (meshes) and
# yaml-cpp (MoveIt scenes); its tests check the forward kinematics against KDL's, built from the URDF
# by kdl_parser, and run plan_robot's page with Node.js. FCL (libfcl-dev), MoveIt's collision library,
# is the anchor the robot checks are tested and benchmarked against (bench/fcl_robot_checker.h).
# ceres_cuda's COLMAP model tests check what it writes and reads with COLMAP's own model_converter.
packages=(cmake ninja-build g++ pkg-config libeigen3-dev libceres-dev libompl-dev libgtest-dev libgmock-dev
          liburdfdom-dev libtinyxml2-dev libassimp-dev libyaml-cpp-dev liborocos-kdl-dev libkdl-parser-dev nodejs
          libfcl-dev colmap
          zlib1g-dev libbz2-dev libpng-dev file
          libboost-serialization-dev libboost-filesystem-dev libboost-system-dev
          clang libclang-rt-14-dev llvm bzip2 libomp-14-dev make python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "error: the CUDA toolkit (nvcc) was not found in PATH or /usr/local/cuda" >&2
  exit 1
fi
