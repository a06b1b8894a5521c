#pragma once
// The bundle adjustment COLMAP runs on a sparse model (`colmap bundle_adjuster`, COLMAP 3.8's
// BundleAdjustmentController and BundleAdjuster), built over a ColmapModel so that any solver can run
// it: ceres::Solve, ceres_cuda::Solve on the GPU or the CPU.
//
//   ceres_cuda::ColmapModel model = ceres_cuda::ColmapModel::read("sparse/0");
//   ceres_cuda::colmap_filter_observations_with_negative_depth(&model);
//   ceres_cuda::ColmapBundleAdjuster adjuster(&model, ceres_cuda::ColmapBundleAdjustmentOptions());
//   ceres::Solver::Summary summary;
//   adjuster.Solve(adjuster.solver_options(), &summary);  // ceres_cuda::Solve; refines `model`
//   ceres_cuda::colmap_update_point_errors(&model);
//   model.write_binary("refined");
//
// The problem is COLMAP's: one ColmapReprojectionError per image point that observes a 3-D point, over
// the image's qvec (ceres::QuaternionManifold) and tvec, its camera's parameters and the point. The
// first image of the registration order keeps its pose and the second its x translation (COLMAP's
// gauge). Camera parameters not refined are held by a ceres::SubsetManifold, or the whole block is
// constant. The points form the Schur complement's eliminated group.
#include <ceres/loss_function.h>
#include <ceres/problem.h>
#include <ceres/solver.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>

#include "ceres_cuda/colmap_model.h"
#include "ceres_cuda/colmap_reprojection_error.h"
#include "ceres_cuda/solve.h"

namespace ceres_cuda {

// COLMAP's BundleAdjustmentOptions with its defaults, and the same flags' names in colmap_ba.
struct ColmapBundleAdjustmentOptions {
  enum class LossFunctionType { Trivial, SoftL1, Cauchy };
  LossFunctionType loss_function_type = LossFunctionType::Trivial;
  double loss_function_scale = 1.0;  // a of ceres::SoftLOneLoss or CauchyLoss (positive)

  bool refine_focal_length = true;
  bool refine_principal_point = false;
  bool refine_extra_params = true;
  bool refine_extrinsics = true;  // false: every pose constant

  // Held constant beyond COLMAP's gauge (BundleAdjustmentConfig's constant poses, cameras and points).
  std::set<std::uint32_t> constant_pose_images;
  std::set<std::uint32_t> constant_cameras;
  std::set<std::uint64_t> constant_points;

  // Problems with fewer residuals run on one thread, as COLMAP's do.
  int min_num_residuals_for_multi_threading = 50000;

  // COLMAP's: no function, gradient or parameter tolerance, 100 iterations, 200 linear solver
  // iterations, 10 consecutive invalid or non-monotonic steps, all hardware threads.
  ceres::Solver::Options solver_options;

  ColmapBundleAdjustmentOptions();
};

// Removes the observations of points at a depth below DBL_EPSILON in their image, and the points left
// with fewer than two observations (Reconstruction::FilterObservationsWithNegativeDepth, which COLMAP's
// bundle_adjuster runs first). Returns how many observations it removed.
std::size_t colmap_filter_observations_with_negative_depth(ColmapModel* model);

class ColmapBundleAdjuster {
 public:
  // Builds the problem over `model`, which must outlive the adjuster and which the solve refines in
  // place (its quaternions are scaled to unit length first). Throws linalg_cuda::InvalidArgument when
  // the model does not validate(), has fewer than two images, or has a camera whose model
  // ColmapReprojectionError does not take (naming the camera and its model), or when a SoftL1 or
  // Cauchy loss has no positive scale.
  ColmapBundleAdjuster(ColmapModel* model, const ColmapBundleAdjustmentOptions& options);
  ~ColmapBundleAdjuster();

  // The problem as a ceres::Problem (for ceres::Solve or any of Ceres' API), built on the first call:
  // seconds at millions of observations, which Solve below does without.
  ceres::Problem& problem();
  // ceres_cuda::Solve of the problem, its analysis reading the adjuster's own arrays instead of a
  // ceres::Problem: the same Summary as ceres_cuda::Solve(options, &problem(), summary, ...). Where
  // ceres_cuda hands the problem to ceres::Solve, problem() is built for it.
  void Solve(const ceres::Solver::Options& options, ceres::Solver::Summary* summary,
             const SolveOptions& solve_options = SolveOptions(), SolveDetails* details = nullptr);

  // options.solver_options with COLMAP's choices for this problem: DENSE_SCHUR up to 50 images,
  // SPARSE_SCHUR up to 1000 (where a sparse library is configured), ITERATIVE_SCHUR with SCHUR_JACOBI
  // beyond; one thread below min_num_residuals_for_multi_threading residuals; the points eliminated.
  ceres::Solver::Options solver_options() const;

  std::size_t num_images() const { return num_images_; }  // with at least one observation
  std::size_t num_residual_blocks() const { return num_observations_; }

 private:
  struct Blocks;  // the residual and parameter blocks, in the problem's order (the .cpp's)
  class Source;   // what ceres_cuda's analysis reads of them

  ColmapBundleAdjustmentOptions options_;
  // Declared before the problem, which refers to them, so that they outlive it.
  std::unique_ptr<ceres::LossFunction> loss_;
  std::unique_ptr<Blocks> blocks_;
  std::unique_ptr<ceres::Problem> problem_;  // built by problem()
  std::shared_ptr<ceres::ParameterBlockOrdering> ordering_;  // points in group 0, the rest in group 1
  std::size_t num_images_ = 0, num_observations_ = 0;
};

// Each 3-D point's error: the mean distance in pixels between its observations and their projections
// (a projection behind the camera counts as sqrt(DBL_MAX)), as COLMAP computes it when it filters
// points. COLMAP's bundle_adjuster leaves the errors as they were; colmap_ba updates them. Returns the
// number of observations whose point lies behind their camera.
std::size_t colmap_update_point_errors(ColmapModel* model);

// What `colmap model_analyzer` prints of a model.
struct ColmapModelStatistics {
  std::size_t cameras = 0, images = 0, registered_images = 0, points = 0, observations = 0;
  double mean_track_length = 0, mean_observations_per_image = 0;
  double mean_reprojection_error = 0;  // the mean of the points' errors, over the points that have one
};
ColmapModelStatistics colmap_model_statistics(const ColmapModel& model);

}  // namespace ceres_cuda
