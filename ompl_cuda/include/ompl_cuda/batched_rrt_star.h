#pragma once
// BatchedRRTstar: RRT* that grows its tree by a batch of samples at a time (Bialkowski, Karaman and
// Frazzoli's batched RRT*), so that every candidate-parent edge of the whole batch, which RRT*'s
// rewiring reuses, is checked in one call of ChainMotionValidator::checkMotions: one GPU launch per
// batch. With any other motion validator it checks the same edges one by one (works, just slower).
//
// Asymptotically optimal for the path-length objective (k-nearest RRT*, k = rewire_factor * e (1 + 1/d)
// log n); honours the PlannerTerminationCondition between batches; fills PlannerData; usable from
// SimpleSetup and ompl::tools::Benchmark. Parameters: range, goal_bias, batch_size, rewire_factor,
// max_samples (0 = until the termination condition).
#include <atomic>
#include <limits>
#include <vector>

#include <ompl/base/Planner.h>
#include <ompl/datastructures/NearestNeighbors.h>
#include <ompl/util/RandomNumbers.h>

namespace ompl_cuda {

class BatchedRRTstar : public ompl::base::Planner {
 public:
  explicit BatchedRRTstar(const ompl::base::SpaceInformationPtr& si);
  ~BatchedRRTstar() override;

  ompl::base::PlannerStatus solve(const ompl::base::PlannerTerminationCondition& ptc) override;
  void clear() override;
  void setup() override;
  void getPlannerData(ompl::base::PlannerData& data) const override;

  void setRange(double range) { range_ = range; }
  double getRange() const { return range_; }
  void setGoalBias(double bias) { goal_bias_ = bias; }
  double getGoalBias() const { return goal_bias_; }
  void setBatchSize(unsigned int size) { batch_size_ = size > 0 ? size : 1; }
  unsigned int getBatchSize() const { return batch_size_; }
  void setRewireFactor(double factor) { rewire_factor_ = factor; }
  double getRewireFactor() const { return rewire_factor_; }
  // Stop after this many samples (0: only the termination condition stops the planner).
  void setMaxSamples(unsigned int samples) { max_samples_ = samples; }
  unsigned int getMaxSamples() const { return max_samples_; }
  unsigned int samplesDrawn() const { return samples_; }
  // Cost of the best solution so far (infinity without one); safe to read while solve() runs, as
  // Benchmark's progress thread does.
  double bestCost() const;

 private:
  struct Motion;
  void free_memory();
  void update_child_costs(Motion* m);
  std::vector<Motion*> tree_;
  std::shared_ptr<ompl::NearestNeighbors<Motion*>> nn_;
  ompl::base::StateSamplerPtr sampler_;
  ompl::base::OptimizationObjectivePtr objective_;
  Motion* best_goal_ = nullptr;
  std::atomic<double> best_cost_{std::numeric_limits<double>::infinity()};
  double range_ = 0.0;
  double goal_bias_ = 0.05;
  unsigned int batch_size_ = 64;
  double rewire_factor_ = 1.1;
  unsigned int max_samples_ = 0;
  unsigned int samples_ = 0;
  double k_rrt_ = 0.0;
  ompl::RNG rng_;
};

}  // namespace ompl_cuda
