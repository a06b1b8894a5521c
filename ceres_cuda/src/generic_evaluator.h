#pragma once
// Evaluation of any ceres::CostFunction / LossFunction on CPU threads (OpenMP): residuals and
// Jacobians of every residual block in the natural block layout, with the loss applied as Ceres'
// Corrector does, and the cost summed in residual order (the same bits for any thread count): the BAL
// CPU engine's evaluation.
#include <vector>

#include "ba_index.h"
#include "ba_layout.h"

namespace ceres_cuda::detail {

class GenericEvaluator {
 public:
  GenericEvaluator(const BaLayout& layout, const BaIndex& index, int threads);
  // cameras / points: all of the layout's blocks (variable first), natural layout. f: R x m,
  // F: R x (m x c) and E: R x (m x 3) row-major per residual (left untouched for constant blocks);
  // F and E null for residuals only. False when a cost function fails or returns NaN/Inf.
  bool evaluate(const double* cameras, const double* points, double* f, double* F, double* E, double* cost);

 private:
  const BaLayout& layout_;
  const BaIndex& index_;
  int threads_;
  std::vector<double> cost_;
};

}  // namespace ceres_cuda::detail
