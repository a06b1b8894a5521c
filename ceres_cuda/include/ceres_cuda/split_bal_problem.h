#pragma once
// A BAL problem in the shape SfM systems (COLMAP and most SLAM back-ends) give Ceres: per image a
// unit quaternion (w, x, y, z) on ceres::QuaternionManifold, a translation and the intrinsics
// (f, k1, k2), or one intrinsics block shared by all images; per point a 3-vector; each observation a
// residual block of four parameter blocks with a cost function of the Snavely model, the rotation by
// quaternion: an AutoDiff functor (a user's cost function, which ceres_cuda evaluates on CPU threads)
// or the library's QuaternionSnavelyReprojectionError (evaluated on the GPU). For examples and
// benchmarks of ceres_cuda::Solve's general path; the values live here, so that the object must
// outlive the problems it is added to.
#include <vector>

#include "ceres_cuda/bal_problem.h"

namespace ceres {
class LossFunction;
class Problem;
}  // namespace ceres

namespace ceres_cuda {

class SplitBALProblem {
 public:
  // shared_intrinsics: one (f, k1, k2) block, the first camera's, for all images.
  explicit SplitBALProblem(const BALProblem& bal, bool shared_intrinsics = false);

  enum class Cost { AutoDiff, Library };

  // One residual block per observation (the loss, owned by the problem, on each), and the manifolds.
  void add_to(ceres::Problem* problem, ceres::LossFunction* loss = nullptr, Cost cost = Cost::AutoDiff);
  // The current values in BAL's layout (angle-axis, translation, intrinsics per camera; the points),
  // into a BALProblem of the same cameras and points (e.g. the one this was made from, to write it).
  void copy_to(BALProblem* bal) const;

  int num_images() const { return static_cast<int>(rotations_.size() / 4); }
  int num_points() const { return static_cast<int>(points_.size() / 3); }
  double* rotation(int image) { return rotations_.data() + 4 * static_cast<std::size_t>(image); }
  double* translation(int image) { return translations_.data() + 3 * static_cast<std::size_t>(image); }
  double* intrinsics(int image) { return intrinsics_.data() + (shared_ ? 0 : 3 * static_cast<std::size_t>(image)); }
  double* point(int i) { return points_.data() + 3 * static_cast<std::size_t>(i); }

 private:
  bool shared_;
  std::vector<double> rotations_, translations_, intrinsics_, points_, observations_;
  std::vector<int> image_index_, point_index_;
};

}  // namespace ceres_cuda
