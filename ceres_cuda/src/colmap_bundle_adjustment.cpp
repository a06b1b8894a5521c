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
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ceres_cuda/colmap_reprojection_error.h"
#include "colmap_camera_projection.h"
#include "problem_source.h"
#include "solve_source.h"
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

// The problem's blocks as ceres_cuda's analysis reads them (problem_source.h).
struct ColmapBundleAdjuster::Blocks {
  // The cost functions, one per observation, built in place on all threads (a ceres::CostFunction can
  // be neither copied nor moved, so no vector can hold them).
  class Costs {
   public:
    Costs() = default;
    Costs(const Costs&) = delete;
    Costs& operator=(const Costs&) = delete;
    ~Costs() {
      for (std::size_t k = 0; k < constructed_; ++k) data_[k].~ColmapReprojectionError();
      ::operator delete(data_);
    }
    void allocate(std::size_t n) { data_ = static_cast<ColmapReprojectionError*>(::operator new(n * sizeof(*data_))); }
    const ColmapReprojectionError* construct(std::size_t k, ColmapCameraModel model, double x, double y) {
      return new (data_ + k) ColmapReprojectionError(model, x, y);
    }
    // Elements 0 .. n - 1 exist (the destructor's count).
    void constructed(std::size_t n) { constructed_ = n; }

   private:
    ColmapReprojectionError* data_ = nullptr;
    std::size_t constructed_ = 0;
  };

  Costs costs;
  struct Residual {
    const ColmapReprojectionError* cost;
    double* blocks[4];  // qvec, tvec, camera parameters, point
  };
  std::vector<Residual> residuals;  // point by point, each point's track in order
  // Poses and cameras (points have 3 Euclidean values and vary unless listed below).
  std::unordered_map<const double*, detail::ProblemSource::BlockFacts> facts;
  std::unordered_set<const double*> constant_points;
  std::vector<std::unique_ptr<ceres::Manifold>> manifolds;
  long num_parameter_blocks = 0;
};

class ColmapBundleAdjuster::Source final : public detail::ProblemSource {
 public:
  Source(const Blocks& blocks, const ceres::LossFunction* loss) : blocks_(blocks), loss_(loss) {}
  long num_residual_blocks() const override { return static_cast<long>(blocks_.residuals.size()); }
  const ceres::CostFunction* cost(long r) const override { return blocks_.residuals[r].cost; }
  const ceres::LossFunction* loss(long) const override { return loss_; }
  void parameter_blocks(long r, std::vector<double*>* blocks) const override {
    blocks->assign(blocks_.residuals[r].blocks, blocks_.residuals[r].blocks + 4);
  }
  long num_parameter_blocks() const override { return blocks_.num_parameter_blocks; }
  void all_parameter_blocks(std::vector<double*>* blocks) const override {  // every block is in a residual
    std::unordered_set<const double*> seen;
    blocks->clear();
    for (const auto& r : blocks_.residuals)
      for (double* b : r.blocks)
        if (seen.insert(b).second) blocks->push_back(b);
  }
  BlockFacts facts(double* block) const override {
    const auto it = blocks_.facts.find(block);
    if (it != blocks_.facts.end()) return it->second;
    BlockFacts point;
    point.size = point.tangent_size = 3;
    point.constant = blocks_.constant_points.count(block) > 0;
    return point;
  }

 private:
  const Blocks& blocks_;
  const ceres::LossFunction* loss_;
};

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

  loss_.reset(make_loss(options));  // one for every residual, as COLMAP's
  blocks_ = std::make_unique<Blocks>();
  Blocks& blocks = *blocks_;
  for (auto& [id, image] : model->images) normalise(&image.qvec);
  // What an observation needs of its image, by the image's ordinal.
  struct ImageRef {
    double *qvec, *tvec, *params;
    ColmapCameraModel model;
    const std::vector<ColmapImagePoint>* points2D;
  };
  std::vector<ImageRef> images;
  std::unordered_map<std::uint32_t, int> ordinal;
  for (auto& [id, image] : model->images) {
    ColmapCamera& camera = model->cameras.at(image.camera_id);
    ordinal.emplace(id, static_cast<int>(images.size()));
    images.push_back({image.qvec.data(), image.tvec.data(), camera.params.data(), camera.model, &image.points2D});
  }
  // Residuals go point by point (a point's observations in a row; the order a ceres::Problem built
  // from them, problem(), finds its blocks in cache), each point's at its place, on all threads.
  std::vector<ColmapPoint3D*> points;
  std::vector<std::size_t> first{0};
  for (auto& [id, point] : model->points3D) {
    if (point.track.empty()) continue;
    ordering_->AddElementToGroup(point.xyz.data(), 0);
    points.push_back(&point);
    first.push_back(first.back() + point.track.size());
  }
  const std::size_t n = first.back();
  blocks.costs.allocate(n);
  blocks.residuals.resize(n);
  std::vector<int> image_of(n);
  const long num_points = static_cast<long>(points.size());
