// ColmapBundleAdjuster: the problem COLMAP builds (gauge, manifolds, constant blocks, loss, solver
// choice), its observation filter and point errors, ceres_cuda::Solve against ceres::Solve on it, and
// the refined model against `colmap bundle_adjuster`'s own.
#include "ceres_cuda/colmap_bundle_adjustment.h"

#include <ceres/loss_function.h>
#include <ceres/manifold.h>
#include <ceres/solver.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "ba_test_support.h"
#include "ceres_cuda/bal_problem.h"
#include "ceres_cuda/colmap_model.h"
#include "ceres_cuda/colmap_reprojection_error.h"
#include "ceres_cuda/solve.h"
#include "linalg_cuda/errors.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using ceres_cuda::ColmapBundleAdjuster;
using ceres_cuda::ColmapBundleAdjustmentOptions;
using ceres_cuda::ColmapCameraModel;
using ceres_cuda::ColmapModel;

// A synthetic problem's COLMAP model, its RADIAL cameras turned into the five models in turn (the
// same projection where the model can hold it: OPENCV with p = 0, PINHOLE and SIMPLE_PINHOLE
// without distortion, SIMPLE_RADIAL with k2 dropped).
ColmapModel mixed_model(int cameras, int points, std::uint32_t seed) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = cameras;
  o.num_points = points;
  o.seed = seed;
  ColmapModel model = ceres_cuda::colmap_model_from_bal(ceres_cuda::make_synthetic_bal(o));
  int k = 0;
  for (auto& [id, camera] : model.cameras) {
    const std::vector<double> p = camera.params;  // f, cx, cy, k1, k2
    switch (k++ % 5) {
      case 0:
        camera = {ColmapCameraModel::SimplePinhole, camera.width, camera.height, {p[0], p[1], p[2]}};
        break;
      case 1:
        camera = {ColmapCameraModel::Pinhole, camera.width, camera.height, {p[0], 1.01 * p[0], p[1], p[2]}};
        break;
      case 2:
        camera = {ColmapCameraModel::SimpleRadial, camera.width, camera.height, {p[0], p[1], p[2], p[3]}};
        break;
      case 3:
        break;
      case 4:
        camera = {
            ColmapCameraModel::OpenCV, camera.width, camera.height, {p[0], p[0], p[1], p[2], p[3], p[4], 1e-4, -1e-4}};
        break;
    }
  }
  return model;
}

int tangent_size(ceres::Problem& problem, const double* block) { return problem.ParameterBlockTangentSize(block); }

