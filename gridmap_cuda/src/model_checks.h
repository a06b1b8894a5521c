#pragma once
// The checks both sensor models' validate() make of their fields, with one wording.
#include <cmath>
#include <string>

#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/readable.h"

namespace gridmap_cuda::detail {

// Throws "MODEL: NAME = P must lie strictly between 0 and 1" unless 0 < p < 1.
inline void require_probability(const char* model, double p, const char* name) {
  if (!(p > 0.0 && p < 1.0))
    throw linalg_cuda::InvalidArgument(std::string(model) + ": " + name + " = " + linalg_cuda::detail::readable(p) +
                                       " must lie strictly between 0 and 1");
}

// Throws "MODEL: NAME = D must be a finite distance >= 0" unless d is one.
inline void require_distance(const char* model, double d, const char* name) {
  if (!std::isfinite(d) || d < 0.0)
    throw linalg_cuda::InvalidArgument(std::string(model) + ": " + name + " = " + linalg_cuda::detail::readable(d) +
                                       " must be a finite distance >= 0");
}

}  // namespace gridmap_cuda::detail
