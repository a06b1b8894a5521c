// ColmapBundleAdjuster: COLMAP 3.8's bundle adjustment problem (src/optim/bundle_adjustment.cc) over a
// ColmapModel, and the model statistics and point errors COLMAP reports.
#include "ceres_cuda/colmap_bundle_adjustment.h"

#include <ceres/loss_function.h>
#include <ceres/manifold.h>
#include <ceres/ordered_groups.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ceres_cuda/colmap_reprojection_error.h"
#include "colmap_camera_projection.h"
#include "linalg_cuda/errors.h"

namespace ceres_cuda {
namespace {

bool refinable(ColmapCameraModel model) {
  switch (model) {
    case ColmapCameraModel::SimplePinhole:
    case ColmapCameraModel::Pinhole:
    case ColmapCameraModel::SimpleRadial:
    case ColmapCameraModel::Radial:
    case ColmapCameraModel::OpenCV:
      return true;
    default:
      return false;
  }
}

// Every COLMAP model lists its focal lengths (one, or fx and fy), then the principal point, then its
// extra (distortion) parameters, so two counts say which parameter is which.
std::vector<int> constant_camera_params(ColmapCameraModel model, const ColmapBundleAdjustmentOptions& options) {
  const int focal = model == ColmapCameraModel::SimplePinhole || model == ColmapCameraModel::SimpleRadial ||
                            model == ColmapCameraModel::Radial || model == ColmapCameraModel::SimpleRadialFisheye ||
                            model == ColmapCameraModel::RadialFisheye
                        ? 1
                        : 2;
  const int n = colmap_camera_model_num_params(model);
  std::vector<int> constant;
  for (int k = 0; k < n; ++k) {
    const bool refined = k < focal ? options.refine_focal_length
                                   : (k < focal + 2 ? options.refine_principal_point : options.refine_extra_params);
    if (!refined) constant.push_back(k);
  }
  return constant;
}

ceres::LossFunction* make_loss(const ColmapBundleAdjustmentOptions& options) {
  switch (options.loss_function_type) {
    case ColmapBundleAdjustmentOptions::LossFunctionType::SoftL1:
      return new ceres::SoftLOneLoss(options.loss_function_scale);
    case ColmapBundleAdjustmentOptions::LossFunctionType::Cauchy:
      return new ceres::CauchyLoss(options.loss_function_scale);
    case ColmapBundleAdjustmentOptions::LossFunctionType::Trivial:
      break;
  }
  return new ceres::TrivialLoss;
}

// The depth of `xyz` in `image`, its third camera coordinate (Image::ProjectionMatrix's last row).
double depth(const ColmapImage& image, const std::array<double, 3>& xyz) {
  return detail::unit_quaternion_transform(image.qvec.data(), image.tvec.data(), xyz.data()).P[2];
}

void normalise(std::array<double, 4>* q) {
  const double norm = std::sqrt((*q)[0] * (*q)[0] + (*q)[1] * (*q)[1] + (*q)[2] * (*q)[2] + (*q)[3] * (*q)[3]);
  if (norm > 0)
    for (double& value : *q) value /= norm;
}

}  // namespace

ColmapBundleAdjustmentOptions::ColmapBundleAdjustmentOptions() {
  solver_options.function_tolerance = 0.0;
  solver_options.gradient_tolerance = 0.0;
  solver_options.parameter_tolerance = 0.0;
  solver_options.max_num_iterations = 100;
  solver_options.max_linear_solver_iterations = 200;
  solver_options.max_num_consecutive_invalid_steps = 10;
  solver_options.max_consecutive_nonmonotonic_steps = 10;
  solver_options.num_threads = -1;
}

std::size_t colmap_filter_observations_with_negative_depth(ColmapModel* model) {
  model->validate();
  // Point by point, with COLMAP's outcome: it visits the observations image by image and removes each
  // one behind its camera, or the whole point once its track is down to two. So of a track of L with b
  // behind, the b go when L - b >= 2; otherwise the point goes after L - 1 removals.
  std::size_t removed = 0;
  std::vector<char> behind;
  for (auto it = model->points3D.begin(); it != model->points3D.end();) {
    ColmapPoint3D& point = it->second;
    const std::size_t length = point.track.size();
    behind.assign(length, 0);
    std::size_t b = 0;
    for (std::size_t k = 0; k < length; ++k)
      b += behind[k] = depth(model->images.at(point.track[k].image_id), point.xyz) < DBL_EPSILON;
    if (b == 0) {
      ++it;
      continue;
    }
    const auto reset = [&](const ColmapTrackElement& e) {
      model->images.at(e.image_id).points2D[e.point2D_idx].point3D_id = kColmapNoPoint3D;
    };
    if (length - b >= 2) {
      removed += b;
      std::vector<ColmapTrackElement> kept;
      for (std::size_t k = 0; k < length; ++k) {
        if (behind[k])
          reset(point.track[k]);
        else
          kept.push_back(point.track[k]);
      }
      point.track = std::move(kept);
      ++it;
    } else {
      removed += length - 1;
      for (const ColmapTrackElement& e : point.track) reset(e);
      it = model->points3D.erase(it);
    }
  }
  return removed;
}

ColmapBundleAdjuster::ColmapBundleAdjuster(ColmapModel* model, const ColmapBundleAdjustmentOptions& options)
    : options_(options), ordering_(std::make_shared<ceres::ParameterBlockOrdering>()) {
  model->validate();
  const std::vector<std::uint32_t> order = model->registration_order();
  if (order.size() < 2)
    throw linalg_cuda::InvalidArgument("COLMAP bundle adjustment needs at least two images; the model has " +
                                       std::to_string(order.size()));
  for (const auto& [id, camera] : model->cameras)
    if (!refinable(camera.model))
      throw linalg_cuda::InvalidArgument("camera " + std::to_string(id) + " has model " +
                                         colmap_camera_model_name(camera.model) +
                                         ", which the GPU bundle adjustment does not take (it takes SIMPLE_PINHOLE, "
                                         "PINHOLE, SIMPLE_RADIAL, RADIAL and OPENCV)");
  // COLMAP takes a scale of 0 too, where Ceres' SoftL1 and Cauchy losses divide by it.
  if (options.loss_function_type != ColmapBundleAdjustmentOptions::LossFunctionType::Trivial &&
      !(options.loss_function_scale > 0 && std::isfinite(options.loss_function_scale)))
    throw linalg_cuda::InvalidArgument("loss_function_scale must be positive and finite for a SOFT_L1 or CAUCHY "
                                       "loss, not " + std::to_string(options.loss_function_scale));

  // The blocks are the model's distinct arrays, so Ceres' per-residual aliasing and duplicate checks
  // (a sorted copy of the blocks per residual) can find nothing. The adjuster owns the cost functions
  // (in one deque) and the loss: a problem that owns them counts each in a map, millions of entries.
  ceres::Problem::Options problem_options;
  problem_options.disable_all_safety_checks = true;
  problem_options.cost_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  problem_options.loss_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  problem_ = std::make_unique<ceres::Problem>(problem_options);
  loss_.reset(make_loss(options));  // one for every residual, as COLMAP's
  ceres::LossFunction* loss = loss_.get();
  // Residuals go in point by point: Ceres looks every block up in a map per residual, and a point's
  // observations in a row find its entry in cache (image by image, as COLMAP adds them, each looks up
  // a random point of millions). The order changes no result beyond rounding.
  std::map<std::uint32_t, std::size_t> observations;  // by image
  for (auto& [id, image] : model->images) normalise(&image.qvec);
  for (auto& [id, point] : model->points3D) {
    double* xyz = point.xyz.data();
    if (!point.track.empty()) ordering_->AddElementToGroup(xyz, 0);
    for (const ColmapTrackElement& e : point.track) {
      ColmapImage& image = model->images.at(e.image_id);
      ColmapCamera& camera = model->cameras.at(image.camera_id);
      const ColmapImagePoint& p = image.points2D[e.point2D_idx];
      costs_.emplace_back(camera.model, p.x, p.y);
      problem_->AddResidualBlock(&costs_.back(), loss, image.qvec.data(), image.tvec.data(), camera.params.data(),
                                 xyz);
      ++observations[e.image_id];
    }
  }
  std::set<std::uint32_t> used_cameras;
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    if (!observations.count(order[rank])) continue;
    ColmapImage& image = model->images.at(order[rank]);
    ++num_images_;
    num_observations_ += observations[order[rank]];
    used_cameras.insert(image.camera_id);
    ordering_->AddElementToGroup(image.qvec.data(), 1);
    ordering_->AddElementToGroup(image.tvec.data(), 1);
    const bool constant_pose =
        !options.refine_extrinsics || rank == 0 || options.constant_pose_images.count(order[rank]);
    if (constant_pose) {
      problem_->SetParameterBlockConstant(image.qvec.data());
      problem_->SetParameterBlockConstant(image.tvec.data());
    } else {
      problem_->SetManifold(image.qvec.data(), new ceres::QuaternionManifold);
      if (rank == 1) problem_->SetManifold(image.tvec.data(), new ceres::SubsetManifold(3, {0}));
    }
  }
  if (num_observations_ == 0) throw linalg_cuda::InvalidArgument("the model's images observe no 3-D point");