TEST(ColmapBundleAdjuster, BuildsColmapsProblem) {
  ColmapModel model = mixed_model(10, 200, 1);
  model.image_file_order = {4, 2};  // then 1, 3, 5, ... in id order
  ColmapBundleAdjuster adjuster(&model, ColmapBundleAdjustmentOptions());
  ceres::Problem& problem = adjuster.problem();
  EXPECT_EQ(adjuster.num_images(), 10u);
  EXPECT_EQ(adjuster.num_residual_blocks(), model.num_observations());
  EXPECT_EQ(problem.NumResidualBlocks(), static_cast<int>(model.num_observations()));
  // COLMAP's gauge: the first image of the registration order keeps its pose, the second its x.
  EXPECT_TRUE(problem.IsParameterBlockConstant(model.images.at(4).qvec.data()));
  EXPECT_TRUE(problem.IsParameterBlockConstant(model.images.at(4).tvec.data()));
  EXPECT_EQ(tangent_size(problem, model.images.at(2).qvec.data()), 3);
  EXPECT_EQ(tangent_size(problem, model.images.at(2).tvec.data()), 2);
  for (const std::uint32_t id : {1u, 3u, 10u}) {
    EXPECT_FALSE(problem.IsParameterBlockConstant(model.images.at(id).qvec.data()));
    EXPECT_NE(dynamic_cast<const ceres::QuaternionManifold*>(problem.GetManifold(model.images.at(id).qvec.data())),
              nullptr);
    EXPECT_EQ(tangent_size(problem, model.images.at(id).tvec.data()), 3);
  }
  // Focal lengths and extra parameters refined, the principal point held.
  const int refined[] = {1, 2, 2, 3, 6};  // SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, OPENCV
  int k = 0;
  for (auto& [id, camera] : model.cameras)
    EXPECT_EQ(tangent_size(problem, camera.params.data()), refined[k++ % 5]) << id;
  const ceres::Solver::Options o = adjuster.solver_options();
  EXPECT_EQ(o.linear_solver_type, ceres::DENSE_SCHUR);
  EXPECT_EQ(o.max_num_iterations, 100);
  EXPECT_EQ(o.function_tolerance, 0.0);
  EXPECT_EQ(o.num_threads, 1);  // fewer than 50,000 residuals
  ASSERT_NE(o.linear_solver_ordering, nullptr);
  EXPECT_EQ(o.linear_solver_ordering->GroupSize(0), static_cast<int>(model.points3D.size()));
  EXPECT_EQ(o.linear_solver_ordering->GroupId(model.images.at(3).qvec.data()), 1);
  // Every residual is a ColmapReprojectionError of its camera's model, with COLMAP's trivial loss.
  std::vector<ceres::ResidualBlockId> residuals;
  problem.GetResidualBlocks(&residuals);
  for (const ceres::ResidualBlockId r : residuals) {
    const auto* cost =
        dynamic_cast<const ceres_cuda::ColmapReprojectionError*>(problem.GetCostFunctionForResidualBlock(r));
    ASSERT_NE(cost, nullptr);
    EXPECT_NE(dynamic_cast<const ceres::TrivialLoss*>(problem.GetLossFunctionForResidualBlock(r)), nullptr);
  }
}

TEST(ColmapBundleAdjuster, HoldsWhatTheOptionsSay) {
  ColmapModel model = mixed_model(8, 100, 2);
  ColmapBundleAdjustmentOptions options;
  options.refine_focal_length = false;
  options.refine_principal_point = true;
  options.refine_extra_params = false;
  options.constant_cameras = {2};
  options.constant_pose_images = {5};
  options.constant_points = {7, 8};
  options.loss_function_type = ColmapBundleAdjustmentOptions::LossFunctionType::Cauchy;
  options.loss_function_scale = 2.0;
  ColmapBundleAdjuster adjuster(&model, options);
  ceres::Problem& problem = adjuster.problem();
  int k = 0;
  for (auto& [id, camera] : model.cameras) {
    const bool constant = id == 2;
    EXPECT_EQ(problem.IsParameterBlockConstant(camera.params.data()), constant) << id;
    if (!constant) EXPECT_EQ(tangent_size(problem, camera.params.data()), 2) << id << " model " << k;  // cx, cy
    ++k;
  }
  EXPECT_TRUE(problem.IsParameterBlockConstant(model.images.at(5).qvec.data()));
  EXPECT_TRUE(problem.IsParameterBlockConstant(model.points3D.at(7).xyz.data()));
  EXPECT_FALSE(problem.IsParameterBlockConstant(model.points3D.at(9).xyz.data()));
  std::vector<ceres::ResidualBlockId> residuals;
  problem.GetResidualBlocks(&residuals);
  const auto* loss = dynamic_cast<const ceres::CauchyLoss*>(problem.GetLossFunctionForResidualBlock(residuals[0]));
  ASSERT_NE(loss, nullptr);
  double rho[3];
  loss->Evaluate(0.0, rho);
  EXPECT_NEAR(rho[2], -1.0 / 4.0, 1e-15);  // rho''(0) = -1 / a^2

  // No refined intrinsics: every camera constant; no extrinsics: every pose.
  ColmapModel fixed = mixed_model(8, 100, 2);
  ColmapBundleAdjustmentOptions none;
  none.refine_focal_length = none.refine_extra_params = none.refine_extrinsics = false;
  ColmapBundleAdjuster still(&fixed, none);
  for (auto& [id, camera] : fixed.cameras) EXPECT_TRUE(still.problem().IsParameterBlockConstant(camera.params.data()));
  for (auto& [id, image] : fixed.images) EXPECT_TRUE(still.problem().IsParameterBlockConstant(image.tvec.data()));
}

