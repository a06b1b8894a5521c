#pragma once
// What the Schur analysis (schur_structure.h) reads of a problem: its residual blocks in program order
// (cost, loss, parameter blocks) and what each parameter block is. A ceres::Problem answers through
// its API (a look-up in its std::map per block question); a model that knows its own blocks, such as
// ColmapBundleAdjuster's, answers from its own arrays, and then no ceres::Problem need be built.
#include <ceres/cost_function.h>
#include <ceres/loss_function.h>
#include <ceres/manifold.h>
#include <ceres/problem.h>

#include <vector>

namespace ceres_cuda::detail {

class ProblemSource {
 public:
  struct BlockFacts {
    int size = 0;
    int tangent_size = 0;
    const ceres::Manifold* manifold = nullptr;  // null: Euclidean
    bool constant = false;
    bool bounded = false;  // some value has a bound (asked only of blocks that vary)
  };

  virtual ~ProblemSource() = default;
  virtual long num_residual_blocks() const = 0;
  // Residual block r's, in program order; all may be called from many threads at once.
  virtual const ceres::CostFunction* cost(long r) const = 0;
  virtual const ceres::LossFunction* loss(long r) const = 0;
  virtual void parameter_blocks(long r, std::vector<double*>* blocks) const = 0;
  // Every parameter block, used by a residual block or not; listed only when some is not.
  virtual long num_parameter_blocks() const = 0;
  virtual void all_parameter_blocks(std::vector<double*>* blocks) const = 0;
  virtual BlockFacts facts(double* block) const = 0;
};

// The source that reads a ceres::Problem (which must outlive it).
class CeresProblemSource final : public ProblemSource {
 public:
  explicit CeresProblemSource(const ceres::Problem& problem);
  long num_residual_blocks() const override { return static_cast<long>(ids_.size()); }
  const ceres::CostFunction* cost(long r) const override { return problem_.GetCostFunctionForResidualBlock(ids_[r]); }
  const ceres::LossFunction* loss(long r) const override { return problem_.GetLossFunctionForResidualBlock(ids_[r]); }
  void parameter_blocks(long r, std::vector<double*>* blocks) const override {
    problem_.GetParameterBlocksForResidualBlock(ids_[r], blocks);
  }
  long num_parameter_blocks() const override { return problem_.NumParameterBlocks(); }
  void all_parameter_blocks(std::vector<double*>* blocks) const override { problem_.GetParameterBlocks(blocks); }
  BlockFacts facts(double* block) const override;

 private:
  const ceres::Problem& problem_;
  std::vector<ceres::ResidualBlockId> ids_;
};

}  // namespace ceres_cuda::detail