  for (const std::uint32_t id : used_cameras) {
    ColmapCamera& camera = model->cameras.at(id);
    double* params = camera.params.data();
    ordering_->AddElementToGroup(params, 1);
    const std::vector<int> constant = constant_camera_params(camera.model, options);
    if (options.constant_cameras.count(id) || constant.size() == camera.params.size())
      problem_->SetParameterBlockConstant(params);
    else if (!constant.empty())
      problem_->SetManifold(params, new ceres::SubsetManifold(static_cast<int>(camera.params.size()), constant));
  }
  for (const std::uint64_t id : options.constant_points) {
    const auto point = model->points3D.find(id);
    if (point != model->points3D.end() && problem_->HasParameterBlock(point->second.xyz.data()))
      problem_->SetParameterBlockConstant(point->second.xyz.data());
  }
}

ColmapBundleAdjuster::~ColmapBundleAdjuster() = default;

ceres::Solver::Options ColmapBundleAdjuster::solver_options() const {
  ceres::Solver::Options o = options_.solver_options;
  const bool has_sparse = o.sparse_linear_algebra_library_type != ceres::NO_SPARSE;
  if (num_images_ <= 50) {
    o.linear_solver_type = ceres::DENSE_SCHUR;
  } else if (num_images_ <= 1000 && has_sparse) {
    o.linear_solver_type = ceres::SPARSE_SCHUR;
  } else {
    o.linear_solver_type = ceres::ITERATIVE_SCHUR;
    o.preconditioner_type = ceres::SCHUR_JACOBI;
  }
  if (2 * num_observations_ < static_cast<std::size_t>(std::max(0, options_.min_num_residuals_for_multi_threading)))
    o.num_threads = 1;
  else if (o.num_threads <= 0)
    o.num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  o.linear_solver_ordering = ordering_;
  return o;
}