TEST(ColmapBundleAdjuster, ChoosesColmapsLinearSolverByImageCount) {
  ColmapModel medium = mixed_model(51, 300, 3);
  EXPECT_EQ(ColmapBundleAdjuster(&medium, ColmapBundleAdjustmentOptions()).solver_options().linear_solver_type,
            ceres::SPARSE_SCHUR);
  ColmapBundleAdjustmentOptions no_sparse;
  no_sparse.solver_options.sparse_linear_algebra_library_type = ceres::NO_SPARSE;
  const ceres::Solver::Options o = ColmapBundleAdjuster(&medium, no_sparse).solver_options();
  EXPECT_EQ(o.linear_solver_type, ceres::ITERATIVE_SCHUR);
  EXPECT_EQ(o.preconditioner_type, ceres::SCHUR_JACOBI);
  ColmapBundleAdjustmentOptions threaded;
  threaded.min_num_residuals_for_multi_threading = 10;
  threaded.solver_options.num_threads = 3;
  EXPECT_EQ(ColmapBundleAdjuster(&medium, threaded).solver_options().num_threads, 3);
}

TEST(ColmapBundleAdjuster, RejectsModelsItCannotAdjust) {
  ColmapModel fisheye = mixed_model(4, 50, 4);
  fisheye.cameras.at(3) = {ColmapCameraModel::OpenCVFisheye, 640, 480, {500, 500, 320, 240, 0, 0, 0, 0}};
  try {
    ColmapBundleAdjuster adjuster(&fisheye, ColmapBundleAdjustmentOptions());
    FAIL() << "took an OPENCV_FISHEYE camera";
  } catch (const linalg_cuda::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("camera 3 has model OPENCV_FISHEYE"), std::string::npos) << e.what();
  }
  ColmapModel one = mixed_model(4, 50, 4);
  for (std::uint32_t id = 2; id <= 4; ++id) one.images.erase(id);
  for (auto& [id, point] : one.points3D)
    point.track.erase(
        std::remove_if(point.track.begin(), point.track.end(), [](const auto& e) { return e.image_id != 1; }),
        point.track.end());
  EXPECT_THROW(ColmapBundleAdjuster(&one, ColmapBundleAdjustmentOptions()), linalg_cuda::InvalidArgument);
  ColmapModel broken = mixed_model(4, 50, 4);
  broken.images.at(2).camera_id = 99;
  EXPECT_THROW(ColmapBundleAdjuster(&broken, ColmapBundleAdjustmentOptions()), linalg_cuda::InvalidArgument);
  ColmapModel bad_scale = mixed_model(4, 50, 4);
  ColmapBundleAdjustmentOptions zero;
  zero.loss_function_type = ColmapBundleAdjustmentOptions::LossFunctionType::Cauchy;
  zero.loss_function_scale = 0;
  EXPECT_THROW(ColmapBundleAdjuster(&bad_scale, zero), linalg_cuda::InvalidArgument);
  zero.loss_function_type = ColmapBundleAdjustmentOptions::LossFunctionType::Trivial;  // no scale to divide by
  EXPECT_NO_THROW(ColmapBundleAdjuster(&bad_scale, zero));
}

// The rotation matrix of a unit quaternion (w, x, y, z), row-major.
std::array<double, 9> rotation(const std::array<double, 4>& q) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  return {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
          2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
          2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
}

