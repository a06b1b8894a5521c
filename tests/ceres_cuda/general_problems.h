#pragma once
// Bundle-adjustment problems in the shapes real SfM/SLAM code gives ceres::Solve (for the tests of
// ceres_cuda::Solve's general engine): quaternion poses on manifolds, split or 7-value poses, per-camera
// or shared intrinsics, some intrinsics held by a SubsetManifold, homogeneous or inverse-depth points,
// pose priors (residuals without an e-block), constant blocks, losses, and residuals of several sizes
// in one problem. The values come from a BAL scene (a shared file, a subset of one, or a random one);
// build() is deterministic, so calling it twice gives two identical, independent problems.
#include <ceres/ceres.h>
#include <ceres/manifold.h>
#include <ceres/product_manifold.h>
#include <ceres/rotation.h>
#include <ceres/sphere_manifold.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

#include "ba_test_support.h"
#include "ceres_cuda/quaternion_snavely_reprojection_error.h"

namespace general_test {

// ---------------------------------------------------------------------------------------------
// Scenes: where the initial values and observations come from (BAL conventions, 9 values a camera).

// A file of ../shared/data/bal, read once per process; nullptr when it is absent.
inline const ceres_cuda::BALProblem* shared_bal(const std::string& name) {
  static std::map<std::string, std::unique_ptr<ceres_cuda::BALProblem>> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    const std::string path = ba_test::bal_path(name);
    std::unique_ptr<ceres_cuda::BALProblem> bal;
    if (std::filesystem::exists(path))
      bal = std::make_unique<ceres_cuda::BALProblem>(ceres_cuda::BALProblem::read(path));
    it = cache.emplace(name, std::move(bal)).first;
  }
  return it->second.get();
}

// The first `cameras` cameras of bal and the first `points` points that they see at least twice.
inline ceres_cuda::BALProblem bal_subset(const ceres_cuda::BALProblem& bal, int cameras, int points) {
  std::vector<int> views(bal.num_points(), 0);
  for (int i = 0; i < bal.num_observations(); ++i)
    if (bal.camera_index()[i] < cameras) ++views[bal.point_index()[i]];
  std::vector<int> new_index(bal.num_points(), -1);
  std::vector<double> kept_points;
  int kept = 0;
  for (int j = 0; j < bal.num_points() && kept < points; ++j)
    if (views[j] >= 2) {
      new_index[j] = kept++;
      kept_points.insert(kept_points.end(), bal.points().begin() + 3 * j, bal.points().begin() + 3 * j + 3);
    }
  std::vector<int> cams, pts;
  std::vector<double> obs;
  for (int i = 0; i < bal.num_observations(); ++i) {
    const int c = bal.camera_index()[i], j = new_index[bal.point_index()[i]];
    if (c >= cameras || j < 0) continue;
    cams.push_back(c);
    pts.push_back(j);
    obs.push_back(bal.observations()[2 * i]);
    obs.push_back(bal.observations()[2 * i + 1]);
  }
  std::vector<double> cam_values(bal.cameras().begin(), bal.cameras().begin() + 9 * cameras);
  return ceres_cuda::BALProblem(cameras, kept, cams, pts, obs, cam_values, kept_points);
}

// A random scene: ceres_cuda::make_synthetic_bal's geometry and noise (cameras on a circle around a
// ball of points, 0.5 px noise, perturbed initial values), every point seen by a random set of
// min_views to max_views cameras.
inline ceres_cuda::BALProblem random_scene(int cameras, int points, std::uint32_t seed, int max_views = 5,
                                           int min_views = 2) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = cameras;
  o.num_points = points;
  o.observations_per_point = cameras;  // all, then a random subset below
  o.seed = seed;
  const ceres_cuda::BALProblem all = ceres_cuda::make_synthetic_bal(o);
  std::mt19937 rng(seed + 1000);
  std::vector<int> cams, pts, order(cameras);
  std::vector<double> obs;
  for (int j = 0; j < points; ++j) {
    for (int c = 0; c < cameras; ++c) order[c] = c;
    std::shuffle(order.begin(), order.end(), rng);
    const int views = std::uniform_int_distribution<int>(min_views, std::min(max_views, cameras))(rng);
    std::sort(order.begin(), order.begin() + views);
    for (int k = 0; k < views; ++k) {
      const int i = j * cameras + order[k];  // make_synthetic_bal lists point j's cameras 0..n-1 in order
      cams.push_back(order[k]);
      pts.push_back(j);
      obs.push_back(all.observations()[2 * i]);
      obs.push_back(all.observations()[2 * i + 1]);
    }
  }
  return ceres_cuda::BALProblem(cameras, points, cams, pts, obs, all.cameras(), all.points());
}