std::size_t colmap_update_point_errors(ColmapModel* model) {
  // Points on all threads, each one's sum in its track's order (the same bits on any number of threads).
  std::vector<std::pair<const std::uint64_t, ColmapPoint3D>*> points;
  points.reserve(model->points3D.size());
  for (auto& entry : model->points3D) points.push_back(&entry);
  const long n = static_cast<long>(points.size());
  // What an observation cannot be projected with: "" when it can. Checked for every point first, so
  // that the error names the first point in id order and nothing throws on the threads below.
  auto problem = [&](std::uint64_t id, const ColmapTrackElement& e) -> std::string {
    const auto image = model->images.find(e.image_id);
    if (image == model->images.end() || e.point2D_idx >= image->second.points2D.size())
      return "3-D point " + std::to_string(id) + "'s track names image " + std::to_string(e.image_id) + "'s point " +
             std::to_string(e.point2D_idx) + ", which the model does not have";
    const auto camera = model->cameras.find(image->second.camera_id);
    if (camera == model->cameras.end())
      return "image " + std::to_string(e.image_id) + " names camera " + std::to_string(image->second.camera_id) +
             ", which the model does not have";
    if (!refinable(camera->second.model))
      return "3-D point " + std::to_string(id) + " is observed by camera " + std::to_string(camera->first) +
             " of model " + colmap_camera_model_name(camera->second.model) +
             ", whose projection colmap_update_point_errors does not have";
    return "";
  };
  auto projectable = [&](const ColmapTrackElement& e) {
    const auto image = model->images.find(e.image_id);
    if (image == model->images.end() || e.point2D_idx >= image->second.points2D.size()) return false;
    const auto camera = model->cameras.find(image->second.camera_id);
    return camera != model->cameras.end() && refinable(camera->second.model);
  };
  long first_bad = n;
#pragma omp parallel for schedule(dynamic, 1024) reduction(min : first_bad)
  for (long p = 0; p < n; ++p)
    for (const ColmapTrackElement& e : points[p]->second.track)
      if (!projectable(e)) first_bad = std::min(first_bad, p);
  if (first_bad < n)
    for (const ColmapTrackElement& e : points[first_bad]->second.track)
      if (const std::string what = problem(points[first_bad]->first, e); !what.empty())
        throw linalg_cuda::InvalidArgument(what);
  std::size_t behind = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(+ : behind)
  for (long p = 0; p < n; ++p) {
    ColmapPoint3D& point = points[p]->second;
    if (point.track.empty()) continue;
    double sum = 0;
    for (const ColmapTrackElement& e : point.track) {
      const ColmapImage& image = model->images.at(e.image_id);
      const ColmapCamera& camera = model->cameras.at(image.camera_id);
      const ColmapImagePoint& observed = image.points2D.at(e.point2D_idx);
      double residual[2];
      if (depth(image, point.xyz) < DBL_EPSILON ||
          !detail::colmap_reprojection_residual(static_cast<int>(camera.model), image.qvec.data(), image.tvec.data(),
                                                camera.params.data(), point.xyz.data(), observed.x, observed.y,
                                                residual, nullptr, nullptr, nullptr, nullptr)) {
        sum += std::sqrt(DBL_MAX);
        ++behind;
        continue;
      }
      sum += std::sqrt(residual[0] * residual[0] + residual[1] * residual[1]);
    }
    point.error = sum / static_cast<double>(point.track.size());
  }
  return behind;
}

ColmapModelStatistics colmap_model_statistics(const ColmapModel& model) {
  ColmapModelStatistics s;
  s.cameras = model.cameras.size();
  s.images = s.registered_images = model.images.size();  // every image of a sparse model is registered
  s.points = model.points3D.size();
  s.observations = model.num_observations();
  if (s.points) s.mean_track_length = static_cast<double>(s.observations) / static_cast<double>(s.points);
  if (s.registered_images)
    s.mean_observations_per_image = static_cast<double>(s.observations) / static_cast<double>(s.registered_images);
  double sum = 0;
  std::size_t with_error = 0;
  for (const auto& [id, point] : model.points3D)
    if (point.error != -1.0) {
      sum += point.error;
      ++with_error;
    }
  if (with_error) s.mean_reprojection_error = sum / static_cast<double>(with_error);
  return s;
}

}  // namespace ceres_cuda