double depth(const ceres_cuda::ColmapImage& image, const std::array<double, 3>& X) {
  const std::array<double, 9> R = rotation(image.qvec);
  return R[6] * X[0] + R[7] * X[1] + R[8] * X[2] + image.tvec[2];
}

// A point 5 units behind the image's camera: its centre -R' t minus 5 along its optical axis.
std::array<double, 3> behind(const ceres_cuda::ColmapImage& image) {
  const std::array<double, 9> R = rotation(image.qvec);
  std::array<double, 3> X;
  for (int r = 0; r < 3; ++r)
    X[r] = -(R[r] * image.tvec[0] + R[3 + r] * image.tvec[1] + R[6 + r] * image.tvec[2]) - 5 * R[6 + r];
  return X;
}

TEST(ColmapFilter, RemovesObservationsBehindTheirCamera) {
  ColmapModel model = mixed_model(6, 40, 5);
  ceres_cuda::ColmapPoint3D& point = model.points3D.at(1);
  ASSERT_GT(point.track.size(), 2u);
  const ceres_cuda::ColmapTrackElement moved = point.track[0];
  point.xyz = behind(model.images.at(moved.image_id));
  ASSERT_LT(depth(model.images.at(moved.image_id), point.xyz), 0);
  std::size_t behind_count = 0;
  for (const auto& e : point.track) behind_count += depth(model.images.at(e.image_id), point.xyz) < DBL_EPSILON;
  const std::size_t track_before = point.track.size();
  EXPECT_EQ(ceres_cuda::colmap_filter_observations_with_negative_depth(&model), behind_count);
  EXPECT_EQ(model.images.at(moved.image_id).points2D[moved.point2D_idx].point3D_id, ceres_cuda::kColmapNoPoint3D);
  if (track_before - behind_count >= 2) {
    ASSERT_EQ(model.points3D.count(1), 1u);
    for (const auto& e : model.points3D.at(1).track)
      EXPECT_GE(depth(model.images.at(e.image_id), model.points3D.at(1).xyz), DBL_EPSILON);
  }
  EXPECT_NO_THROW(model.validate());
}

TEST(ColmapFilter, RemovesAPointOfTwoObservationsWithBoth) {
  ColmapModel model = mixed_model(6, 40, 5);
  ceres_cuda::ColmapPoint3D& point = model.points3D.at(2);
  while (point.track.size() > 2) {
    const ceres_cuda::ColmapTrackElement e = point.track.back();
    model.images.at(e.image_id).points2D[e.point2D_idx].point3D_id = ceres_cuda::kColmapNoPoint3D;
    point.track.pop_back();
  }
  const auto first = point.track[0], second = point.track[1];
  point.xyz = behind(model.images.at(first.image_id));
  EXPECT_GE(ceres_cuda::colmap_filter_observations_with_negative_depth(&model), 1u);
  EXPECT_EQ(model.points3D.count(2), 0u);
  EXPECT_EQ(model.images.at(first.image_id).points2D[first.point2D_idx].point3D_id, ceres_cuda::kColmapNoPoint3D);
  EXPECT_EQ(model.images.at(second.image_id).points2D[second.point2D_idx].point3D_id, ceres_cuda::kColmapNoPoint3D);
  EXPECT_NO_THROW(model.validate());
}

