#pragma once
// Helpers shared by the test suites: GPU tests skip (and say why) only when no CUDA device exists,
// and data-driven tests find ../shared/data or $CUDA_SOLVERS_DATA.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "linalg_cuda/backend.h"

#define REQUIRE_CUDA_DEVICE()                                                           \
  do {                                                                                  \
    if (!::linalg_cuda::cuda_device_available()) GTEST_SKIP() << "no CUDA device";      \
  } while (0)

namespace test_support {

// Folder with bal/, carmen/, matrices/: $CUDA_SOLVERS_DATA, else the one configured at build time.
inline std::filesystem::path data_dir() {
  if (const char* env = std::getenv("CUDA_SOLVERS_DATA")) return env;
  return CUDA_SOLVERS_DATA_DIR;
}

}  // namespace test_support