#pragma omp parallel for schedule(dynamic, 1024)
  for (long p = 0; p < num_points; ++p) {
    double* xyz = points[p]->xyz.data();
    std::size_t at = first[p];
    for (const ColmapTrackElement& e : points[p]->track) {  // validate() has checked every reference
      const int image = ordinal.find(e.image_id)->second;
      const ImageRef& ref = images[image];
      const ColmapImagePoint& observed = (*ref.points2D)[e.point2D_idx];
      const ColmapReprojectionError* cost = blocks.costs.construct(at, ref.model, observed.x, observed.y);
      blocks.residuals[at] = {cost, {ref.qvec, ref.tvec, ref.params, xyz}};
      image_of[at++] = image;
    }
  }
  blocks.costs.constructed(n);
  std::vector<std::size_t> per_image(images.size(), 0);
  for (const int image : image_of) ++per_image[image];
  std::map<std::uint32_t, std::size_t> observations;  // by image id
  for (const auto& [id, k] : ordinal)
    if (per_image[k] > 0) observations[id] = per_image[k];
  const std::size_t num_points_used = points.size();
  // Poses and cameras: constant, or with COLMAP's manifolds (the adjuster owns them).
  auto add_block = [&](double* block, int size, bool constant, std::unique_ptr<ceres::Manifold> manifold) {
    detail::ProblemSource::BlockFacts facts;
    facts.size = size;
    facts.constant = constant;
    facts.tangent_size = manifold && !constant ? manifold->TangentSize() : size;
    if (manifold && !constant) {
      facts.manifold = manifold.get();
      blocks.manifolds.push_back(std::move(manifold));
    }
    blocks.facts.emplace(block, facts);
  };
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
    add_block(image.qvec.data(), 4, constant_pose, std::make_unique<ceres::QuaternionManifold>());
    add_block(image.tvec.data(), 3, constant_pose,
              rank == 1 ? std::make_unique<ceres::SubsetManifold>(3, std::vector<int>{0}) : nullptr);
  }
  if (num_observations_ == 0) throw linalg_cuda::InvalidArgument("the model's images observe no 3-D point");
  for (const std::uint32_t id : used_cameras) {
    ColmapCamera& camera = model->cameras.at(id);
    double* params = camera.params.data();
    ordering_->AddElementToGroup(params, 1);
    const int size = static_cast<int>(camera.params.size());
    const std::vector<int> constant = constant_camera_params(camera.model, options);
    add_block(params, size, options.constant_cameras.count(id) || constant.size() == camera.params.size(),
              constant.empty() ? nullptr : std::make_unique<ceres::SubsetManifold>(size, constant));
  }
  for (const std::uint64_t id : options.constant_points) {
    const auto point = model->points3D.find(id);
    if (point != model->points3D.end() && !point->second.track.empty())
      blocks.constant_points.insert(point->second.xyz.data());
  }
  blocks.num_parameter_blocks = static_cast<long>(num_points_used + blocks.facts.size());
}

ColmapBundleAdjuster::~ColmapBundleAdjuster() = default;

ceres::Problem& ColmapBundleAdjuster::problem() {
  if (problem_) return *problem_;
  // The blocks are the model's distinct arrays, so Ceres' per-residual aliasing and duplicate checks
  // (a sorted copy of the blocks per residual) can find nothing. The adjuster owns the cost functions,
  // the loss and the manifolds: a problem that owns them counts each in a map, millions of entries.
  ceres::Problem::Options problem_options;
  problem_options.disable_all_safety_checks = true;
  problem_options.cost_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  problem_options.loss_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  problem_options.manifold_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  auto problem = std::make_unique<ceres::Problem>(problem_options);
  for (const Blocks::Residual& r : blocks_->residuals)
    problem->AddResidualBlock(const_cast<ColmapReprojectionError*>(r.cost), loss_.get(), r.blocks[0], r.blocks[1],
                              r.blocks[2], r.blocks[3]);
  for (const auto& [block, facts] : blocks_->facts) {
    if (facts.constant) problem->SetParameterBlockConstant(const_cast<double*>(block));
    else if (facts.manifold)
      problem->SetManifold(const_cast<double*>(block), const_cast<ceres::Manifold*>(facts.manifold));
  }
  for (const double* point : blocks_->constant_points) problem->SetParameterBlockConstant(const_cast<double*>(point));
  problem_ = std::move(problem);
  return *problem_;
}

void ColmapBundleAdjuster::Solve(const ceres::Solver::Options& options, ceres::Solver::Summary* summary,
                                 const SolveOptions& solve_options, SolveDetails* details) {
  if (problem_) return ceres_cuda::Solve(options, problem_.get(), summary, solve_options, details);
  const Source source(*blocks_, loss_.get());
  detail::solve_from_source(options, source, [this] { return &problem(); }, summary, solve_options, details);
}

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