// colmap_model_from_bal computes each point's error from BAL's projection; colmap_update_point_errors
// from COLMAP's: on a BAL model the two agree.
TEST(ColmapPointErrors, AreTheMeanPixelDistancesOfTheirObservations) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 12;
  o.num_points = 500;
  const ColmapModel from_bal = ceres_cuda::colmap_model_from_bal(ceres_cuda::make_synthetic_bal(o));
  ColmapModel model = from_bal;
  for (auto& [id, point] : model.points3D) point.error = -1;
  ceres_cuda::colmap_update_point_errors(&model);
  double sum = 0;
  for (const auto& [id, point] : model.points3D) {
    EXPECT_NEAR(point.error, from_bal.points3D.at(id).error, 1e-9 * (1 + point.error)) << id;
    sum += point.error;
  }
  const ceres_cuda::ColmapModelStatistics s = ceres_cuda::colmap_model_statistics(model);
  EXPECT_EQ(s.images, 12u);
  EXPECT_EQ(s.points, 500u);
  EXPECT_EQ(s.observations, model.num_observations());
  EXPECT_DOUBLE_EQ(s.mean_track_length, static_cast<double>(s.observations) / 500);
  EXPECT_DOUBLE_EQ(s.mean_observations_per_image, static_cast<double>(s.observations) / 12);
  EXPECT_NEAR(s.mean_reprojection_error, sum / 500, 1e-12 * sum);
  model.points3D.begin()->second.error = -1;  // no error: left out of the mean, as COLMAP does
  EXPECT_NEAR(ceres_cuda::colmap_model_statistics(model).mean_reprojection_error,
              (sum - from_bal.points3D.begin()->second.error) / 499, 1e-9);
  EXPECT_EQ(ceres_cuda::colmap_update_point_errors(&model), 0u);
  // A point behind a camera: that observation counts sqrt(DBL_MAX) pixels, as COLMAP counts it.
  ceres_cuda::ColmapPoint3D& point = model.points3D.at(3);
  point.xyz = behind(model.images.at(point.track[0].image_id));
  EXPECT_GE(ceres_cuda::colmap_update_point_errors(&model), 1u);
  EXPECT_GE(point.error, std::sqrt(DBL_MAX) / static_cast<double>(point.track.size()));
}

// A model it cannot project is refused with the first point (in id order) that shows why, and nothing
// escapes the threads that compute the errors.
TEST(ColmapPointErrors, NameTheFirstPointTheyCannotProject) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 6;
  o.num_points = 5000;
  ColmapModel model = ceres_cuda::colmap_model_from_bal(ceres_cuda::make_synthetic_bal(o));
  ceres_cuda::ColmapModel missing = model;
  std::prev(missing.points3D.end())->second.track[0].image_id = 999;  // the last point
  std::next(missing.points3D.begin(), 4000)->second.track[0].point2D_idx = 1u << 30;
  try {
    ceres_cuda::colmap_update_point_errors(&missing);
    ADD_FAILURE() << "no error";
  } catch (const linalg_cuda::InvalidArgument& e) {
    const std::uint64_t id = std::next(missing.points3D.begin(), 4000)->first;
    EXPECT_NE(std::string(e.what()).find("3-D point " + std::to_string(id) + "'s track names image"), std::string::npos)
        << e.what();
  }
  model.cameras.begin()->second.model = ceres_cuda::ColmapCameraModel::Fov;
  model.cameras.begin()->second.params.resize(5);
  EXPECT_THROW(ceres_cuda::colmap_update_point_errors(&model), linalg_cuda::InvalidArgument);
}

double mean_error_after(ColmapModel* model, const ColmapBundleAdjustmentOptions& options, ceres_cuda::Backend backend,
                        bool ceres, ceres::Solver::Summary* summary) {
  ceres_cuda::colmap_filter_observations_with_negative_depth(model);
  ColmapBundleAdjuster adjuster(model, options);
  ceres::Solver::Options o = adjuster.solver_options();
  o.minimizer_progress_to_stdout = false;
  if (ceres) {
    ceres::Solve(o, &adjuster.problem(), summary);
  } else {
    ceres_cuda::SolveDetails details;
    ceres_cuda::SolveOptions solve_options;
    solve_options.backend = backend;
    adjuster.Solve(o, summary, solve_options, &details);
    EXPECT_NE(details.path, ceres_cuda::SolveDetails::Path::CeresFallback) << details.fallback_reason;
    if (backend == ceres_cuda::Backend::Cuda) EXPECT_EQ(details.path, ceres_cuda::SolveDetails::Path::GenericGpu);
  }
  ceres_cuda::colmap_update_point_errors(model);
  return ceres_cuda::colmap_model_statistics(*model).mean_reprojection_error;
}