// ---------------------------------------------------------------------------------------------
// Cost functors (templated, for AutoDiffCostFunction).

// Rotates X by a unit quaternion stored as Ceres' (w, x, y, z) or as Eigen's (x, y, z, w).
template <typename T>
void rotate(const T* q, bool eigen_layout, const T* X, T* P) {
  if (!eigen_layout) {
    ceres::QuaternionRotatePoint(q, X, P);
    return;
  }
  const Eigen::Map<const Eigen::Quaternion<T>> rotation(q);
  Eigen::Map<Eigen::Matrix<T, 3, 1>> rotated(P);
  rotated = rotation * Eigen::Map<const Eigen::Matrix<T, 3, 1>>(X);
}

// The Snavely model with the pose as a quaternion and a translation and the intrinsics (f, k1, k2)
// in a block of their own. The point is kPointSize values: 3, Euclidean; 4, homogeneous (X, w) on a
// sphere; 1, an inverse depth rho along a fixed ray (X, w) = (origin rho + ray, rho). The projection
// -P.xy / P.z of P = R X + w t is that of the Euclidean point X / w: dividing by w cancels out.
template <int kPointSize>
struct Reprojection {
  double u = 0, v = 0;
  bool eigen_layout = false;
  std::array<double, 3> origin{}, ray{};  // kPointSize 1 only

  template <typename T>
  bool operator()(const T* q, const T* t, const T* K, const T* point, T* r) const {
    T X[3], w(1.0);
    if constexpr (kPointSize == 1) {
      for (int k = 0; k < 3; ++k) X[k] = T(origin[k]) * point[0] + T(ray[k]);
      w = point[0];
    } else {
      for (int k = 0; k < 3; ++k) X[k] = point[k];
      if constexpr (kPointSize == 4) w = point[3];
    }
    T P[3];
    rotate(q, eigen_layout, X, P);
    for (int k = 0; k < 3; ++k) P[k] += w * t[k];
    const T xp = -P[0] / P[2], yp = -P[1] / P[2];
    const T r2 = xp * xp + yp * yp;
    const T distortion = T(1.0) + r2 * (K[1] + K[2] * r2);
    r[0] = K[0] * distortion * xp - T(u);
    r[1] = K[0] * distortion * yp - T(v);
    return true;
  }
};

// A 3-D measurement of a point in the camera frame by a sensor mounted at `offset` (one block shared
// by all cameras): (R X + t + offset - measured) * weight, 3 residuals with another set of f-blocks.
struct CameraFramePoint {
  std::array<double, 3> measured{};
  double weight = 1;
  bool eigen_layout = false;
  template <typename T>
  bool operator()(const T* q, const T* t, const T* offset, const T* X, T* r) const {
    T P[3];
    rotate(q, eigen_layout, X, P);
    for (int k = 0; k < 3; ++k) r[k] = (P[k] + t[k] + offset[k] - T(measured[k])) * T(weight);
    return true;
  }
};

// A weak prior on a pose: 2 vec(q q0^-1) / sigma_r and (t - t0) / sigma_t, 6 residuals.
struct PosePrior {
  std::array<double, 4> q0{};  // (w, x, y, z), whatever the block's layout
  std::array<double, 3> t0{};
  double sigma_r = 0.1, sigma_t = 1.0;
  bool eigen_layout = false;
  template <typename T>
  bool operator()(const T* q, const T* t, T* r) const {
    const T qw[4] = {eigen_layout ? q[3] : q[0], eigen_layout ? q[0] : q[1], eigen_layout ? q[1] : q[2],
                     eigen_layout ? q[2] : q[3]};
    const T q0_inverse[4] = {T(q0[0]), T(-q0[1]), T(-q0[2]), T(-q0[3])};
    T d[4];
    ceres::QuaternionProduct(qw, q0_inverse, d);
    for (int k = 0; k < 3; ++k) r[k] = T(2.0) * d[k + 1] / T(sigma_r);
    for (int k = 0; k < 3; ++k) r[3 + k] = (t[k] - T(t0[k])) / T(sigma_t);
    return true;
  }
};

