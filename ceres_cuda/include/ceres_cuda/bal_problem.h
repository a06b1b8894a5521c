#pragma once
// BALProblem: a "Bundle Adjustment in the Large" problem (Agarwal et al. 2010), the format of
// grail.cs.washington.edu/projects/bal and of Ceres' examples/bal_problem.h:
//   num_cameras num_points num_observations
//   camera_index point_index x y            (num_observations lines)
//   9 values per camera: angle-axis r[3], translation t[3], focal f, radial k1, k2
//   3 values per point
// Projection: P = R(r) X + t; p = -P.xy / P.z; pixel = f (1 + k1 |p|^2 + k2 |p|^4) p
// (SnavelyReprojectionError). Files may be plain text or bzip2-compressed (.bz2, detected by content).
#include <cstdint>
#include <string>
#include <vector>

namespace ceres {
class LossFunction;
class Problem;
}  // namespace ceres

namespace ceres_cuda {

class BALProblem {
 public:
  static constexpr int kCameraSize = 9;
  static constexpr int kPointSize = 3;

  BALProblem() = default;
  // Throws linalg_cuda::InvalidArgument (see validate()) on inconsistent input.
  BALProblem(int num_cameras, int num_points, std::vector<int> camera_index, std::vector<int> point_index,
             std::vector<double> observations, std::vector<double> cameras, std::vector<double> points);

  // Reads a .txt or .txt.bz2 file (or a pipe), in 1 MiB blocks: a read takes the problem and a few
  // MiB, not the text's size. Throws linalg_cuda::ParseError ("file:line: what") on a malformed or
  // truncated file, an index out of range or a non-finite number, and linalg_cuda::Error when the
  // file cannot be opened.
  static BALProblem read(const std::string& path);
  // Writes the BAL text format (full precision), readable by read() and by Ceres' BALProblem.
  void write(const std::string& path) const;
  // Writes cameras (green, their centres -R'(t)) and points (white) as an ASCII PLY point cloud, as
  // Ceres' bundle_adjuster does, for MeshLab or CloudCompare.
  void write_ply(const std::string& path) const;

  int num_cameras() const { return num_cameras_; }
  int num_points() const { return num_points_; }
  int num_observations() const { return static_cast<int>(camera_index_.size()); }
  const std::vector<int>& camera_index() const { return camera_index_; }
  const std::vector<int>& point_index() const { return point_index_; }
  const std::vector<double>& observations() const { return observations_; }  // x, y per observation
  const std::vector<double>& cameras() const { return cameras_; }            // 9 per camera
  const std::vector<double>& points() const { return points_; }              // 3 per point
  double* mutable_camera(int i) { return cameras_.data() + kCameraSize * static_cast<std::size_t>(i); }
  double* mutable_point(int i) { return points_.data() + kPointSize * static_cast<std::size_t>(i); }

  // The cost function of each residual: the library's SnavelyReprojectionError (evaluated on the GPU
  // by ceres_cuda::Solve) or an AutoDiffCostFunction of the same model as Ceres' bundle_adjuster
  // example writes it (a user's cost function, evaluated on CPU threads).
  enum class Cost { Library, AutoDiff };

  // Adds one residual block per observation to problem, with loss (may be null; one loss shared by all
  // blocks, owned as the Problem's options say). The parameter blocks are this object's camera and
  // point arrays: solving the problem updates them in place.
  void add_to(ceres::Problem* problem, ceres::LossFunction* loss = nullptr, Cost cost = Cost::Library);

  // Throws linalg_cuda::InvalidArgument naming the first problem: negative counts, array sizes that
  // do not match the counts, an index out of range, a non-finite value.
  void validate() const;

 private:
  int num_cameras_ = 0, num_points_ = 0;
  std::vector<int> camera_index_, point_index_;
  std::vector<double> observations_, cameras_, points_;
};

// A BAL-like problem of any size: cameras on a circular trajectory looking at a cloud of points,
// each point seen by several cameras, observations with Gaussian pixel noise plus a fraction of gross
// outliers, and perturbed initial cameras and points (so there is something to optimise).
struct SyntheticBalOptions {
  int num_cameras = 50;
  int num_points = 5000;
  int observations_per_point = 4;   // cameras that see each point (at most num_cameras)
  // When > 0, the total instead: spread over the points as evenly as it divides (each point seen by
  // num_observations / num_points cameras, the first num_observations % num_points points by one more),
  // to match a real problem's counts (Final-13682: 4,456,117 points, 28,987,644 observations).
  long long num_observations = 0;
  double pixel_noise = 0.5;         // standard deviation, pixels
  double outlier_fraction = 0.0;    // observations replaced by uniform garbage within the image
  double camera_perturbation = 0.01;  // relative noise on the initial camera parameters
  double point_perturbation = 0.05;   // absolute noise on the initial points (scene units)
  std::uint32_t seed = 1;
};
BALProblem make_synthetic_bal(const SyntheticBalOptions& options);

}  // namespace ceres_cuda