// ceres_cuda::Solve and ceres::Solve on the same COLMAP problem, the five camera models mixed: the
// same final cost and mean reprojection error.
void expect_solve_matches_ceres(ceres_cuda::Backend backend) {
  for (const auto loss : {ColmapBundleAdjustmentOptions::LossFunctionType::Trivial,
                          ColmapBundleAdjustmentOptions::LossFunctionType::SoftL1}) {
    ColmapBundleAdjustmentOptions options;
    options.loss_function_type = loss;
    // The principal point stays fixed: refined with the translations, it leaves the reduced system near
    // singular, where the order of the camera blocks (Ceres' follows their addresses) decides which
    // steps' factorisations fail, and so the trajectory.
    // Few enough that neither solver reaches a step that changes the cost by exactly nothing (Ceres'
    // function tolerance test, 0 <= 0), which rounding decides.
    options.solver_options.max_num_iterations = 6;
    ColmapModel ours = mixed_model(20, 1500, 6), theirs = ours;
    ceres::Solver::Summary our_summary, their_summary;
    const double our_error = mean_error_after(&ours, options, backend, false, &our_summary);
    const double their_error = mean_error_after(&theirs, options, backend, true, &their_summary);
    EXPECT_LT(our_summary.final_cost, 0.1 * our_summary.initial_cost);
    EXPECT_NEAR(our_summary.final_cost, their_summary.final_cost, 1e-6 * their_summary.final_cost);
    EXPECT_NEAR(our_error, their_error, 1e-6 * their_error);
    EXPECT_EQ(our_summary.iterations.size(), their_summary.iterations.size()) << their_summary.message;
  }
}

TEST(ColmapBundleAdjuster, CpuEngineMatchesCeres) { expect_solve_matches_ceres(ceres_cuda::Backend::Cpu); }

TEST(GpuColmapBundleAdjustment, MatchesCeres) {
  REQUIRE_CUDA_DEVICE();
  expect_solve_matches_ceres(ceres_cuda::Backend::Cuda);
}