struct TranslationPrior {
  std::array<double, 3> t0{};
  double sigma = 1.0;
  template <typename T>
  bool operator()(const T* t, T* r) const {
    for (int k = 0; k < 3; ++k) r[k] = (t[k] - T(t0[k])) / T(sigma);
    return true;
  }
};

// A prior on a Euclidean point alone: a residual whose only block is an e-block.
struct PointPrior {
  std::array<double, 3> X0{};
  double sigma = 1.0;
  template <typename T>
  bool operator()(const T* X, T* r) const {
    for (int k = 0; k < 3; ++k) r[k] = (X[k] - T(X0[k])) / T(sigma);
    return true;
  }
};

// Adapts a functor of (q, t, ...) to a 7-value pose block (q then t).
template <typename F>
struct OnPose7 {
  F f;
  template <typename T, typename... Rest>
  bool operator()(const T* pose, Rest... rest) const {
    return f(pose, pose + 4, rest...);
  }
};

// Same, for a functor of t alone (the translation prior on a 7-value pose).
template <typename F>
struct OnPose7Translation {
  F f;
  template <typename T>
  bool operator()(const T* pose, T* r) const {
    return f(pose + 4, r);
  }
};

template <int kResiduals, int... kBlockSizes, typename F>
ceres::CostFunction* autodiff(const F& functor) {
  return new ceres::AutoDiffCostFunction<F, kResiduals, kBlockSizes...>(new F(functor));
}

// A user-written manifold: R^n with Plus(x, delta) = x + scale delta, so that its PlusJacobian
// (scale I) is not the identity and tangent steps differ from ambient ones.
class ScaledEuclideanManifold final : public ceres::Manifold {
 public:
  ScaledEuclideanManifold(int size, double scale) : size_(size), scale_(scale) {}
  int AmbientSize() const override { return size_; }
  int TangentSize() const override { return size_; }
  bool Plus(const double* x, const double* delta, double* x_plus_delta) const override {
    for (int i = 0; i < size_; ++i) x_plus_delta[i] = x[i] + scale_ * delta[i];
    return true;
  }
  bool PlusJacobian(const double*, double* jacobian) const override {
    for (int i = 0; i < size_ * size_; ++i) jacobian[i] = i % (size_ + 1) == 0 ? scale_ : 0.0;
    return true;
  }
  bool Minus(const double* y, const double* x, double* y_minus_x) const override {
    for (int i = 0; i < size_; ++i) y_minus_x[i] = (y[i] - x[i]) / scale_;
    return true;
  }
  bool MinusJacobian(const double*, double* jacobian) const override {
    for (int i = 0; i < size_ * size_; ++i) jacobian[i] = i % (size_ + 1) == 0 ? 1.0 / scale_ : 0.0;
    return true;
  }

 private:
  int size_;
  double scale_;
};

// ---------------------------------------------------------------------------------------------
// Shapes.

enum class Rotation {
  Quaternion,                  // 4 values (w, x, y, z), ceres::QuaternionManifold; translation a 3-block
  EigenQuaternion,             // 4 values (x, y, z, w), ceres::EigenQuaternionManifold; translation a 3-block
  QuaternionParameterization,  // as Quaternion, with the deprecated ceres::QuaternionParameterization
  Pose7,                       // one block (q, t), ProductManifold<QuaternionManifold, EuclideanManifold<3>>
};
enum class PointKind { Euclidean, Homogeneous, HomogeneousDynamic, InverseDepth };
enum class Prior { None, Pose, Translation };
enum class Loss { None, Huber, Cauchy };

struct Shape {
  Rotation rotation = Rotation::Quaternion;
  PointKind point = PointKind::Euclidean;
  bool shared_intrinsics = false;    // one (f, k1, k2) block for all images
  bool fix_k2 = false;               // SubsetManifold(3, {2}) on the intrinsics
  bool scaled_translation = false;   // ScaledEuclideanManifold(3, 0.5) on the translations (not Pose7)
  Prior prior = Prior::None;         // on every pose, added before the reprojections
  int constant_poses = 0;            // the first n poses are constant
  int constant_point_stride = 0;     // every n-th point is constant (0: none)
  Loss loss = Loss::None;            // on the reprojection residuals
  bool mixed = false;                // 3-D measurements (size 3, shared sensor offset) and point priors
  // The reprojections as ceres_cuda::QuaternionSnavelyReprojectionError (the GPU evaluates them) where
  // the shape is Rotation::Quaternion (or its parameterization) with Euclidean points; otherwise the
  // AutoDiff functor.
  bool library_cost = false;
  std::uint32_t seed = 7;            // the prior centres and the 3-D measurement noise
  // The residual blocks added in reverse order: the same problem, whose sums Ceres forms in another
  // order (and whose blocks it numbers otherwise), to see how far rounding alone moves a solve.
  bool reverse_order = false;
};

