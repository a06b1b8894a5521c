#pragma once
// A number as error messages print it: %g, six significant digits (std::to_string prints "%f", 300
// digits for 1e300 and 0.000000 for 1e-9).
#include <cstdio>
#include <string>

namespace linalg_cuda::detail {

inline std::string readable(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace linalg_cuda::detail