// The adjuster's own Solve (its analysis reads the adjuster's arrays; no ceres::Problem is built) and
// ceres_cuda::Solve of its problem(): the same structure, so the same Summary and the same model, bit
// for bit, with COLMAP's defaults and with constant poses, cameras and points and a robust loss.
void expect_source_equals_problem(ceres_cuda::Backend backend) {
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE("variant " + std::to_string(variant));
    ColmapBundleAdjustmentOptions options;
    options.solver_options.max_num_iterations = 5;
    options.solver_options.minimizer_progress_to_stdout = false;
    ColmapModel ours = mixed_model(20, 1500, 11);
    if (variant == 1) {
      options.loss_function_type = ColmapBundleAdjustmentOptions::LossFunctionType::Cauchy;
      options.constant_cameras = {ours.cameras.begin()->first};
      options.constant_pose_images = {std::next(ours.images.begin(), 5)->first};
      for (auto it = ours.points3D.begin(); it != ours.points3D.end(); std::advance(it, 1)) {
        options.constant_points.insert(it->first);
        if (options.constant_points.size() == 40) break;
      }
      options.refine_extra_params = false;
    }
    ColmapModel theirs = ours;
    ceres_cuda::colmap_filter_observations_with_negative_depth(&ours);
    ceres_cuda::colmap_filter_observations_with_negative_depth(&theirs);
    ColmapBundleAdjuster ours_adjuster(&ours, options), theirs_adjuster(&theirs, options);
    ceres_cuda::SolveOptions solve_options;
    solve_options.backend = backend;
    ceres::Solver::Summary our_summary, their_summary;
    ceres_cuda::SolveDetails our_details, their_details;
    ours_adjuster.Solve(ours_adjuster.solver_options(), &our_summary, solve_options, &our_details);
    ceres_cuda::Solve(theirs_adjuster.solver_options(), &theirs_adjuster.problem(), &their_summary, solve_options,
                      &their_details);
    EXPECT_EQ(our_details.path, their_details.path);
    EXPECT_NE(our_details.path, ceres_cuda::SolveDetails::Path::CeresFallback) << our_details.fallback_reason;
    EXPECT_EQ(our_summary.termination_type, their_summary.termination_type);
    EXPECT_EQ(our_summary.initial_cost, their_summary.initial_cost);
    EXPECT_EQ(our_summary.final_cost, their_summary.final_cost);
    EXPECT_EQ(our_summary.iterations.size(), their_summary.iterations.size());
    EXPECT_EQ(our_summary.num_parameter_blocks, their_summary.num_parameter_blocks);
    EXPECT_EQ(our_summary.num_parameters, their_summary.num_parameters);
    EXPECT_EQ(our_summary.num_effective_parameters, their_summary.num_effective_parameters);
    EXPECT_EQ(our_summary.num_residual_blocks, their_summary.num_residual_blocks);
    EXPECT_EQ(our_summary.num_residuals, their_summary.num_residuals);
    EXPECT_EQ(our_summary.num_parameter_blocks_reduced, their_summary.num_parameter_blocks_reduced);
    EXPECT_EQ(our_summary.num_effective_parameters_reduced, their_summary.num_effective_parameters_reduced);
    EXPECT_EQ(our_summary.num_residual_blocks_reduced, their_summary.num_residual_blocks_reduced);
    EXPECT_EQ(our_summary.linear_solver_ordering_used, their_summary.linear_solver_ordering_used);
    EXPECT_EQ(our_summary.schur_structure_given, their_summary.schur_structure_given);
    std::size_t differing = 0;
    for (const auto& [id, point] : ours.points3D) differing += point.xyz != theirs.points3D.at(id).xyz;
    for (const auto& [id, image] : ours.images)
      differing += image.qvec != theirs.images.at(id).qvec || image.tvec != theirs.images.at(id).tvec;
    for (const auto& [id, camera] : ours.cameras) differing += camera.params != theirs.cameras.at(id).params;
    EXPECT_EQ(differing, 0u);
  }
}

TEST(ColmapBundleAdjuster, SolveWithoutAProblemEqualsSolveOfTheProblem) {
  expect_source_equals_problem(ceres_cuda::Backend::Cpu);
}

TEST(GpuColmapBundleAdjustment, SolveWithoutAProblemEqualsSolveOfTheProblem) {
  REQUIRE_CUDA_DEVICE();
  expect_source_equals_problem(ceres_cuda::Backend::Cuda);
}

// A problem ceres_cuda does not take (here a linear solver it does not run) goes to ceres::Solve with
// the problem built on demand, as ceres_cuda::Solve hands over the caller's.
TEST(ColmapBundleAdjuster, SolveHandsOverWhatItDoesNotTake) {
  ColmapModel model = mixed_model(6, 300, 13), copy = model;
  ColmapBundleAdjustmentOptions options;
  options.solver_options.max_num_iterations = 3;
  options.solver_options.minimizer_progress_to_stdout = false;
  ColmapBundleAdjuster adjuster(&model, options), reference(&copy, options);
  ceres::Solver::Options o = adjuster.solver_options();
  o.linear_solver_type = ceres::DENSE_QR;
  ceres::Solver::Summary summary, expected;
  ceres_cuda::SolveDetails details;
  ceres_cuda::SolveOptions solve_options;
  solve_options.log_fallback = false;
  adjuster.Solve(o, &summary, solve_options, &details);
  EXPECT_EQ(details.path, ceres_cuda::SolveDetails::Path::CeresFallback);
  EXPECT_NE(details.fallback_reason.find("DENSE_QR"), std::string::npos) << details.fallback_reason;
  ceres::Solve(o, &reference.problem(), &expected);
  EXPECT_EQ(summary.final_cost, expected.final_cost);
  EXPECT_EQ(summary.iterations.size(), expected.iterations.size());
}