// A problem and the storage of its parameter blocks (declared first, so that it outlives the problem).
struct GeneralProblem {
  std::deque<std::vector<double>> storage;  // a deque: the blocks' addresses stay put
  std::vector<double*> rotations, translations, poses, intrinsics, points;  // poses: Pose7 only
  std::vector<double*> e_blocks;  // what bundle-adjustment code puts in group 0: the points
  std::unique_ptr<ceres::Problem> problem = std::make_unique<ceres::Problem>();

  double* add_block(std::vector<double> values) {
    storage.push_back(std::move(values));
    return storage.back().data();
  }
  // All parameter values, for comparing two copies after a solve.
  std::vector<double> values() const {
    std::vector<double> all;
    for (const auto& block : storage) all.insert(all.end(), block.begin(), block.end());
    return all;
  }
};

namespace detail {

// A residual block to add; build() collects them first, so that it can add them in reverse order.
struct Residual {
  ceres::CostFunction* cost;
  ceres::LossFunction* loss;
  std::vector<double*> blocks;
};

template <int kPointSize>
void add_reprojections(GeneralProblem& g, const ceres_cuda::BALProblem& scene, const Shape& shape,
                       const std::vector<std::array<double, 6>>& rays, ceres::LossFunction* loss,
                       double* offset, std::mt19937& rng, std::vector<Residual>* out) {
  const bool pose7 = shape.rotation == Rotation::Pose7, eigen = shape.rotation == Rotation::EigenQuaternion;
  std::normal_distribution<double> gauss(0.0, 1.0);
  for (int i = 0; i < scene.num_observations(); ++i) {
    const int c = scene.camera_index()[i], j = scene.point_index()[i];
    Reprojection<kPointSize> f;
    f.u = scene.observations()[2 * i];
    f.v = scene.observations()[2 * i + 1];
    f.eigen_layout = eigen;
    if constexpr (kPointSize == 1)
      for (int k = 0; k < 3; ++k) f.origin[k] = rays[j][k], f.ray[k] = rays[j][3 + k];
    double* K = g.intrinsics[shape.shared_intrinsics ? 0 : c];
    bool library = false;
    if constexpr (kPointSize == 3) library = shape.library_cost && !pose7 && !eigen;
    if (library)
      out->push_back({ceres_cuda::QuaternionSnavelyReprojectionError::Create(f.u, f.v), loss,
                      {g.rotations[c], g.translations[c], K, g.points[j]}});
    else if (pose7)
      out->push_back({autodiff<2, 7, 3, kPointSize>(OnPose7<Reprojection<kPointSize>>{f}), loss,
                      {g.poses[c], K, g.points[j]}});
    else
      out->push_back({autodiff<2, 4, 3, 3, kPointSize>(f), loss, {g.rotations[c], g.translations[c], K, g.points[j]}});
    if (!offset || i % 3 != 0) continue;
    if constexpr (kPointSize == 3) {
      // A 2 % range sensor's reading of the current estimate, with that much noise.
      CameraFramePoint m;
      m.eigen_layout = eigen;
      const double* q = pose7 ? g.poses[c] : g.rotations[c];
      const double* t = pose7 ? g.poses[c] + 4 : g.translations[c];
      double P[3];
      rotate(q, eigen, g.points[j], P);
      const double range = std::sqrt(P[0] * P[0] + P[1] * P[1] + P[2] * P[2]) + 1e-3;
      for (int k = 0; k < 3; ++k) m.measured[k] = P[k] + t[k] + offset[k] + 0.02 * range * gauss(rng);
      m.weight = 1.0 / (0.02 * range);
      if (pose7)
        out->push_back(
            {autodiff<3, 7, 3, 3>(OnPose7<CameraFramePoint>{m}), nullptr, {g.poses[c], offset, g.points[j]}});
      else
        out->push_back({autodiff<3, 4, 3, 3, 3>(m), nullptr, {g.rotations[c], g.translations[c], offset, g.points[j]}});
    }
  }
}

}  // namespace detail

