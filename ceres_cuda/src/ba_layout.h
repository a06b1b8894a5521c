#pragma once
// The bundle-adjustment shape of a ceres::Problem, as ceres_cuda::Solve sees it: which parameter
// blocks are cameras and which are points, which of them vary, and how residual blocks connect them.
// analyze_problem() builds it, or says why the problem (or the options) is not one Solve can take,
// in which case Solve hands the problem to ceres::Solve.
#include <ceres/problem.h>
#include <ceres/solver.h>

#include <string>
#include <vector>

#include "robust_loss.h"

namespace ceres_cuda::detail {

constexpr int kPointSize = 3;
constexpr int kMaxCameraSize = 16;
constexpr int kMaxResidualSize = 8;

struct BaResidual {
  // Members left uninitialised: analyze_problem() makes a vector of millions of these and fills it on
  // all threads, which a zero-fill on one thread first (value-initialisation) would double.
  BaResidual() {}
  BaResidual(ceres::ResidualBlockId id, const ceres::CostFunction* cost, const ceres::LossFunction* loss, int camera,
             int point, bool camera_first)
      : id(id), cost(cost), loss(loss), camera(camera), point(point), camera_first(camera_first) {}

  ceres::ResidualBlockId id;
  const ceres::CostFunction* cost;
  const ceres::LossFunction* loss;
  int camera;         // index into BaLayout::cameras (variable ones first)
  int point;          // index into BaLayout::points (variable ones first)
  bool camera_first;  // the camera is the cost function's parameter 0
};

struct BaLayout {
  int camera_size = 0;
  int residual_size = 0;
  std::vector<double*> cameras;  // user memory; [0, variable_cameras) vary, the rest are constant
  std::vector<double*> points;   // likewise, [0, variable_points) vary
  int variable_cameras = 0;
  int variable_points = 0;
  std::vector<BaResidual> residuals;        // at least one of its blocks varies
  std::vector<BaResidual> fixed_residuals;  // both blocks constant: only their (fixed) cost counts
  int num_parameter_blocks = 0;             // as the problem has them (ceres' Summary counts)
  int num_parameters = 0;
  int num_residuals = 0;                    // scalar residuals of all blocks

  // Fast path: every residual is a SnavelyReprojectionError with the camera first, and all share one
  // built-in loss (or none); then observations holds x, y per residual.
  bool snavely = false;
  std::vector<double> observations;
  BuiltinLoss loss;  // kind None when no loss (valid only with snavely)

  // Without an ordering, each camera's and point's place in Ceres' program order (2 x the problem
  // order of its first residual + its slot there), by index; empty with one. Ceres breaks ties of its
  // e-block choice by it (BaIndex::cameras_ceres_eliminates).
  std::vector<int> camera_position, point_position;

  bool camera_is_variable(int c) const { return c < variable_cameras; }
  bool point_is_variable(int p) const { return p < variable_points; }
};

// "" when the problem and options fit; otherwise the reason, for the log and the summary. With
// fast_path_only, a problem off the fast path (layout->snavely false) does not fit either, and the
// analysis says so as soon as its first residual block tells (ceres_cuda::Solve gives the others to the
// general engine, and the pass over millions of residuals would be wasted).
std::string analyze_problem(const ceres::Solver::Options& options, ceres::Problem* problem, BaLayout* layout,
                            bool fast_path_only = false);

}  // namespace ceres_cuda::detail