// The refined model against `colmap bundle_adjuster`'s on the shared Ladybug file, each point's error
// recomputed by COLMAP's point_filtering (which keeps every point at these thresholds): the same mean
// reprojection error within 1e-6, with COLMAP's defaults and with the distortion held. (Refining the
// principal point of a BAL model leaves the problem so near singular that COLMAP's own runs differ
// from one another.)
void expect_colmaps_result(ceres_cuda::Backend backend) {
  const char* env = std::getenv("COLMAP_EXE");
  const std::string colmap = env ? env : "colmap";
  if (std::system((colmap + " help > /dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "colmap not found (scripts/install_deps.sh installs Debian's; COLMAP_EXE names another)";
  const std::string bal = ba_test::bal_path("problem-49-7776-pre.txt");
  if (!fs::exists(bal)) GTEST_SKIP() << bal << " not found (set CUDA_SOLVERS_DATA)";
  const fs::path dir = fs::temp_directory_path() / "ceres_cuda_colmap_ba_test" / linalg_cuda::to_string(backend);
  fs::remove_all(dir);
  fs::create_directories(dir / "input");
  const ColmapModel input = ceres_cuda::colmap_model_from_bal(ceres_cuda::BALProblem::read(bal));
  input.write_binary((dir / "input").string());
  const struct {
    int iterations;
    bool refine_extra_params;
  } runs[] = {{25, true}, {10, false}};
  for (const auto& run : runs) {
    SCOPED_TRACE(std::to_string(run.iterations) + " iterations, extra parameters refined " +
                 std::to_string(run.refine_extra_params));
    const fs::path adjusted = dir / ("adjusted" + std::to_string(run.iterations)),
                   errors = dir / ("errors" + std::to_string(run.iterations));
    fs::create_directories(adjusted);
    fs::create_directories(errors);
    const std::string command =
        colmap + " bundle_adjuster --input_path " + (dir / "input").string() + " --output_path " +
        adjusted.string() + " --BundleAdjustment.max_num_iterations " + std::to_string(run.iterations) +
        " --BundleAdjustment.refine_extra_params " + std::to_string(run.refine_extra_params) + " > " +
        adjusted.string() + ".log 2>&1 && " + colmap + " point_filtering --input_path " + adjusted.string() +
        " --output_path " + errors.string() + " --min_track_len 2 --max_reproj_error 1e300 --min_tri_angle 0 > " +
        errors.string() + ".log 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    const ColmapModel colmaps = ColmapModel::read(errors.string());

    ColmapModel ours = ColmapModel::read((dir / "input").string());
    ColmapBundleAdjustmentOptions options;
    options.refine_extra_params = run.refine_extra_params;
    options.solver_options.max_num_iterations = run.iterations;
    ceres::Solver::Summary summary;
    const double error = mean_error_after(&ours, options, backend, false, &summary);
    EXPECT_EQ(ours.points3D.size(), colmaps.points3D.size());
    const double theirs = ceres_cuda::colmap_model_statistics(colmaps).mean_reprojection_error;
    EXPECT_NEAR(error, theirs, 1e-6 * theirs);
    EXPECT_LT(error, 0.2 * ceres_cuda::colmap_model_statistics(input).mean_reprojection_error);
  }
}

TEST(ColmapBundleAdjuster, CpuEngineGivesColmapsResult) { expect_colmaps_result(ceres_cuda::Backend::Cpu); }

TEST(GpuColmapBundleAdjustment, GivesColmapsResult) {
  REQUIRE_CUDA_DEVICE();
  expect_colmaps_result(ceres_cuda::Backend::Cuda);
}

}  // namespace