// Builds `shape` from a scene's cameras (angle-axis -> quaternion with ceres::AngleAxisToQuaternion),
// points and observations; scene is only read.
inline GeneralProblem build(const ceres_cuda::BALProblem& scene, const Shape& shape) {
  GeneralProblem g;
  std::mt19937 rng(shape.seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  const bool pose7 = shape.rotation == Rotation::Pose7, eigen = shape.rotation == Rotation::EigenQuaternion;
  const int num_cameras = scene.num_cameras(), num_points = scene.num_points();

  for (int c = 0; c < num_cameras; ++c) {
    const double* cam = scene.cameras().data() + 9 * c;
    double q[4];  // (w, x, y, z)
    ceres::AngleAxisToQuaternion(cam, q);
    if (pose7) {
      g.poses.push_back(g.add_block({q[0], q[1], q[2], q[3], cam[3], cam[4], cam[5]}));
    } else {
      g.rotations.push_back(g.add_block(eigen ? std::vector<double>{q[1], q[2], q[3], q[0]}
                                              : std::vector<double>{q[0], q[1], q[2], q[3]}));
      g.translations.push_back(g.add_block({cam[3], cam[4], cam[5]}));
    }
    if (!shape.shared_intrinsics || c == 0) g.intrinsics.push_back(g.add_block({cam[6], cam[7], cam[8]}));
  }

  // Points. Inverse depth: along the ray from the centre of the point's first camera through its
  // current estimate.
  std::vector<int> first_camera(num_points, -1);
  for (int i = 0; i < scene.num_observations(); ++i)
    if (first_camera[scene.point_index()[i]] < 0) first_camera[scene.point_index()[i]] = scene.camera_index()[i];
  std::vector<std::array<double, 6>> rays(num_points);
  for (int j = 0; j < num_points; ++j) {
    const double* X = scene.points().data() + 3 * j;
    switch (shape.point) {
      case PointKind::Euclidean: g.points.push_back(g.add_block({X[0], X[1], X[2]})); break;
      case PointKind::Homogeneous:
      case PointKind::HomogeneousDynamic: {
        const double n = std::sqrt(X[0] * X[0] + X[1] * X[1] + X[2] * X[2] + 1.0);
        g.points.push_back(g.add_block({X[0] / n, X[1] / n, X[2] / n, 1.0 / n}));
        break;
      }
      case PointKind::InverseDepth: {
        const double* cam = scene.cameras().data() + 9 * std::max(first_camera[j], 0);
        double minus_aa[3] = {-cam[0], -cam[1], -cam[2]}, Rt_t[3];
        ceres::AngleAxisRotatePoint(minus_aa, cam + 3, Rt_t);  // the centre is -R' t
        double d[3] = {X[0] + Rt_t[0], X[1] + Rt_t[1], X[2] + Rt_t[2]};
        const double depth = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        rays[j] = {-Rt_t[0], -Rt_t[1], -Rt_t[2], d[0] / depth, d[1] / depth, d[2] / depth};
        g.points.push_back(g.add_block({1.0 / depth}));
        break;
      }
    }
  }
  g.e_blocks = g.points;

  // Priors first: Ceres puts residuals without an e-block after the others, whatever the order.
  std::vector<detail::Residual> residuals;
  auto prior_centre = [&](int c, PosePrior* p) {
    double aa[3];
    for (int k = 0; k < 3; ++k) aa[k] = scene.cameras()[9 * c + k] + 0.01 * gauss(rng);
    ceres::AngleAxisToQuaternion(aa, p->q0.data());
    for (int k = 0; k < 3; ++k) p->t0[k] = scene.cameras()[9 * c + 3 + k] + 0.1 * gauss(rng);
  };
  for (int c = 0; c < num_cameras && shape.prior != Prior::None; ++c) {
    PosePrior p;
    p.eigen_layout = eigen;
    prior_centre(c, &p);
    if (shape.prior == Prior::Pose) {
      if (pose7) residuals.push_back({autodiff<6, 7>(OnPose7<PosePrior>{p}), nullptr, {g.poses[c]}});
      else residuals.push_back({autodiff<6, 4, 3>(p), nullptr, {g.rotations[c], g.translations[c]}});
    } else {
      const TranslationPrior t{p.t0, 1.0};
      if (pose7) residuals.push_back({autodiff<3, 7>(OnPose7Translation<TranslationPrior>{t}), nullptr, {g.poses[c]}});
      else residuals.push_back({autodiff<3, 3>(t), nullptr, {g.translations[c]}});
    }
  }

  ceres::LossFunction* loss = nullptr;  // one object for all reprojections: the problem owns it once
  if (shape.loss == Loss::Huber) loss = new ceres::HuberLoss(2.0);
  if (shape.loss == Loss::Cauchy) loss = new ceres::CauchyLoss(2.0);
  double* offset = shape.mixed && shape.point == PointKind::Euclidean ? g.add_block({0.01, -0.02, 0.03}) : nullptr;
  if (shape.point == PointKind::Euclidean)
    detail::add_reprojections<3>(g, scene, shape, rays, loss, offset, rng, &residuals);
  else if (shape.point == PointKind::InverseDepth)
    detail::add_reprojections<1>(g, scene, shape, rays, loss, offset, rng, &residuals);
  else
    detail::add_reprojections<4>(g, scene, shape, rays, loss, offset, rng, &residuals);
  if (offset)
    for (int j = 0; j < num_points; j += 10) {
      PointPrior p;
      for (int k = 0; k < 3; ++k) p.X0[k] = g.points[j][k] + 0.05 * gauss(rng);
      residuals.push_back({autodiff<3, 3>(p), nullptr, {g.points[j]}});
    }
  if (shape.reverse_order) std::reverse(residuals.begin(), residuals.end());
  for (const detail::Residual& r : residuals) g.problem->AddResidualBlock(r.cost, r.loss, r.blocks);

  // Manifolds, one object per kind (the problem owns it once, whatever the number of blocks).
  ceres::Problem& problem = *g.problem;
  if (pose7) {
    auto* se3 = new ceres::ProductManifold<ceres::QuaternionManifold, ceres::EuclideanManifold<3>>{};
    for (double* p : g.poses) problem.SetManifold(p, se3);
  } else if (shape.rotation == Rotation::QuaternionParameterization) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    auto* parameterization = new ceres::QuaternionParameterization;
    for (double* q : g.rotations) problem.SetParameterization(q, parameterization);
#pragma GCC diagnostic pop
  } else {
    ceres::Manifold* m = eigen ? static_cast<ceres::Manifold*>(new ceres::EigenQuaternionManifold)
                               : new ceres::QuaternionManifold;
    for (double* q : g.rotations) problem.SetManifold(q, m);
  }
  if (shape.scaled_translation && !pose7) {
    auto* m = new ScaledEuclideanManifold(3, 0.5);
    for (double* t : g.translations) problem.SetManifold(t, m);
  }
  if (shape.fix_k2) {
    auto* m = new ceres::SubsetManifold(3, {2});
    for (double* k : g.intrinsics) problem.SetManifold(k, m);
  }
  if (shape.point == PointKind::Homogeneous || shape.point == PointKind::HomogeneousDynamic) {
    ceres::Manifold* m = shape.point == PointKind::Homogeneous
                             ? static_cast<ceres::Manifold*>(new ceres::SphereManifold<4>)
                             : new ceres::SphereManifold<ceres::DYNAMIC>(4);
    for (double* x : g.points) problem.SetManifold(x, m);
  }

  for (int c = 0; c < std::min(shape.constant_poses, num_cameras); ++c) {
    if (pose7) {
      problem.SetParameterBlockConstant(g.poses[c]);
    } else {
      problem.SetParameterBlockConstant(g.rotations[c]);
      problem.SetParameterBlockConstant(g.translations[c]);
    }
  }
  for (int j = 0; shape.constant_point_stride > 0 && j < num_points; j += shape.constant_point_stride)
    problem.SetParameterBlockConstant(g.points[j]);
  return g;
}

