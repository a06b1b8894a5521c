#pragma once
// The distances of the OMPL spaces that BatchedRRTstar searches itself, written once for the CPU
// reference and the GPU. Neighbours are ranked by a key that orders states as the space's distance()
// does: the squared Euclidean distance for RealVectorStateSpace (sqrt is monotone, so it is skipped),
// the weighted sum of SO2 distances for a CompoundStateSpace of SO2StateSpace (OMPL's own formula,
// term by term in the same order).
#include <math.h>

#include "linalg_cuda/internal/host_device.h"

namespace ompl_cuda::detail {

enum class MetricKind : int {
  kEuclidean = 0,  // RealVectorStateSpace::distance
  kSO2Sum = 1,     // CompoundStateSpace::distance over SO2StateSpace components
};

struct MetricView {
  MetricKind kind;
  int dimension;
  const double* weights;  // per component (kSO2Sum)
};

// OMPL's SO2StateSpace::distance.
LINALG_HD double so2_distance(double a, double b) {
  constexpr double kPi = 3.14159265358979323846;
  const double d = fabs(a - b);
  return d > kPi ? 2.0 * kPi - d : d;
}

// The ranking key between states a and b; coordinate c is a(c), b(c).
template <typename A, typename B>
LINALG_HD double metric_key(const MetricView& m, const A& a, const B& b) {
  double key = 0.0;
  if (m.kind == MetricKind::kEuclidean) {
    for (int c = 0; c < m.dimension; ++c) {
      const double diff = a(c) - b(c);
      key += diff * diff;
    }
  } else {
    for (int c = 0; c < m.dimension; ++c) key += m.weights[c] * so2_distance(a(c), b(c));
  }
  return key;
}

}  // namespace ompl_cuda::detail