// ---------------------------------------------------------------------------------------------
// Options.

// ba_test::ba_options (2 threads, silent); with `ordered`, an explicit linear_solver_ordering: g's
// e-blocks group 0, every other block group 1. The ordering names g's blocks, so each copy of a
// problem needs its own; without it Ceres picks the e-blocks (a maximal independent set).
inline ceres::Solver::Options options_for(const GeneralProblem& g, ceres::LinearSolverType type,
                                          ceres::PreconditionerType preconditioner, int iterations, bool ordered) {
  ceres::Solver::Options options = ba_test::ba_options(type, preconditioner, iterations);
  if (!ordered) return options;
  options.linear_solver_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  const std::unordered_set<const double*> e(g.e_blocks.begin(), g.e_blocks.end());
  std::vector<double*> blocks;
  g.problem->GetParameterBlocks(&blocks);
  for (double* block : blocks) options.linear_solver_ordering->AddElementToGroup(block, e.count(block) ? 0 : 1);
  return options;
}

// ---------------------------------------------------------------------------------------------
// Comparing two solves.

// How closely a solve must follow the reference, LM iteration by LM iteration. Rounding alone moves
// some solves: with 2 threads Ceres sums the Schur complement and its preconditioner in thread order,
// and on ill-conditioned real data (the split quaternion/translation/intrinsics blocks on Ladybug or
// Dubrovnik, 80-100 PCG iterations) two ceres::Solve runs of one problem already differ by a PCG
// iteration at the third LM step and by 1e-4 in cost after that. There only the first strict_steps
// are compared closely.
struct Match {
  int strict_steps = 1 << 30;  // LM iterations compared closely: cost within `cost`, equal PCG counts
  double cost = 1e-6;          // relative
  double drift = 1e-3;         // relative, for successful steps after strict_steps and the final cost
  int pcg_slack = 0;           // PCG iterations may differ by this much in the strict steps
};

// The Summary fields Ceres fills from the problem, and the iterations as Match says.
inline void expect_same_solve(const ceres::Solver::Summary& reference, const ceres::Solver::Summary& ours,
                              const Match& m) {
  EXPECT_EQ(ours.termination_type, reference.termination_type)
      << "ours: " << ours.message << "\nceres: " << reference.message;
  EXPECT_EQ(ours.num_parameter_blocks, reference.num_parameter_blocks);
  EXPECT_EQ(ours.num_parameters, reference.num_parameters);
  EXPECT_EQ(ours.num_effective_parameters, reference.num_effective_parameters);
  EXPECT_EQ(ours.num_residual_blocks, reference.num_residual_blocks);
  EXPECT_EQ(ours.num_residuals, reference.num_residuals);
  EXPECT_EQ(ours.num_parameter_blocks_reduced, reference.num_parameter_blocks_reduced);
  EXPECT_EQ(ours.num_parameters_reduced, reference.num_parameters_reduced);
  EXPECT_EQ(ours.num_effective_parameters_reduced, reference.num_effective_parameters_reduced);
  EXPECT_EQ(ours.num_residual_blocks_reduced, reference.num_residual_blocks_reduced);
  EXPECT_EQ(ours.num_residuals_reduced, reference.num_residuals_reduced);
  EXPECT_EQ(ours.linear_solver_type_used, reference.linear_solver_type_used);
  EXPECT_EQ(ours.preconditioner_type_used, reference.preconditioner_type_used);
  EXPECT_EQ(ours.linear_solver_ordering_used, reference.linear_solver_ordering_used);
  EXPECT_EQ(ours.schur_structure_used, reference.schur_structure_used);
  EXPECT_NEAR(ours.initial_cost, reference.initial_cost, 1e-12 * reference.initial_cost);
  EXPECT_NEAR(ours.fixed_cost, reference.fixed_cost, 1e-12 * reference.initial_cost);
  EXPECT_EQ(ours.iterations.size(), reference.iterations.size());
  bool all_strict = true;
  for (std::size_t k = 0; k < std::min(ours.iterations.size(), reference.iterations.size()); ++k) {
    const ceres::IterationSummary &r = reference.iterations[k], &o = ours.iterations[k];
    SCOPED_TRACE(testing::Message() << "LM iteration " << k);
    if (static_cast<int>(k) <= m.strict_steps) {
      EXPECT_EQ(o.step_is_successful, r.step_is_successful);
      EXPECT_NEAR(o.cost, r.cost, m.cost * r.cost);  // a step whose Plus failed costs DBL_MAX in both
      EXPECT_NEAR(o.linear_solver_iterations, r.linear_solver_iterations, m.pcg_slack);
    } else {
      // Past the strict steps the drift may tip a step whose cost change lands near the acceptance
      // threshold either way (two ceres::Solve runs did, at Huber Ladybug's ninth step on a 16-core host).
      all_strict = false;
      if (r.step_is_successful && o.step_is_successful) {
        EXPECT_NEAR(o.cost, r.cost, m.drift * r.cost);
      }
    }
  }
  EXPECT_NEAR(ours.final_cost, reference.final_cost, (all_strict ? m.cost : m.drift) * reference.final_cost);
}

}  // namespace general_test
